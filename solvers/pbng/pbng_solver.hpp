#pragma once
// PBNG: position-based nonlinear Gauss-Seidel (Chen, Teran et al., "Position-based nonlinear
// Gauss-Seidel for quasistatic hyperelasticity", ACM TOG 2024; equation and section numbers of
// the TOG text).
//
// A sweep visits every node i with a free DOF, color by color (§10: nodes of one color share no
// stencil of any term, so a color runs in parallel with OpenMP; colors run one after another,
// Gauss-Seidel), and moves it by one modified Newton step on the step's energy E with every
// other node held (eq. 28-30):
//   x_i <- x_i + dx_i,  dx_i = -A_i^-1 g_i,
//   g_i = dE/dx_i, the yardstick's gradient row of node i (core/yardstick.hpp):
//         quasistatic     sum_terms dPE/dx_i - f_ext_i
//         backward Euler  m_i (x_i - x~_i) + dt^2 (sum_terms dPE/dx_i - f_ext_i)
//   A_i = the SPD approximate diagonal block, eq. 33-34: per element
//         V (2 mu |dN_i/dX|^2 I + lambda (cof F dN_i/dX)(cof F dN_i/dX)^T) (eq. 32), exact for
//         weak constraints and contacts (quadratic, eq. 34), each term's HessianKind::kApproximate;
//         backward Euler adds the inertia m_i I and scales the terms by dt^2 (the incremental
//         potential, §1 and §3).
// Every energy term of the step is visited (objective.terms(): elastic, cloth, weak
// constraints, this step's collision contacts) through a node -> (term, stencil, local) table
// built in setup() and rebuilt, with an incremental recoloring (§10.1, recolorNodes), when the
// step's contact stencils change. Colliders' penalty terms are not visited: colliders are
// kinematic constraints handled by projection (§7.2, below), as core/collider_term.hpp expects
// of a projecting solver.
//
// Acceleration (§7.3), applied to the whole iterate after each sweep (x^ = the sweep's result):
//   SOR        x^{l+1} = omega (x^^{l+1} - x^{l-1}) + x^{l-1}          (as the paper writes it,
//              with x^{l-1}: the two-step over-relaxation of Fratarcangeli et al. 2016)
//   Chebyshev  x^{l+1} = w_{l+1} (gamma (x^^{l+1} - x^l) + x^l - x^{l-1}) + x^{l-1},
//              w_{l+1} = 1 for l < 2, 2 / (2 - rho^2) for l = 2, 4 / (4 - rho^2 w_l) for l > 2.
// l counts the step's iterations from 0 (x^0 = the initial guess) and x^{-1} = x^0.
//
// Kinematic colliders (§7.2): at the start of the step every penetrating node (phi < 0) is put
// on its closest surface point. A node in contact (phi <= the collider's contact tolerance)
// whose step points into the collider (dx . n < 0) slides in the tangent plane; a node leaving
// the surface (dx . n > 0) leaves freely. After each node update (and after an acceleration) a
// node with phi < 0 is put on the closest surface point of the position it reached (curved
// shapes: a tangential step alone would enter them).
// The tangential step: the paper projects the node's step, dx <- (I - n n^T) dx. Its fixed
// point is where (I - n n^T) A^-1 g = 0, which is not where the tangential residual vanishes
// when A couples the normal and tangential directions (eq. 32's lambda c c^T does): measured on
// a block resting on the ground, the yardstick's projected residual stalls at 6e-2 of its
// start. The default ("contact_step": "tangent_newton") takes the Newton step of the same
// quadratic model restricted to the tangent plane, dx = -(P A P + n n^T)^-1 P g with
// P = I - n n^T, whose fixed point is P g = 0 (the yardstick's projected residual);
// "contact_step": "paper" keeps the paper's projection.
//
// Choices the paper leaves open (stated here, in docs/pbng.md and the report):
//  - Prescribed DOFs stay at this step's boundary values. A node with some prescribed
//    components (a partial Dirichlet condition, plane strain's pinned z) moves in its free
//    components only: the free rows and columns of A_i are solved (the prescribed ones are
//    replaced by the identity with a zero right-hand side). A collider's projection moves such a
//    node in its free components only.
//  - Initial guess: x~ with the boundary values (backward Euler; x^n for quasistatic), or x^n
//    with the boundary values ("initial_guess": "previous").
//  - A node whose block is not positive definite (a quasistatic node in no stencil) is not
//    moved.
//  - The fixed corotated P1 fast path carries one rotation per element across sweeps and
//    steps ("rotation": "warm_start", the default): at every visit of the element (4 a sweep)
//    R is updated by one Newton step from its previous value (warmStartedPolarStep,
//    core/materials/polar_svd.hpp; the SVD's polarRotation where that step reports failure)
//    and P = fixedCorotatedStress(F, R) (core/materials/fixed_corotated.hpp, the material's
//    own formula). The rotations are set by the SVD at the first step after the table was
//    built for a problem (and kept through contact rebuilds). R is within O(|dR|^3) of F's
//    polar rotation, dR its change since the element's previous visit, which vanishes as the
//    sweeps converge: the fixed point (the solution) is the SVD path's. Measured (tests
//    WarmStartedRotation*): the same iteration counts, residual histories within 7e-4
//    relative (twisted block) and 2.4e-7 (falling bar), solutions within 5e-13 of the
//    displacement. "rotation": "svd" takes the SVD at every visit (the same stress function
//    with polarRotation(F)). Nodes of one color share no element, so each rotation is
//    written by one thread in a color and the order of its updates does not depend on the
//    thread count: the sweep stays deterministic. nodeStep()/nodeSystem() (tests) take the
//    SVD's R and neither read nor write the rotations; only sweep() does.
//  - The P1 fast path evaluates a node's element visits in lanes (p1_visit.hpp: a packed
//    192-byte record per element, several elements per vector instruction, compiled for
//    AVX-512, AVX2 and the baseline and chosen by the CPU at load time), and the sweep
//    prefetches the records of the node two places ahead in its color. The lanes change
//    only the rounding of the sums (a visit's block is summed before it joins the node's,
//    and with AVX2 or AVX-512 the compiler may fuse multiply-adds): the results agree with
//    the definition to round-off (tests PbngNodeStep.*), not bit for bit across CPUs.
//  - Log column "colors": the number of node colors (iteration 0 only).
//  - The step stops with kRoundoff when no node moved by more than 1e-14 max(1, |x|_inf) in a
//    sweep before the target was met, and with kDiverged (the last finite iterate kept) when a
//    sweep produced a non-finite position.
#include <memory>
#include <vector>

