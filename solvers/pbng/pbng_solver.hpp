#pragma once
// PBNG: position-based nonlinear Gauss-Seidel (Chen, Teran et al., "Position-based nonlinear
// Gauss-Seidel for quasistatic hyperelasticity", ACM TOG 2024; equation and section numbers of
// the TOG text). docs/pbng.md holds the derivations, the measurements behind each choice
// below, and the paper's experiments.
//
// A sweep visits every node i with a free DOF, color by color (§10: nodes of one color share no
// stencil of any term, so a color runs in parallel with OpenMP; colors run one after another),
// and moves it by one modified Newton step on the step's energy E, other nodes held (eq. 28-30):
//   x_i <- x_i + dx_i,  dx_i = -A_i^-1 g_i,
//   g_i = dE/dx_i, the yardstick's gradient row of node i (core/solver/yardstick.hpp):
//         quasistatic     sum_terms dPE/dx_i - f_ext_i
//         backward Euler  m_i (x_i - x~_i) + dt^2 (sum_terms dPE/dx_i - f_ext_i)
//   A_i = the SPD approximate diagonal block, eq. 32-34 (each term's HessianKind::kApproximate,
//         with the Lamé parameters of (E, nu); option tangent_parameters);
//         backward Euler adds m_i I and scales the terms by dt^2.
// Every energy term of the step is visited (elastic, cloth, weak constraints, this step's
// contacts) through a node -> (term, stencil, local) table, rebuilt with an incremental
// recoloring (§10.1) when the contact stencils change. Colliders are handled by projection
// (§7.2), not through their penalty terms.
//
// Acceleration after each sweep (§7.3; x^ = the sweep's result, l counts iterations from 0,
// x^{-1} = x^0):
//   SOR        x^{l+1} = omega (x^^{l+1} - x^{l-1}) + x^{l-1}
//   Chebyshev  x^{l+1} = w_{l+1} (gamma (x^^{l+1} - x^l) + x^l - x^{l-1}) + x^{l-1},
//              w_{l+1} = 1 for l < 2, 2 / (2 - rho^2) for l = 2, 4 / (4 - rho^2 w_l) for l > 2.
//   SOR, omega estimated ("omega": "auto"): the step's first sweeps are plain (probes); the
//              rate mu = (d_k / d_{k-3})^(1/3) of their last update norms d_l = |x^l - x^{l-1}|
//              gives omega = 2 / (1 + sqrt(1 - mu^2)), the best omega of this two-step form for
//              a base iteration of rate mu (linear theory; issue 28: about 1.34 for the falling
//              block, 1.68 for the stretch-twist). The probes run until 1 - mu changes by less
//              than 5% over 4 sweeps (at least kOmegaProbeSweeps, at most kOmegaMaxProbeSweeps:
//              a nonlinear step's rate slows over its first tens of sweeps), then the estimate
//              is used from the next iteration on.
//
// Choices (docs/pbng.md, "Kinematic colliders" and "Choices the paper leaves open"):
//  - Colliders: penetrating nodes are put on the surface at the start of the step and after
//    each update; a node in contact whose step points inward slides. The tangential step is, by
//    default ("contact_step": "tangent_newton"), dx = -(P A P + n n^T)^-1 P g with
//    P = I - n n^T, whose fixed point is the yardstick's P g = 0; "paper" keeps the paper's
//    projected step (I - n n^T) dx, which stalls.
//  - Prescribed DOFs stay at the step's boundary values; a partly prescribed node moves in its
//    free components (the free rows and columns of A_i are solved).
//  - Initial guess: x~ (backward Euler) or x^n (quasistatic) with the boundary values, or x^n
//    ("initial_guess": "previous"), or PBD's prediction x~ + dt^2 M^-1 f_ext ("pbd_prediction":
//    every node falls freely until the sweeps pull it back; docs/pbng.md, "Fig. 19"). A node whose block is not positive definite is not moved.
//  - Fixed corotated on the P1 fast path keeps one rotation per element, updated at each visit
//    by one Newton step from its previous value ("rotation": "warm_start", SVD fallback;
//    docs/pbng.md, "The corotated rotation"); "svd" takes the SVD at every visit. Each rotation
//    is written by one thread in a color, so sweeps stay deterministic. nodeStep()/nodeSystem()
//    (tests) take the SVD's R and leave the rotations alone.
//  - The P1 fast path sums a node's element visits in vector lanes (p1_visit.hpp): results agree
//    with the definition to round-off, not bit for bit across CPUs. With VBD's exact blocks
//    (node_block "projected_terms" / "projected_sum") it evaluates them in closed form when every
//    element's material has a closed-form stress.
//  - Stops: kRoundoff when no node moved more than 1e-14 max(1, |x|_inf) in a sweep before the
//    target was met; kDiverged (last finite iterate kept) on a non-finite position.
//  - Log columns "colors": the number of node colors (iteration 0 only); "omega": SOR's omega
//    of the iteration (with "auto": 1 during the probe sweeps, then the estimate).
#include <memory>
#include <vector>

