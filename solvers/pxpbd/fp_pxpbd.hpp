#pragma once
// FP-PXPBD: First-Piola Primal XPBD (Chen et al., "Primal residual reduction in XPBD",
// PXPBD paper §3.3.3-3.3.5, eq. 24-52, Algorithm 2), for backward Euler on P1 tetrahedra.
//
// The first Piola stress P^e of each element is the auxiliary unknown (eq. 24-25). A sweep
// visits the elements color by color (greedy element coloring, §4; elements of one color
// share no node, so a color runs in parallel). For element e, the stresses of every other
// element are held fixed and eq. 29,
//   g^e(x^e) = M^e (x^e - x~^e) + dt^2 B^e P(F^e(x^e)) - f^e = 0,
//   f^e_i = dt^2 (f_ext_i - sum_{e' != e} B^e'_i P^e'),
// is solved by a few Newton iterations in the affine basis dx_i = dF (X_i - X_com) + b
// (eq. 32): the translation b from eq. 33, the distortion dF from the 9x9 system eq. 34 with
// the Hessian approximation eq. 48 (fixed corotated) or eq. 52 (Neo-Hookean) and the
// Sherman-Morrison inverse eq. 49 (corrected, see distortional_step.hpp), or a dense 9x9
// solve with the SPD-projected dP/dF for any other model (the muscle) or on request. Then
// P^e = P(F^e(x^e)) (Algorithm 2 step 6).
//
// Choices the paper leaves open (measurements in docs/pxpbd.md):
//  - M^e holds the full lumped nodal masses m_i (eq. 29: the element's rows of the global
//    system), and X_com is the mass-weighted rest centroid of those masses (eq. 33).
//  - Initial guess: stresses P0 (zero by default, as XPBD's lambda_0 = 0, or the previous
//    step's P(F^e(x^n))), and x0 from eq. 24 with a zero primal residual, x0 = x~ + dt^2 M^-1
//    (f_ext - B P0) (§3.3.3: "plugging the current guess for the element stresses P_k into
//    Equation (24) to define the current guess for x_k"). The local residual of eq. 29 is then
//    dt^2 B^e h^e, whose nodal sum is zero: eq. 33 moves an element only by what its own
//    inexact solves and its neighbours' leave in g.
//  - Dirichlet DOFs (which the paper removes from eq. 9 "for concise exposition"): an element
//    with a prescribed DOF is solved by the same Newton step written in its 12 nodal DOFs
//    (M^e + dt^2 V B^T D B, D the same tangent approximation) with the prescribed rows
//    removed: the affine basis is a change of variables of those 12 DOFs (eq. 37-45,
//    D^T B = V I), so this is eq. 31 restricted to the free DOFs.
//  - One local iteration can diverge on stiff materials: measured, it converges at
//    dt^2 E / (rho h^2) = 18 and turns NaN at 178 (docs/pxpbd.md). The divergence is
//    detected (StopReason::kDiverged).
//  - Quasistatic problems are rejected: eq. 33 divides by the element mass (docs/pxpbd.md).
//
// Log columns: "primal_residual" |g| of eq. 24 over the free DOFs (with the current stored
// stresses P^e), "secondary_residual" |h| of eq. 25 (sqrt of sum_e |P(F^e(x)) - P^e|_F^2, Pa;
// costs one stress evaluation per element, so it can be switched off). The true residual of
// the yardstick is g + dt^2 B h.
#include <vector>

#include "core/materials/closed_form_stress.hpp"
#include "core/solver/solver.hpp"
#include "solvers/pxpbd/fp_pxpbd_element.hpp"