#include "core/coloring.hpp"
#include "core/material.hpp"
#include "core/solver.hpp"
#include "solvers/pbng/p1_visit.hpp"

namespace pbdlab {

class ElasticEnergy;

struct PbngOptions {
  double omega = 1.0;            // SOR's omega (§7.3; 1: plain PBNG; the paper uses 1.7)
  double chebyshev_rho = 0.0;    // Chebyshev's rho (§7.3; 0: off; the paper uses 0.95)
  double chebyshev_gamma = 1.7;  // Chebyshev's gamma (§7.3; the paper's 1.7)
  enum class InitialGuess { kInertial, kPrevious } initial_guess = InitialGuess::kInertial;
  // A node in contact with a collider whose step points into it (§7.2): kTangentNewton, the
  // node's Newton step restricted to the tangent plane (default); kPaper, the paper's
  // tangential projection (I - n n^T) dx of the unconstrained step (stagnates, see above).
  enum class ContactStep { kTangentNewton, kPaper } contact_step = ContactStep::kTangentNewton;
  // The fixed corotated fast path's rotation (above): kWarmStart, one Newton step from the
  // element's previous rotation (SVD as the fallback; default); kSvd, the SVD at every visit.
  enum class Rotation { kWarmStart, kSvd } rotation = Rotation::kWarmStart;
  bool chebyshev() const { return chebyshev_rho > 0.0; }
};

class PbngSolver : public Solver {
 public:
  explicit PbngSolver(PbngOptions options = {}) : options_(options) {}
  std::string name() const override { return "pbng"; }
  std::vector<std::string> logColumns() const override { return {"colors"}; }
  // PBNG runs every scene the model can state; "" always (kept for the interface).
  std::string rejectionReason(const Problem& problem) const override;
  void setup(const Problem& problem) override;
  void advance(const StepObjective& objective, State& state, StepMonitor& monitor) override;

  const PbngOptions& options() const { return options_; }

