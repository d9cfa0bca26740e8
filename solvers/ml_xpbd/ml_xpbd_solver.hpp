#pragma once
// Multi-layer XPBD (Mercier-Aubin & Kry 2024; docs/multi-layer-xpbd.md), solver "ml_xpbd": its
// elastic core, i.e. the one fully elastic layer (layers [0]), which is XPBD on Voigt StVK
// constraints (solvers/ml_xpbd/voigt_stvk_constraint.hpp, eq. 5-8). Backward Euler only. Per step:
//   x~ = x^n + h v^n + h^2 M^-1 f_ext (as the XPBD family), lambda = 0,
//   then Gauss-Seidel sweeps over the element colors (elements of one color share no node:
//   OpenMP over the elements of a color; results do not depend on the thread count), one
//   linearization per element visit (eq. 8 normal block, eq. 5 per shear, eq. 6).
// Nodes with a Dirichlet condition (and plane strain's pinned z) have inverse mass 0.
//
// Layers: `layers` lists the rigid percentage of each layer, coarse to fine, the last 0
// (Alg. 2); only [0] is built here (rigid layers, coupling and residual velocities are not).
// `iterations_per_layer`, when given, is each layer's number of iterations (Alg. 2's n_l);
// when not, the last layer runs until the Budget ends the step.
//
// Log columns (every recorded iteration): secondary_residual |C + alpha~ lambda| over every
// element component (eq. 30), secondary_residual_matlab | |C| - min(|C|, |alpha~ lambda|) |
// (component-wise, then the norm: the authors' code's variant, a different number), layer
// (1-based) and rigid_bodies (0 here), colors (iteration 0 only).
#include <string>
#include <vector>

#include "core/solver/solver.hpp"
#include "solvers/ml_xpbd/voigt_stvk_constraint.hpp"

namespace pbdlab {

struct MlXpbdOptions {
  std::vector<double> layers = {0.0};     // rigid percentage per layer, coarse -> fine, last 0
  std::vector<int> iterations_per_layer;  // empty: the last layer runs until the Budget ends
  // Evaluate the secondary residuals at the recorded iterations (a pass as costly as a sweep,
  // off the solver's clock); false leaves those columns empty.
  bool log_residuals = true;
};

class MlXpbdSolver : public Solver {
 public:
  // Throws std::invalid_argument for layers other than [0] (rigid layers are not built yet) or
  // an iterations_per_layer of another length than layers or with a count < 1.
  explicit MlXpbdSolver(MlXpbdOptions options = {});
  std::string name() const override { return "ml_xpbd"; }
  std::vector<std::string> logColumns() const override;
  std::string rejectionReason(const Problem& problem) const override;
  // Throws std::invalid_argument with rejectionReason's message.
  void setup(const Problem& problem) override;
  void advance(const StepObjective& objective, State& state, StepMonitor& monitor) override;

  const MlXpbdOptions& options() const { return options_; }
  int dimension() const { return dimension_; }
  int numElementColors() const { return static_cast<int>(color_start_.size()) - 1; }
  // The number of elements of each color, in color order.
  std::vector<int> colorSizes() const;

  // One Gauss-Seidel sweep over every element at x (inv_h2 = 1/h^2 scales the compliances).
  void sweep(Positions& x, double inv_h2);
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
  void sweepSlots(const Slots<D>& slots, Positions& x, double inv_h2);
  template <int D>
  void residualsOfSlots(const Slots<D>& slots, const Positions& x, double inv_h2);

  MlXpbdOptions options_;
  const Problem* problem_ = nullptr;
  int dimension_ = 3;
  std::vector<int> color_start_;  // color c: slots [color_start_[c], color_start_[c + 1])
  Slots<2> slots2_;               // tri3 plane strain
  Slots<3> slots3_;               // tet4
  std::vector<double> lambda_;    // D(D+1)/2 per slot
  std::vector<double> paper_squared_, matlab_squared_;  // per slot: the residuals' squares
};

}  // namespace pbdlab
