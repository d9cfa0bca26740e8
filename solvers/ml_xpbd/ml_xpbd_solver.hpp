#pragma once
// Multi-layer XPBD (Mercier-Aubin & Kry 2024; docs/multi-layer-xpbd.md), solver "ml_xpbd".
// Backward Euler only. The elastic constraints are Voigt StVK (voigt_stvk_constraint.hpp,
// eq. 5-8), swept Gauss-Seidel over the element colors (elements of one color share no node:
// OpenMP over the elements of a color; results do not depend on the thread count).
//
// The step is Algorithm 2 (solvers/ml_xpbd/layered_step.cpp): x^{t+1} := x^t, residual
// velocities v := xdot^t + h M^-1 f_ext, the layers of `layers` (rigid percentages, coarse ->
// fine, the last 0) by the chosen ordering and Algorithm 1 (layers.hpp); per layer, release
// the elastic vertices (x += h v, v = 0), build and step its rigid bodies (rigid_body.hpp,
// eq. 21-27), then its iterations: a sweep over the layer's elastic elements, the coupling
// (eq. 13-19, a Jacobi pass per body), the body vertices placed at R r_i + x_r; then Alg. 2
// line 21. With layers [0] this is plain XPBD, bit for bit the elastic-only solver it was:
// x~ = x^n + h v^n + h^2 M^-1 f_ext, lambda = 0, sweeps.
// Nodes with a Dirichlet condition (and plane strain's pinned z) have inverse mass 0; elements
// touching a Dirichlet node are never rigid. Kinematic colliders are penalty contacts (eq. 28,
// contacts.hpp) of compliance 1 / stiffness, the energy Newton minimizes for them.
//
// Log columns (every recorded iteration; one iteration counts across layers): secondary_residual
// |C + alpha~ lambda| over every element component, rigid ones included (eq. 30),
// secondary_residual_matlab | |C| - min(|C|, |alpha~ lambda|) | (the authors' code's variant),
// layer (1-based, current), rigid_bodies (in the current layer); on iteration 0: colors and
// layer_build_seconds (ordering and union-find of the step, on the solver's clock).
#include <cstdint>
#include <string>
#include <vector>

#include "core/solver/solver.hpp"
#include "core/solver/yardstick.hpp"
#include "solvers/ml_xpbd/contacts.hpp"
#include "solvers/ml_xpbd/layers.hpp"
#include "solvers/ml_xpbd/rigid_body.hpp"
#include "solvers/ml_xpbd/voigt_stvk_constraint.hpp"