#include "core/materials/material.hpp"
#include "core/solver/solver.hpp"
#include "core/topology/coloring.hpp"
#include "solvers/pbng/p1_visit.hpp"

namespace pbdlab {

class ElasticEnergy;

struct PbngOptions {
  double omega = 1.0;            // SOR's omega (§7.3; 1: plain PBNG; the paper uses 1.7)
  // SOR with omega estimated each step from the plain sweeps' rate (below; "omega": "auto").
  bool omega_auto = false;
  double chebyshev_rho = 0.0;    // Chebyshev's rho (§7.3; 0: off; the paper uses 0.95)
  double chebyshev_gamma = 1.7;  // Chebyshev's gamma (§7.3; the paper's 1.7)
  // kPbdPrediction: x~ + dt^2 M^-1 f_ext, PBD/XPBD's predicted positions (backward Euler;
  // quasistatic: x^n, as kInertial).
  // kAdaptive (VBD's, backward Euler): x^n + dt v^n + dt^2 a~ with a~ the last step's
  // acceleration (v^n - v^{n-1}) / dt projected on the gravity's direction and clamped to
  // [0, |g|] (the gravity itself at the first step); quasistatic: x^n.
  enum class InitialGuess { kInertial, kPrevious, kPbdPrediction, kAdaptive } initial_guess = InitialGuess::kInertial;
  // The node block A_i: kApproximate, eq. 32-34 (PBNG); kProjectedTerms, the exact 3x3 node
  // block of each term with its negative eigenvalues clamped at 0, summed (VBD); kProjectedSum,
  // the terms' exact node blocks summed, then clamped once.
  enum class NodeBlock { kApproximate, kProjectedTerms, kProjectedSum } node_block = NodeBlock::kApproximate;
  // VBD's damping k_d (s; backward Euler): a node's row gains (k_d / dt) H_i (x_i - x_i^n) and
  // its block (k_d / dt) H_i, H_i the node's block of the potential (before the inertia), both
  // scaled by dt^2 as the rest of the row. It changes the equations: the true residual of the
  // undamped step no longer vanishes at its fixed point. 0: off.
  double damping = 0.0;
  // A node in contact with a collider whose step points into it (§7.2): kTangentNewton, the
  // node's Newton step restricted to the tangent plane (default); kPaper, the paper's
  // tangential projection (I - n n^T) dx of the unconstrained step (stagnates, see above).
  enum class ContactStep { kTangentNewton, kPaper } contact_step = ContactStep::kTangentNewton;
  // The fixed corotated fast path's rotation (above): kWarmStart, one Newton step from the
  // element's previous rotation (SVD as the fallback; default); kSvd, the SVD at every visit.
  enum class Rotation { kWarmStart, kSvd } rotation = Rotation::kWarmStart;
  // Eq. 32's mu and lambda: kYoungsPoisson, the Lamé parameters of (E, nu) as the paper writes
  // them (default); kModel, each model's own (lambda_hat = mu + lambda for neo_hookean, Smith's
  // 4/3 mu and lambda + 5/6 mu for stable_neo_hookean; the same for the other models).
  TangentParameters tangent_parameters = TangentParameters::kYoungsPoisson;
  // The P1 lane kernel (p1_visit.hpp) for the elastic term's P1 tetrahedra where it applies
  // (PBNG's eq. 32: materials with the default approximate tangent; VBD's exact blocks:
  // materials with a closed-form stress, closed_form_stress.hpp); false: every element through
  // addNodeBlock, the definition (tests compare the two). Not a scene option.
  bool p1_lanes = true;
  bool chebyshev() const { return chebyshev_rho > 0.0; }
  bool sor() const { return omega_auto || omega != 1.0; }
};

class PbngSolver : public Solver {
 public:
  explicit PbngSolver(PbngOptions options = {}) : options_(options) {}
  std::string name() const override { return "pbng"; }
  std::vector<std::string> logColumns() const override { return {"colors", "omega"}; }
  // The plain sweeps of a step that estimate omega ("omega": "auto", above), and the estimate
  // from their update norms (d[0] = |x^1 - x^0|, ...): 2 / (1 + sqrt(1 - mu^2)), mu from the
  // last three ratios, clamped to [0, 0.9999]; 1 when the norms do not decrease or are not finite.
  static constexpr int kOmegaProbeSweeps = 8;
  static constexpr int kOmegaMaxProbeSweeps = 64;
  static double estimatedOmega(const std::vector<double>& update_norms);
  // The rate mu of the last three ratios (0 when it cannot be measured), as estimatedOmega.
  static double estimatedRate(const std::vector<double>& update_norms);
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
  // The same over `groups` only (per color, nodes of one color; sweepGroups() below).
  double sweep(Positions& x, const std::vector<std::vector<int>>& groups);
  // The sweep's groups (per color, the nodes with a free DOF) restricted to the nodes with
  // include[node] != 0, colors without such nodes left out. After beginStep (a new table,
  // after new contacts, regroups).
  std::vector<std::vector<int>> sweepGroups(const std::vector<char>& include) const;

