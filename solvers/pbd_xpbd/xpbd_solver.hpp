#pragma once
// XPBD and its relatives on per-element constraints from a material's term split:
//  - "xpbd": Macklin et al. 2016 as written in PXPBD (Chen et al. 2023) eq. 11-17, backward
//    Euler only: Gauss-Seidel over the constraints, one multiplier per constraint, reset at
//    the start of every step and kept across the step's iterations. The multiplier update
//    follows the papers' README (PXPBD eq. 16 misplaces lambda):
//      dlambda = -(C + alpha~ lambda) / (grad C M^-1 grad C^T + alpha~),  alpha~ = alpha / dt^2,
//      x += M^-1 grad C^T dlambda                                      (eq. 15, 17).
//    Option primal_residual_in_update keeps PXPBD eq. 13's primal residual g (the Hessian of
//    C still dropped; Fig. 3b, expected unstable): before each sweep x <- x - M^-1 g(x, lambda),
//    which is eq. 13's position row, then the sweep as above.
//  - "pbd": the same with zero compliance (Mueller et al. 2007 constraint projection). On a
//    quasistatic scene it is PBNG §6.1's limit: it converges to C = 0, i.e. gravity is lost.
//  - "xpbd_qs": XPBD run in pseudo-time to steady state for quasistatic scenes (PBNG §6.1,
//    Chentanez et al. 2020): one solver iteration is one backward Euler pseudo-step of
//    length pseudo_dt with `iterations_per_pseudo_step` sweeps; multipliers reset each
//    pseudo-step. "flipped": the other energy terms' constraints (weak constraints) before
//    the elastic ones (PBNG §11: XPBD-QS does hyperelastic first).
//  - "b_pxpbd": blended primal XPBD, PXPBD eq. 18-22 and Algorithm 1: per constraint d,
//      dx_fp = lambda_d^new M^-1 grad C_d - dx_total_d         (eq. 22; eq. 20 restricted to
//                                                               d's nodes, with the updated
//                                                               multiplier as eq. 20 has it)
//      dx    = zeta M^-1 grad C_d dlambda + (1 - zeta) dx_fp   (eq. 19, 21)
//      dx_total_d += dx.
//    zeta = 1 is XPBD exactly.
//
// Constraints (solvers/pbd_xpbd/element_constraint.hpp): per element and split term k,
// C_k = sqrt(2 sum_q V_q Psi~_k + 2 V eps) with compliance 1/k_k; "sqrt_psi" is the whole
// energy as one constraint (PXPBD §5.3). Every other energy term of the Problem (weak
// constraints) gives one constraint per stencil, C = sqrt(2 E_s), compliance 1.
//
// Parallelism (PXPBD §4): elements are swept color by color (greedy coloring, elements of
// one color share no node) with OpenMP; per-element data are stored in color order so a
// sweep reads memory in sequence. Results are independent of the thread count.
//
// Log columns: primal_residual |g| (eq. 11, free DOFs) and secondary_residual |h| (eq. 12)
// at the recorded iterations (Budget::record_every), and colors (iteration 0 only).
// g = M (x - x_pred) - sum_c lambda_c grad C_c, x_pred = x~ + dt^2 M^-1 f_ext (eq. 11-12 with
// PXPBD's x~, which folds in the external force); h_c = C_c + alpha~_c lambda_c.
#include <limits>
#include <string>
#include <vector>

#include "core/solver/solver.hpp"
#include "core/terms/p1_element_record.hpp"
#include "solvers/pbd_xpbd/element_constraint.hpp"
#include "solvers/pbd_xpbd/p1_lanes.hpp"

