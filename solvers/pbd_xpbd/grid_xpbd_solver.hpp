#pragma once
// Grid-based XPBD and B-PXPBD (PXPBD, Chen et al. 2023, §5.5 and Fig. 9; the colouring of §4,
// Fig. 6): the solvers of the grid-based scheme's step (core/model/grid_step_problem.hpp),
// whose unknowns are the positions q of a background grid's nodes and whose mesh follows
// x = W q. Names "grid_xpbd" and "grid_b_pxpbd"; backward Euler only.
//
// Constraints: per element e of the embedded mesh (P1 tetrahedra) and per term k of its
// material's split, the XPBD constraint of xpbd_solver.hpp (element_constraint.hpp),
//   C_ek(q) = C_k(F_e(x)),  x_a = sum_i w_ai q_i  (the element's vertices from its grid nodes),
//   grad_qi C_ek = sum_a w_ai grad_xa C_k        (B^T grad_x C, grad_xa C = dC/dF g_a),
// compliance alpha_k = 1 / k_k, alpha~ = alpha / dt^2. i runs over the element's touched grid
// nodes (nonzero weight; EmbeddedTerm::weightEntries), M is the grid's lumped masses (inverse
// 0 for prescribed DOFs: massless and wall nodes). Each visit (xpbd_update.hpp):
//   dlambda = -(C + alpha~ lambda) / (sum_i |grad_qi C|^2 / m_i + alpha~)    (eq. 16, README form)
//   grid_xpbd:    dq_i = grad_qi C dlambda / m_i                              (eq. 15, 17)
//   grid_b_pxpbd: dq = zeta dlambda M^-1 grad_q C + (1 - zeta) dq_fp,
//                 dq_fp = (lambda + dlambda) M^-1 grad_q C - dq_total         (eq. 19-22)
// and the element's vertices are re-embedded from the moved nodes before its next constraint.
// Initial guess q~ + dt^2 M^-1 f_ext (q~ = q^n + dt v, the grid's APIC velocities), as xpbd's.
//
// Parallelism (§4, Fig. 6): elements are swept colour by colour, OpenMP over the elements of
// one colour; two elements of one colour touch no common grid node. The colouring is redone
// at every setup (the weights change every step) from the previous step's colours when the
// element count matches (core/grid/grid_coloring.hpp). Over the nodes of every vertex's kernel
// stencil (default, colorElementsOnGrid as Fig. 6 draws it) or over the touched nodes only
// (GridColoringNodes::kTouched: fewer colours where vertices sit on grid planes; it is the
// mesh's own element colouring in an identity embedding).
//
// Log columns: primal_residual |g| and secondary_residual |h| in q (eq. 11-12 over the free grid
// DOFs, as xpbd's), and at iteration 0 colors, coloring_seconds and recolored (the elements
// whose colour changed at this step's setup; all of them at a cold start).
// Measurements and the story: docs/grid.md, "Grid-based XPBD and B-PXPBD".
#include <string>
#include <vector>

#include "core/solver/solver.hpp"
#include "core/terms/elastic_energy.hpp"
#include "core/terms/embedded_term.hpp"
#include "core/topology/coloring.hpp"
#include "solvers/pbd_xpbd/xpbd_solver.hpp"

namespace pbdlab {

enum class GridColoringNodes { kKernel, kTouched };
std::string gridColoringNodesName(GridColoringNodes nodes);  // "kernel", "touched"

struct GridXpbdOptions {
  bool blended = false;  // grid_b_pxpbd (B-PXPBD); false: grid_xpbd
  std::string split;     // as XpbdOptions::split ("" = the material's default)
  double eps = 1e-8;     // as XpbdOptions::eps
  XpbdOptions::NearZero near_zero = XpbdOptions::NearZero::kRegularize;
  double zeta = 0.5;  // grid_b_pxpbd: eq. 19's blend, (0, 1]; 1 is grid_xpbd
  GridColoringNodes coloring_nodes = GridColoringNodes::kKernel;
  bool log_residuals = true;  // g and h at the recorded iterations (off the solver's clock)
};

class GridXpbdSolver : public Solver {
 public:
  explicit GridXpbdSolver(GridXpbdOptions options = {}) : options_(std::move(options)) {}
  std::string name() const override { return options_.blended ? "grid_b_pxpbd" : "grid_xpbd"; }
  std::vector<std::string> logColumns() const override;
  // "" for the problems makeGridStepProblem builds from a P1 tetrahedral mesh of one elastic
  // term (every term an EmbeddedTerm over an ElasticEnergy of tet4); why not otherwise.
  std::string rejectionReason(const Problem& problem) const override;
  OptionConflict materialConflict(const Material& material) const override;
  // Once per grid step (the weights changed): colouring, constraint data, masses. Throws
  // std::invalid_argument with rejectionReason's message.
  void setup(const Problem& problem) override;
  void advance(const StepObjective& objective, State& state, StepMonitor& monitor) override;