namespace pbdlab {

struct FpPxpbdOptions {
  // Local Newton iterations per element per sweep (Algorithm 2's inner loop; the paper runs
  // 1-5).
  int newton_iterations = 1;
  // kApproximate: eq. 48 / eq. 52 with eq. 49 where they exist (fixed_corotated,
  // neo_hookean), the projected tangent for every other model. kProjected: the dense 9x9
  // solve with the SPD-projected dP/dF for every model.
  enum class Hessian { kApproximate, kProjected } hessian = Hessian::kApproximate;
  // The local Newton loop ends early when |g^e| <= local_tolerance |g^e_0| (the element's
  // residual over its free DOFs before its first local iteration); 0: always run
  // newton_iterations.
  double local_tolerance = 0.0;
  // Log the secondary residual |h| (one stress evaluation per element and logged iteration;
  // like the primal residual, its time is excluded from the solver's clock).
  bool log_secondary_residual = true;
  // P0 of the step: kZero, P0 = 0 (XPBD's lambda_0 = 0: x0 = x~ + dt^2 M^-1 f_ext);
  // kPrevious, P(F^e(x^n)) (a warm start: x0 is then a semi-implicit Euler prediction, which
  // is unstable once dt^2 E / (rho h^2) > ~4: measured, the Res 32 block of the paper's Fig. 2
  // with 5 sweeps a frame diverges at frame 4 with it and stays stable over 8 frames with
  // kZero).
  enum class InitialStress { kZero, kPrevious } initial_stress = InitialStress::kZero;
  // The lane kernel (fp_pxpbd_lanes.hpp) for the elements it serves: a rank-one Hessian
  // (kApproximate on fixed_corotated or neo_hookean), no prescribed DOF, local_tolerance 0.
  // false: every element through solveElement (the same update).
  bool p1_lanes = true;
  // The corotated rotation on the lanes: kWarmStart, one Newton step from the element's last
  // rotation (the SVD where the step is not trusted); kSvd, the SVD at every evaluation, as
  // solveElement (the material's evaluate).
  enum class Rotation { kWarmStart, kSvd } rotation = Rotation::kWarmStart;
};

class FpPxpbdSolver : public Solver {
 public:
  explicit FpPxpbdSolver(FpPxpbdOptions options = {}) : options_(options) {}
  std::string name() const override { return "fp_pxpbd"; }
  std::vector<std::string> logColumns() const override { return {"primal_residual", "secondary_residual"}; }
  // Rejects quasistatic problems, elements other than P1 tetrahedra (tet4), and problems with
  // terms other than the elastic one (weak constraints, colliders, collisions): the sweep
  // visits elastic elements only.
  std::string rejectionReason(const Problem& problem) const override;
  // Throws std::invalid_argument with rejectionReason() if the problem is rejected.
  void setup(const Problem& problem) override;
  // With initial_stress kPrevious: a warning when dt^2 E / (rho h^2) exceeds
  // kWarmStartStabilityLimit on some element (h its shortest rest edge), the limit measured above.
  std::vector<std::string> setupWarnings() const override { return warnings_; }
  static constexpr double kWarmStartStabilityLimit = 4.0;
  // max and median over the elements of dt^2 E / (rho h^2) (E from the Lamé parameters of
  // (E, nu), rho the smallest density of the problem's bodies, h the shortest rest edge).
  static std::pair<double, double> stiffnessRatio(const Problem& problem, double dt);
  void advance(const StepObjective& objective, State& state, StepMonitor& monitor) override;

  const FpPxpbdOptions& options() const { return options_; }
  // The element coloring the sweeps follow (elements stored in this order).
  int numColors() const { return static_cast<int>(color_start_.size()) - 1; }
  // Mesh element indices of color c.
  std::vector<int> elementsOfColor(int c) const;

  // --- the pieces of one step, public for tests and benchmarks ---
  // Starts a step: the initial stresses P0 and x0 (see the header comment).
  void beginStep(const StepObjective& objective, Positions& x);
  // One Gauss-Seidel sweep over every element, color by color (the lane kernel's elements of a
  // color, then the others; they share no node, so the order within a color is immaterial).
  void sweep(Positions& x);
  // How many elements the lane kernel solves, and how often its warm rotation fell back to the
  // SVD since setup.
  int numLaneElements() const;
  long long rotationFallbacks() const { return rotation_fallbacks_; }
  // The local Newton solve of the k-th element in color order (what a sweep does per element).
  void solveElement(int k, Positions& x);
  // |g| of eq. 24 and |h| of eq. 25 at x with the stored stresses.
  double primalResidual(const Positions& x) const;
  double secondaryResidual(const Positions& x);
  int numElements() const { return static_cast<int>(elements_.size()); }
  // The 9x9 tangent the local solve of mesh element `element` uses at F and time t (eq. 48,
  // eq. 52 or the SPD-projected dP/dF), exposed for tests. After setup().
  Mat9 elementTangent(int element, const Mat3& F, double t = 0.0) const;

 private:
  using AffineElement = FpPxpbdElement;
  using TangentKind = FpPxpbdTangentKind;

  void buildElements(const Problem& problem, double dt);
  // The 9x9 tangent used for element `el` at F (approximation or projection).
  Mat9 tangent(const AffineElement& el, const Mat3& F, const Mat9* dPdF) const;
  bool needsTrueTangent(const AffineElement& el) const;

  FpPxpbdOptions options_;
  const Problem* problem_ = nullptr;
  std::vector<std::string> warnings_;
  double built_dt_ = 0.0;
  std::vector<AffineElement> elements_;
  std::vector<int> color_start_;   // elements_[color_start_[c] .. color_start_[c+1]) have color c
  std::vector<int> lane_end_;      // elements_[color_start_[c] .. lane_end_[c]) are the lanes'
  std::vector<ClosedFormStress> closed_forms_;  // per distinct material (AffineElement::material)
  ClosedFormStressKind lane_kind_ = ClosedFormStressKind::kNone;  // the lanes' uniform kind
  std::vector<Mat3> rotation_;     // the lanes' warm rotations, color order
  bool rotations_ready_ = false;
  long long rotation_fallbacks_ = 0;
  std::vector<Mat3> stress_;       // P^e, color order
  VecX stress_force_;              // sum_e B^e P^e per DOF (the internal force of eq. 24)
  VecX inertial_rhs_;              // m_i x~_i + dt^2 f_ext_i per DOF
  std::vector<double> element_scratch_;  // per element: |h^e|^2
  double dt2_ = 0.0;
  double time_ = 0.0;              // t^{n+1}: the activation of the step
};

}  // namespace pbdlab