namespace pbdlab {

enum class XpbdVariant { kXpbd, kPbd, kXpbdQuasistatic, kBlendedPrimal };

struct XpbdOptions {
  XpbdVariant variant = XpbdVariant::kXpbd;
  std::string split;  // "" = the material's default split; "sqrt_psi" = one constraint (§5.3)
  // Regularization of C near 0 in units of Psi~ (PXPBD eq. 5's eps; the paper gives no value).
  // PBD's zero compliance divides by |grad C|^2, which eps > 0 sends to 0 near C's minimum,
  // so PBD defaults to eps = 0 and NearZero::kSkip (family.cpp).
  double eps = 1e-8;
  // What to do near C = 0: kRegularize, C = sqrt(2 V (Psi~ + eps)) (PXPBD eq. 5); kSkip, the
  // high-order paper's §4.1 ("it can be ignored when the value of the constraint is ...
  // close to the floating-point arithmetic resolution"): eps = 0 and a constraint whose
  // |sum_q V_q Psi~| is at most kSkipBelow V_e is not visited. eps > 0 turns C into an explicit
  // force step for strains below about sqrt(eps) (docs/high-order-xpbd.md, "Near C = 0").
  enum class NearZero { kRegularize, kSkip } near_zero = NearZero::kRegularize;
  // |Psi~| at round-off: Psi~ is a difference of O(1) invariants of F (64 ulps of 1).
  static constexpr double kSkipBelow = 64.0 * std::numeric_limits<double>::epsilon();
  bool primal_residual_in_update = false;  // xpbd only: PXPBD Fig. 3b
  double zeta = 0.5;                       // b_pxpbd: eq. 19's blend, (0, 1]
  double pseudo_dt = 0.05;                 // xpbd_qs: seconds of pseudo-time per pseudo-step
  int iterations_per_pseudo_step = 1;      // xpbd_qs: sweeps per pseudo-step (PBNG Fig. 18: 1, 10)
  bool flipped = false;                    // xpbd_qs: other terms' constraints first
  // xpbd_qs: fraction of the pseudo-velocity removed after each pseudo-step, v <- (1 - d) v.
  // It leaves the fixed points unchanged (v = 0 there) and lets an undamped scene (no other
  // dissipation than backward Euler's) settle to them: the high-order paper runs "up to the
  // equilibrium state" without saying how (docs/high-order-xpbd.md).
  double velocity_damping = 0.0;
  // The P1 lane kernel (solvers/pbd_xpbd/p1_lanes.hpp) where it applies: P1 tetrahedra whose
  // split terms all have closed forms (the corotated "pxpbd" split). false: the generic
  // element path everywhere (the same update through MaterialTerm::evaluate).
  bool p1_lanes = true;
  // The corotated stretch's rotation in the lanes: kWarmStart, one Newton step from the
  // element's rotation of its previous visit (the SVD where the step is not trusted); kSvd,
  // the SVD at every visit (the generic path's iterates up to round-off).
  enum class Rotation { kWarmStart, kSvd } rotation = Rotation::kWarmStart;
  // Evaluate g and h at the recorded iterations (a constraint pass as costly as a sweep; its
  // time is excluded from the solver's clock); false leaves those columns empty.
  bool log_residuals = true;
};

std::string xpbdVariantName(XpbdVariant variant);

class XpbdSolver : public Solver {
 public:
  explicit XpbdSolver(XpbdOptions options = {}) : options_(std::move(options)) {}
  std::string name() const override { return xpbdVariantName(options_.variant); }
  std::vector<std::string> logColumns() const override;
  std::string rejectionReason(const Problem& problem) const override;
  // A split (option "split") that `material` does not offer.
  OptionConflict materialConflict(const Material& material) const override;
  // Throws std::invalid_argument with rejectionReason's message.
  void setup(const Problem& problem) override;
  void advance(const StepObjective& objective, State& state, StepMonitor& monitor) override;

  const XpbdOptions& options() const { return options_; }
  // e.g. "xpbd: split 'pxpbd', eps 1e-08, 2 constraints per element, 39 element colors".
  std::string description() const;
  int numElementColors() const { return static_cast<int>(color_start_.size()) - 1; }
  int numConstraints() const { return static_cast<int>(compliance_.size()); }
  // Whether the element constraints run on the P1 lane kernel (XpbdOptions::p1_lanes).
  bool usesP1Lanes() const { return use_p1_lanes_; }
  // Visits where the warm-started rotation step was not trusted and the SVD was taken.
  long rotationFallbacks() const { return rotation_fallbacks_; }

  // One Gauss-Seidel sweep over every constraint at positions x (exposed for benchmarks).
  // inv_dt2 = 1/dt^2 scales the compliances; t is the time of the material data.
  void sweep(Positions& x, double inv_dt2, double t);
  // Multipliers and B-PXPBD's accumulated displacements to zero (start of a (pseudo-)step).
  void resetMultipliers();
  // |g| and |h| at x (see above); `force` receives sum_c lambda_c grad C_c (all DOFs).
  void residuals(const Positions& x, const Positions& x_pred, double inv_dt2, double t, double& primal,
                 double& secondary, VecX& force);