  // A scaled objective without a rebuilt problem (MPBNG's kappa, solvers/pbng/mpbng_solver.hpp):
  // node i's mass m_i -> node[i] m_i in the inertia (and its external force f_ext_i ->
  // node[i] f_ext_i when `force`), and every contribution of visited term k (the step's terms
  // without colliders, in order) times term[k]. Empty vectors: 1. The fast path's term is not
  // scaled (std::invalid_argument). Kept until the next setScaling; setup() clears it.
  // `added_force` (all DOFs; empty: none) is added to f_ext unscaled (MPBNG's share of the
  // user's loads on each level).
  struct Scaling {
    std::vector<double> node;
    bool force = true;
    std::vector<double> term;
    VecX added_force;
  };
  void setScaling(Scaling scaling);
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
  // How many elements the P1 lane kernel serves (0: none, every element through addNodeBlock).
  int numLaneElements() const { return fast_elastic_ ? static_cast<int>(fast_elements_.size()) : 0; }

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
  void nodeSystem(int node, const Positions& x, Vec3& gradient, Mat3& block, P1ElementRecord* warm,
                  int& fallbacks) const;
  Vec3 nodeStep(int node, const Positions& x, P1ElementRecord* warm, int& fallbacks) const;
  // Sets every fast-path element's rotation to polarRotation(F(x)) (SVD).
  void startRotations(const Positions& x);
  // InitialGuess::kAdaptive: adds dt^2 a~ to x = x~ (PbngOptions::initial_guess).
  void addAdaptiveAcceleration(const StepObjective& objective, Positions& x);
  void updateNode(int node, Positions& x, double& largest, P1ElementRecord* warm, int& fallbacks) const;
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
  std::vector<P1ElementRecord> fast_elements_;    // per element of the fast term
  std::vector<PbngP1Material> fast_materials_;  // the distinct materials of the fast term
  // Rotation::kWarmStart with a fixed corotated element in the fast term; rotations_ready_:
  // the rotations were set by the SVD for this table (false after a table build for another
  // problem or elastic term).
  bool warm_rotations_ = false;
  bool rotations_ready_ = false;
  long long rotation_fallbacks_ = 0;
  int table_builds_ = 0;
  Scaling scaling_;
  // The step's constants.
  bool dynamic_ = false;
  double dt_ = 1.0, dt2_ = 1.0;
  double time_ = 0.0;
  const Positions* x_tilde_ = nullptr;
  const Positions* x_previous_ = nullptr;  // x^n (damping)
  const VecX* f_ext_ = nullptr;  // the step's f_ext (StepObjective::externalForce)
  // InitialGuess::kAdaptive: the velocities v^n the last step started from, and its index.
  VecX last_velocities_;
  int last_step_ = -2;
};

}  // namespace pbdlab
