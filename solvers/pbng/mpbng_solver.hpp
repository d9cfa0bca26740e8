#pragma once
// MPBNG: multiresolution PBNG (PBNG TOG §8.2, Fig. 4). The solver keeps its own level hierarchy
// (solvers/pbng/mpbng_levels.hpp: the user's body and coarser copies, each at E/L and rho/L,
// bound level to level by weak constraints, eq. 18-19) and iterates it with PBNG's sweeps
// (solvers/pbng/pbng_solver.hpp) over one node coloring of all levels and bindings (§10).
// Every iterate is judged on the original problem: the log's residual is the user's single
// body's yardstick at level 0's positions (the levels are the solver's business).
//
// A step (the three passes of §8.2; l = 1 .. k_max, k_max the step's iteration budget):
//   loads     each level has its own weight (m g); the user's other loads (tractions, point
//             loads) go 1/L to level 0 and, moved along the bindings' weights, 1/L to each
//             coarse level (MpbngLevels::distributeForce)
//   start     level 0 at PBNG's initial guess (x~ with the boundary values); the coarse levels
//             from level 0 ("coarse_state": "restrict": their x^n, v^n interpolated from level
//             0's at their rest points, every step) or their own x^n, v^n ("own"); kappa = 1
//   iteration l: coarsest_sweeps sweeps of the coarsest level ("coarsest_pass":
//             "every_iteration", the paper's sentence read as the definition of a multi-layer
//             iteration; or "once", before iteration 1 only), then one sweep of every node of
//             the levels 0 .. L-2 ("multi_level": "all_but_coarsest", the paper's union over
//             i != n; or "all"), then kappa_l = sqrt(1 - l^2 / r_des^2), r_des = k_max + r_pad,
//             multiplies the coarse levels' masses (and their weight, "scale_gravity") and
//             the bindings' k_c ("kappa": "absolute"; "product": the running product of the
//             kappa_l)
//   last      after iteration k_max: final_sweeps sweeps of level 0, the bindings at
//             kappa_kmax ("final_bindings": "on") or off ("off": level 0 alone, the original
//             problem divided by L, whose solution is the user's)
// The log's iteration l is the state after iteration l (the last includes the final pass);
// columns: colors, kappa (after the iteration), fine_sweeps (the step's sweeps so far in units
// of one sweep of level 0: nodes visited / level 0's movable nodes).
// The paper leaves these open; docs/pbng.md ("MPBNG") gives the defaults' reasons and the
// readings tried.
#include <memory>
#include <vector>

#include "core/solver/solver.hpp"
#include "solvers/pbng/mpbng_levels.hpp"
#include "solvers/pbng/pbng_solver.hpp"

namespace pbdlab {

struct MpbngOptions {
  // Levels: `levels` in all, coarsened from a structured grid (coarsenStructuredGrid), unless
  // `coarse_meshes` gives the coarse levels (finest first). 0 (the default): 3, or 2 where the
  // grid's cells halve only once.
  int levels = 0;
  std::vector<Mesh> coarse_meshes;
  double r_pad = 0.05;         // r_des = k_max + r_pad; the paper: [0.05, 2]
  int coarsest_sweeps = 5;     // the paper: 4-6
  int final_sweeps = 7;        // the paper: 6-8
  MpbngLevelOptions level_options;
  enum class CoarsestPass { kEveryIteration, kOnce } coarsest_pass = CoarsestPass::kEveryIteration;
  enum class MultiLevel { kAllButCoarsest, kAll } multi_level = MultiLevel::kAllButCoarsest;
  enum class Kappa { kAbsolute, kProduct } kappa = Kappa::kAbsolute;
  bool final_bindings = false;
  bool scale_gravity = true;
  enum class CoarseState { kRestrict, kOwn } coarse_state = CoarseState::kRestrict;
  PbngOptions pbng;  // the sweeps' own options (rotation, contact step); no SOR or Chebyshev
};

class MpbngSolver : public Solver {
 public:
  explicit MpbngSolver(MpbngOptions options = {}) : options_(std::move(options)) {}
  std::string name() const override { return "mpbng"; }
  std::vector<std::string> logColumns() const override { return {"colors", "kappa", "fine_sweeps"}; }
  std::string rejectionReason(const Problem& problem) const override;
  void setup(const Problem& problem) override;
  void advance(const StepObjective& objective, State& state, StepMonitor& monitor) override;

  // kappa after iteration l of k_max (r_des = k_max + r_pad), absolute (the product form
  // multiplies these).
  static double kappa(int l, int k_max, double r_pad);

  const MpbngLevels& levels() const { return *levels_; }
  const PbngSolver& sweeper() const { return sweeper_; }
  const MpbngOptions& options() const { return options_; }

 private:
  // The coarse levels of `problem` (coarse_meshes, or coarsened from its grid) and "", or the
  // reason there are none.
  std::string coarseLevels(const Problem& problem, std::vector<Mesh>& coarse) const;
  // Sets the sweeper's scaling for the coarse levels' kappa and the bindings' (`bindings`).
  void scale(double coarse, double bindings);

  MpbngOptions options_;
  std::unique_ptr<MpbngLevels> levels_;
  PbngSolver sweeper_;
  std::vector<char> coarsest_, multi_level_, finest_;  // node masks of the three passes
  VecX added_force_;  // this step's share of the user's loads on every level (empty: none)
  // "own" coarse state: the levels' positions and velocities after the last step it solved.
  Positions own_x_;
  VecX own_v_;
  int own_step_ = -1;
};

}  // namespace pbdlab