 private:
  // Every active constraint of every element slot, color by color (the slots of one color in
  // parallel): visit(slot, nodes, constraint, C, grad C, xe) with xe the slot's positions
  // (3 x N), which `visit` may move; then finish(nodes, xe) once per slot. The set-up that a
  // sweep and the residuals share, written once.
  template <int N, class Visit, class Finish>
  void forEachElementConstraint(const Positions& x, double t, Visit&& visit, Finish&& finish) const;
  template <int N>
  void sweepElements(Positions& x, double inv_dt2, double t);
  void sweepOtherTerms(Positions& x, double inv_dt2, double t);
  // The element constraints on the lane kernel: one parallel region, a color per work-shared
  // loop over batches of kXpbdP1Lanes records.
  void sweepP1Lanes(Positions& x, double inv_dt2);
  // Every record's rotation to polarRotation(F(x)) (SVD): the warm start's first iterate.
  void startRotations(const Positions& x);
  template <int N>
  void elementResiduals(const Positions& x, double inv_dt2, double t, VecX& force);
  void otherTermResiduals(const Positions& x, double inv_dt2, double t, VecX& force);
  // The XPBD or B-PXPBD update of one constraint on n nodes (see above).
  // inverse_mass: the constraint's nodes' inverse masses per DOF (3 x n, 0 if prescribed).
  template <int N>
  void updateConstraint(int constraint, const double* inverse_mass, double C,
                        const Eigen::Matrix<double, 3, N>& gradient, double alpha_tilde,
                        Eigen::Matrix<double, 3, N>& xe);
  double complianceScale(double inv_dt2) const;
  // C = sqrt(2 |E_s|) of stencil s of another term, and its gradient (3 n).
  static double stencilConstraint(const EnergyTerm& term, int s, const Positions& x, double t, VecX& gradient);

  XpbdOptions options_;
  const Problem* problem_ = nullptr;
  const ElasticEnergy* energy_ = nullptr;
  bool plane_strain_ = false;
  int nodes_per_element_ = 0;
  int points_per_element_ = 0;

  // Elements in color order ("slots"): color c is slots [color_start_[c], color_start_[c + 1]).
  std::vector<int> color_start_;
  std::vector<int> element_of_slot_;
  std::vector<int> slot_nodes_;               // N per slot
  std::vector<double> slot_shape_gradients_;  // per slot, Q points of NodeColumns<N> (element_constraint.hpp)
  std::vector<double> slot_point_volumes_;    // Q per slot
  std::vector<double> slot_volume_;
  std::vector<double> slot_inverse_mass_;     // 3 N per slot: read in sequence, not gathered
  std::vector<int> split_of_slot_;            // index into splits_
  std::vector<int> first_constraint_;         // per slot (+1): its split's terms in order
  std::vector<MaterialSplit> splits_;
  std::vector<const Material*> split_material_;

  // Other energy terms (weak constraints): one constraint per stencil, stencils by color.
  struct OtherTerm {
    const EnergyTerm* term;
    std::vector<int> stencils;  // in color order
    int first_constraint;
  };
  std::vector<OtherTerm> other_terms_;

  // The lane kernel's data: the slots' records (same order), the split's kinds and the
  // compliances of each split (a record's `material` is its slot's split index).
  bool use_p1_lanes_ = false;
  std::vector<P1ElementRecord> records_;
  XpbdP1Split p1_split_;
  bool rotations_ready_ = false;
  long rotation_fallbacks_ = 0;

  std::vector<double> compliance_;   // per constraint: alpha = 1/k (PBD: 0)
  std::vector<size_t> total_offset_; // per constraint (+1): its slice of displacement_total_
  std::vector<double> lambda_;
  std::vector<double> displacement_total_;  // B-PXPBD: dx_total_d, 3 n per constraint
  std::vector<double> secondary_squared_;   // per constraint: h_c^2 (summed in order)
  VecX inverse_mass_;                       // per DOF, 0 for prescribed DOFs
};

}  // namespace pbdlab