  // --- the pieces of one step, public for tests and benchmarks ---
  // Starts a step: (re)builds the node table and coloring if the step's stencils changed,
  // sets x to the initial guess and projects penetrating nodes onto the colliders.
  void beginStep(const StepObjective& objective, Positions& x);
  // One Gauss-Seidel sweep over every movable node, color by color (after beginStep).
  // Returns the largest |dx_i|_inf of the sweep. Reads and updates the per-element rotations
  // (Rotation::kWarmStart), the only place that writes them besides their SVD start.
  double sweep(Positions& x);
  // The update dx_i of eq. 30 at x for node i (before any collider projection; zero in the
  // prescribed components). After beginStep. The definition: the corotated fast path takes
  // R = polarRotation(F) (SVD) and neither reads nor writes the per-element rotations.
  Vec3 nodeStep(int node, const Positions& x) const;
  // The node's gradient row g_i and SPD block A_i (eq. 29-34 with inertia), prescribed
  // components included as they are. After beginStep. R from the SVD, as nodeStep.
  void nodeSystem(int node, const Positions& x, Vec3& gradient, Mat3& block) const;
  // The per-element rotations of the fixed corotated fast path (empty when it is off), and
  // how many warm-started updates fell back to the SVD since setup().
  std::vector<Mat3> elementRotations() const;
  long long rotationFallbacks() const { return rotation_fallbacks_; }

  // The node coloring (every node of the problem; nodes of one color share no stencil of any
  // visited term) and the stencil sets it was built over.
  const Coloring& nodeColoring() const { return coloring_; }
  int numColors() const { return coloring_.numColors(); }
  std::vector<StencilSet> stencilSets() const;
  // How many times the node table was built (setup and stencil changes).
  int tableBuilds() const { return table_builds_; }

 private:
  struct Entry {
    int term;     // index in terms_
    int stencil;  // stencil of that term
    int local;    // the node's position in the stencil
  };
  // The terms a sweep visits: the objective's terms without colliders' penalties.
  static std::vector<std::shared_ptr<const EnergyTerm>> visitedTerms(
      const std::vector<std::shared_ptr<const EnergyTerm>>& terms);
  void buildTable(const Problem& problem, const std::vector<std::shared_ptr<const EnergyTerm>>& terms,
                  bool incremental);
  bool sameStencils(const std::vector<std::shared_ptr<const EnergyTerm>>& terms) const;
  // The node's system; warm = null: R from the SVD (the definition); otherwise warm is
  // fast_elements_.data(), whose rotations are read and updated in place (sweep() only),
  // counting SVD fallbacks.
  void nodeSystem(int node, const Positions& x, Vec3& gradient, Mat3& block, PbngP1Element* warm,
                  int& fallbacks) const;
  Vec3 nodeStep(int node, const Positions& x, PbngP1Element* warm, int& fallbacks) const;
  // Sets every fast-path element's rotation to polarRotation(F(x)) (SVD).
  void startRotations(const Positions& x);
  void updateNode(int node, Positions& x, double& largest, PbngP1Element* warm, int& fallbacks) const;
  void projectOntoColliders(int node, Positions& x) const;
  void projectAllOntoColliders(Positions& x) const;

  PbngOptions options_;
  const Problem* problem_ = nullptr;
  std::vector<std::shared_ptr<const EnergyTerm>> terms_;      // this step's visited terms
  std::vector<std::vector<int>> stencil_copies_;              // node lists of terms beyond the Problem's
  // CSR over nodes: the node's entries in every visited term but the fast path's.
  std::vector<int> entry_start_;
  std::vector<Entry> entries_;
  // The node's visits of the fast path's elements (4 e + local): fast_visits_[begin, begin +
  // count), laid out in sweep order.
  std::vector<int> fast_visit_begin_;
  std::vector<int> fast_visit_count_;
  std::vector<int> fast_visits_;
  Coloring coloring_;
  std::vector<std::vector<int>> sweep_groups_;  // per color: the nodes with a free DOF
  std::vector<unsigned char> fixed_mask_;       // per node: bit d = DOF d prescribed
  const ElasticEnergy* fast_elastic_ = nullptr;  // the tet4 isotropic fast path's term, or null
  int fast_term_ = -1;
  std::vector<PbngP1Element> fast_elements_;    // per element of the fast term
  std::vector<PbngP1Material> fast_materials_;  // the distinct materials of the fast term
  // Rotation::kWarmStart with a fixed corotated element in the fast term; rotations_ready_:
  // the rotations were set by the SVD for this table (false after a table build for another
  // problem or elastic term).
  bool warm_rotations_ = false;
  bool rotations_ready_ = false;
  long long rotation_fallbacks_ = 0;
  int table_builds_ = 0;
  // The step's constants.
  bool dynamic_ = false;
  double dt2_ = 1.0;
  double time_ = 0.0;
  const Positions* x_tilde_ = nullptr;
  const VecX* f_ext_ = nullptr;  // the step's f_ext (StepObjective::externalForce)
};

}  // namespace pbdlab