namespace pbdlab {

// kStretch: descending largest eigenvalue of M_e^-1/2 K_e M_e^-1/2 at x^t, our reading of the
// paper's "stretch-based" ordering (§4.1; see ml_xpbd::elementStretchEigenvalue).
enum class MlXpbdOrdering { kStrainRate, kRandom, kVerticalStripes, kHorizontalStripes, kStretch };

namespace ml_xpbd {
// The stretch ordering's measure (ours, not the authors' vertex-indexed global eigenvalues;
// layers.hpp orderByStretch): for element e of `energy` (tri3 plane strain or tet4) at x, the
// largest eigenvalue of M_e^-1/2 K_e M_e^-1/2, K_e the element's true Hessian
// (ElasticEnergy::elementTerms, HessianKind::kTrue) restricted to its in-plane DOFs (x, y of
// its 3 nodes) in plane strain, all 12 DOFs for tet4; M_e the lumped masses of its nodes
// (`node_masses`, one per node), used also for a node with a prescribed DOF (such an element
// is never rigid anyway). Throws std::invalid_argument for another element type.
double elementStretchEigenvalue(const ElasticEnergy& energy, int e, const Positions& x, const VecX& node_masses);
// Every element's (OpenMP over the elements; the same values for any thread count).
std::vector<double> elementStretchEigenvalues(const ElasticEnergy& energy, const Positions& x,
                                              const VecX& node_masses);
}  // namespace ml_xpbd

struct MlXpbdOptions {
  std::vector<double> layers = {0.0};     // rigid percentage per layer, coarse -> fine, last 0
  // Alg. 2's n_l, one per layer; required with more than one layer. Empty (one layer only):
  // the layer runs until the Budget ends the step.
  std::vector<int> iterations_per_layer;
  MlXpbdOrdering ordering = MlXpbdOrdering::kStrainRate;
  std::uint32_t seed = 0;  // kRandom: the order of step k comes from seed + k
  ml_xpbd::MassSplitting mass_splitting = ml_xpbd::MassSplitting::kTonge;
  // §3.6: once the secondary residual has decreased, a layer other than the last ends when
  // r_k - r_{k-1} > -kLayerStopTolerance r_1 (r_1: its first iteration's).
  bool layer_stop = false;
  // The frame stop of Figs. 9-10 and Table 1 (spec §7), 0 = off: with P in (0, 1) the step ends
  // once the secondary residual is at most (1 - P) r_1^XPBD, r_1^XPBD = plain XPBD's residual
  // after its first sweep from this step's x~ (computed off the solver's clock, as the authors'
  // simulate.m hands integrator 1's target to the others), in the last layer or once the
  // pending residual velocities are small: |v| < h^2, the norm of the whole vector (as the
  // authors' norm(residualv)). The step is logged as solver_target. The last layer then runs
  // past its count until the target or the Budget (the authors' hang stop).
  double frame_stop_reduction = 0.0;
  // Eq. 29's restitution eps in [0, 1] at the contacts (contacts.hpp); negative: off (default).
  double restitution = -1.0;
  // Evaluate the secondary residuals at the recorded iterations (a pass as costly as a sweep,
  // off the solver's clock); false leaves those columns empty.
  bool log_residuals = true;
  // For tests: keep the positions at the end of every layer (layerEndPositions()).
  bool keep_layer_end_positions = false;
};

inline constexpr double kLayerStopTolerance = 1e-8;

class MlXpbdSolver : public Solver {
 public:
  // Throws std::invalid_argument for layers that are not strictly decreasing in [0, 100] with
  // the last 0, an iterations_per_layer of another length than layers or with a count < 1, or
  // none with several layers.
  explicit MlXpbdSolver(MlXpbdOptions options = {});
  std::string name() const override { return "ml_xpbd"; }
  std::vector<std::string> logColumns() const override;
  std::string rejectionReason(const Problem& problem) const override;
  // Throws std::invalid_argument with rejectionReason's message.
  void setup(const Problem& problem) override;
  // Algorithm 2 (layered_step.cpp).
  void advance(const StepObjective& objective, State& state, StepMonitor& monitor) override;
  // Eq. 29 at the step's contacts when `restitution` is on.
  void finishVelocities(const StepObjective& objective, VecX& v) override;
  // With keep_layer_end_positions: x at the end of each layer of the last step, in layer order.
  const std::vector<Positions>& layerEndPositions() const { return layer_end_positions_; }

  const MlXpbdOptions& options() const { return options_; }
  int dimension() const { return dimension_; }
  int numElementColors() const { return static_cast<int>(color_start_.size()) - 1; }
  // The number of elements of each color, in color order.
  std::vector<int> colorSizes() const;

  // One Gauss-Seidel sweep over every element at x (inv_h2 = 1/h^2 scales the compliances):
  // plain XPBD's iteration.
  void sweep(Positions& x, double inv_h2) { sweepElastic(x, inv_h2, nullptr); }
  // The same skipping the slots flagged in `rigid_slot` (null: none); skipped elements keep
  // their multipliers.
  void sweepElastic(Positions& x, double inv_h2, const char* rigid_slot);
  void resetMultipliers() { std::fill(lambda_.begin(), lambda_.end(), 0.0); }
  // The paper's |C + alpha~ lambda| (eq. 30) and the MATLAB variant at x.
  void secondaryResiduals(const Positions& x, double inv_h2, double& paper, double& matlab);

 private:
  // The rest data of one element, stored in color order ("slots").
  template <int D>
  struct Slot {
    int nodes[VoigtDims<D>::kNodes];
    VoigtShapeGradients<D> shape_gradients;
    VoigtCompliance<D> compliance;
    double inverse_mass[3 * VoigtDims<D>::kNodes];  // per DOF, 0 if prescribed
  };
  template <int D>
  using Slots = std::vector<Slot<D>, Eigen::aligned_allocator<Slot<D>>>;