  const GridXpbdOptions& options() const { return options_; }
  // e.g. "grid_b_pxpbd: split 'pxpbd', eps 1e-08, zeta 0.5, 2 constraints per element, 320
  // elements in 222 colors (kernel nodes, warm-started: 12 recolored in 0.7 ms)".
  std::string description() const;
  // This step's colouring: groups of element indices of the embedded mesh.
  const Coloring& coloring() const { return coloring_; }
  int numColors() const { return coloring_.numColors(); }
  double coloringSeconds() const { return coloring_seconds_; }
  int recoloredElements() const { return recolored_; }
  bool warmStarted() const { return warm_started_; }
  int numConstraints() const { return static_cast<int>(compliance_.size()); }

  // One Gauss-Seidel sweep over every constraint at grid positions q.
  void sweep(Positions& q, double inv_dt2, double t);
  void resetMultipliers();
  // |g| and |h| at q (eq. 11-12 in q); `force` receives sum_c lambda_c grad_q C_c.
  void residuals(const Positions& q, const Positions& q_pred, double inv_dt2, double t, double& primal,
                 double& secondary, VecX& force);

 private:
  // Every active constraint, colour by colour (the slots of a colour in parallel):
  // visit(slot, constraint, C, grad_q C over the slot's touched nodes, qe) where qe holds the
  // touched nodes' positions, which `visit` may move (it returns true when it did: then the
  // vertices are re-embedded); with `moved` (may be &q) the slot's qe is stored there after
  // its last constraint.
  template <class Visit>
  void forEachConstraint(const Positions& q, double t, Positions* moved, Visit&& visit) const;
  void colorElements(const EmbeddedTerm& term, const ElasticEnergy& energy);

  GridXpbdOptions options_;
  const Problem* problem_ = nullptr;
  const ElasticEnergy* energy_ = nullptr;
  int points_per_element_ = 0;

  // The colouring and what the last setup did.
  Coloring coloring_;
  GridColoringNodes coloring_nodes_used_ = GridColoringNodes::kKernel;
  double coloring_seconds_ = 0.0;
  int recolored_ = 0;
  bool warm_started_ = false;

  // Elements in colour order ("slots"): colour c is slots [color_start_[c], color_start_[c + 1]).
  std::vector<int> color_start_;
  std::vector<int> element_of_slot_;
  // Per slot: its touched grid nodes [touched_start_[s], touched_start_[s + 1]) of touched_node_
  // (3 inverse masses each in touched_inverse_mass_), and B's nonzeros, each (vertex, touched
  // node, weight), [entry_start_[s], entry_start_[s + 1]) of entries_.
  struct WeightEntry {
    int vertex;   // 0..3, the element's vertex
    int touched;  // index among the slot's touched nodes
    double weight;
  };
  std::vector<int> touched_start_;
  std::vector<int> touched_node_;
  std::vector<double> touched_inverse_mass_;
  std::vector<int> entry_start_;
  std::vector<WeightEntry> entries_;
  std::vector<double> slot_shape_gradients_;  // per slot, Q points of NodeColumns<4>
  std::vector<double> slot_point_volumes_;    // Q per slot
  std::vector<double> slot_volume_;
  std::vector<int> split_of_slot_;
  std::vector<int> first_constraint_;  // per slot (+1)
  std::vector<MaterialSplit> splits_;

  std::vector<double> compliance_;     // per constraint: 1/k (infinity: not a constraint)
  std::vector<size_t> total_offset_;   // per constraint (+1): 3 per touched node (B-PXPBD)
  std::vector<double> lambda_;
  std::vector<double> displacement_total_;
  std::vector<double> secondary_squared_;
};

}  // namespace pbdlab
