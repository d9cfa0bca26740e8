#pragma once
// A second, independent reference for quasistatic steps: semi-implicit (symplectic) Euler
// with lumped masses and linear velocity damping, run in pseudo-time until the body comes to
// rest (dynamic relaxation). This is how the high-order paper computes its references
// (semi-explicit Euler, dt = 5.6e-5 s "to equilibrium"); its damping is not given, so ours
// is an option, stated in every run's summary through the scene:
//   v += dt M^-1 (f_ext - grad PE(x));  v *= exp(-damping dt);  x += dt v   (free DOFs)
// It shares nothing with Newton but the energy kernel, so agreement of the two at rest
// cross-checks the Newton reference. One "iteration" is `substeps` explicit steps.
#include "core/solver/solver.hpp"

namespace pbdlab {

struct ExplicitRelaxationOptions {
  double dt = 5.6e-5;        // seconds of pseudo-time per explicit step (high-order paper)
  double damping = 20.0;     // 1/s; velocities decay as exp(-damping t)
  int substeps = 1000;       // explicit steps per logged iteration
};

class ExplicitRelaxationSolver : public Solver {
 public:
  explicit ExplicitRelaxationSolver(ExplicitRelaxationOptions options = {}) : options_(options) {}
  std::string name() const override { return "explicit_relaxation"; }
  std::vector<std::string> logColumns() const override { return {"pseudo_time", "kinetic_energy"}; }
  std::string rejectionReason(const Problem& problem) const override;
  // Throws std::invalid_argument for a backward Euler problem (this solver relaxes to
  // quasistatic equilibrium) or a time step above the stability estimate 2 / omega_max.
  void setup(const Problem& problem) override;
  void advance(const StepObjective& objective, State& state, StepMonitor& monitor) override;

  // Upper bound of the highest natural frequency, from Gershgorin on M^-1 K at the rest shape
  // (per element, the sum of the absolute entries of its Hessian rows over the lumped mass).
  static double maxFrequencyEstimate(const Problem& problem);

 private:
  ExplicitRelaxationOptions options_;
};

}  // namespace pbdlab