  template <int D>
  void buildSlots(const ElasticEnergy& energy, const std::vector<int>& element_of_slot, const VecX& inverse_mass,
                  Slots<D>& slots);
  template <int D>
  void sweepSlots(const Slots<D>& slots, Positions& x, double inv_h2, const char* rigid_slot);
  template <int D>
  void greenStrainsOfSlots(const Slots<D>& slots, const Positions& x, std::vector<Mat3>& strains) const;
  // Green strain per element (element order) at x.
  void greenStrains(const Positions& x, std::vector<Mat3>& strains) const;
  // The element order and layers of this step (Alg. 1), timed.
  ml_xpbd::LayerHierarchy buildStepLayers(const StepObjective& objective, double& seconds);
  // Alg. 2 lines 5-8: every vertex with a pending residual velocity whose node is not in a
  // body of the layer (all of them with `everyone`) steps by h v; a vertex never rigid this
  // step goes to x~ exactly as plain XPBD computes it.
  void releaseVertices(const StepObjective& objective, Positions& x, bool everyone);
  template <int D>
  void residualsOfSlots(const Slots<D>& slots, const Positions& x, double inv_h2);
  // r_1^XPBD of the frame stop: the secondary residual after one plain sweep from x~ (the
  // multipliers are reset before and after).
  double firstPlainXpbdResidual(const StepObjective& objective, double inv_h2);
  // |v| over the residual velocities not yet applied (the Euclidean norm of the whole vector,
  // as the authors' code's norm(residualv)).
  double pendingVelocityNorm() const;

  MlXpbdOptions options_;
  const Problem* problem_ = nullptr;
  int dimension_ = 3;
  std::vector<int> color_start_;  // color c: slots [color_start_[c], color_start_[c + 1])
  Slots<2> slots2_;               // tri3 plane strain
  Slots<3> slots3_;               // tet4
  std::vector<double> lambda_;    // D(D+1)/2 per slot
  std::vector<double> paper_squared_, matlab_squared_;  // per slot: the residuals' squares

  // Layers (Alg. 1-2).
  std::vector<int> element_of_slot_, slot_of_element_;
  std::vector<char> forced_elastic_;    // per element: touches a Dirichlet node
  std::vector<Vec3> rest_centroids_;    // per element, for the stripe orderings
  Positions x_tilde_;                   // plain XPBD's x~ of the step
  Positions residual_velocity_;         // Alg. 2's v
  Positions x_before_rigid_step_;       // x before the bodies' step (eq. 27)
  std::vector<char> pending_;           // per node: its residual velocity is not yet applied
  std::vector<char> never_rigid_;       // per node: in no body so far in this step
  std::vector<int> node_body_;          // per node: its body in the current layer, or -1
  std::vector<char> rigid_slot_;        // per slot: rigid in the current layer
  std::vector<ml_xpbd::RigidBody> bodies_;
  std::vector<Mat3> strains_now_, strains_previous_;  // Green strains at x^t and x^{t-1}
  int strains_step_ = -2;                             // the step whose x^t strains_now_ holds
  Positions x_previous_step_;           // x^{t-1} for the strain rates (eq. 20)
  int previous_step_ = -2;              // the step index x_previous_step_ started
  std::vector<Positions> layer_end_positions_;

  // Contacts with the kinematic colliders (contacts.hpp), found at the step's start.
  std::vector<ml_xpbd::VertexContact> contacts_;
  VecX contact_inverse_mass_;  // per node: 1 / m for a node free to move along every normal, else 0
  // Per body of the current layer: its vertices' contacts (multipliers copied back after the layer).
  std::vector<std::vector<ml_xpbd::BodyContact>> body_contacts_;
  std::vector<std::vector<int>> body_contact_index_;  // the contacts_ index of each body contact
  // Eq. 5 for the contacts of the vertices in no body of the current layer.
  void projectElasticContacts(Positions& x, double inv_h2);
  // Builds body_contacts_ for the current layer's bodies (node_body_ set), and copies their
  // multipliers back into contacts_ (at the layer's end).
  void gatherBodyContacts(double inv_h2);
  void returnBodyContacts();
};

}  // namespace pbdlab
