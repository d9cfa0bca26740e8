// The Newton/CHOLMOD reference: quadratic convergence on a twisted beam, exact free fall,
// budgets and the no-line-search mode; the budgeted baselines' linear solvers (CG, BiCGSTAB,
// Gauss-Seidel, LU) and their options.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>

#include "core/support/input_error.hpp"
#include "meshes/box_mesh.hpp"
#include "reference/newton.hpp"
#include "solvers/registry.hpp"

namespace pbdlab {
namespace {

// A 2 x 0.5 x 0.5 beam, x-min clamped, x-max turned 90 degrees about the beam axis over
// `steps` quasistatic steps.
Problem twistedBeam(int steps, MaterialModel model = MaterialModel::kStableNeoHookean,
                    BoxFamily family = BoxFamily::kFiveTet, int order = 1) {
  Problem problem;
  BoxMeshRecipe recipe;
  recipe.size = Vec3(2.0, 0.5, 0.5);
  recipe.cells = {8, 2, 2};
  recipe.family = family;
  recipe.order = order;
  recipe.target_size = 0.2;  // unstructured
  problem.mesh = makeBoxMesh(recipe);
  problem.material.model = model;
  problem.material.youngs_modulus = 1e5;
  problem.material.poisson_ratio = 0.3;
  MotionStage twist;
  twist.kind = MotionStage::Kind::kRotate;
  twist.axis_point = Vec3(2.0, 0.25, 0.25);
  twist.axis_direction = Vec3::UnitX();
  twist.angle = M_PI / 2;
  twist.t_start = 0.0;
  twist.t_end = 1.0;
  problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
  problem.dirichlet.push_back({"x-max", {true, true, true}, {{twist}}});
  problem.time = {Integrator::kQuasistatic, 1.0 / steps, steps};
  problem.finalize("twisted beam");
  return problem;
}

struct StepRun {
  std::vector<IterationRow> rows;
  StopReason reason;
};

std::vector<StepRun> runAll(const Problem& problem, Solver& solver, const Budget& budget, IterationLog& log) {
  State state = initialState(problem);
  solver.setup(problem);
  std::vector<StepRun> runs;
  for (int step = 0; step < problem.time.num_steps; ++step) {
    const StepResult result = advanceOneStep(solver, problem, state, budget, log);
    runs.push_back({log.rowsOfStep(step + 1), result.reason});
  }
  return runs;
}

// Ratio test on the last iterations: the order p in r_{k+1} ~ C r_k^p, estimated as
// log(r_{k+1} / r_k) / log(r_k / r_{k-1}), must be close to 2. The last triple whose newest
// residual is above the round-off floor (1e-12 relative; it lands near 1e-15) and whose
// middle one is inside the asymptotic region (< 1e-2) is used.
void expectQuadraticTail(const std::vector<IterationRow>& rows) {
  const int n = static_cast<int>(rows.size());
  int last = n - 1;
  while (last >= 2 && rows[last].relative_residual < 1e-12) --last;
  ASSERT_GE(last, 2);
  const double r_before = rows[last - 2].relative_residual, r_prev = rows[last - 1].relative_residual;
  const double r_last = rows[last].relative_residual;
  ASSERT_LT(r_prev, 1e-2);
  const double order = std::log(r_last / r_prev) / std::log(r_prev / r_before);
  std::string history;
  for (const auto& row : rows) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, " %.2e", row.relative_residual);
    history += buffer;
  }
  std::printf("[ order    ] %.3f from %.3e %.3e %.3e; history%s\n", order, r_before, r_prev, r_last, history.c_str());
  EXPECT_GT(order, 1.8);
}

TEST(Newton, TwistedBeamConvergesQuadratically) {
  for (MaterialModel model : {MaterialModel::kStableNeoHookean, MaterialModel::kFixedCorotated}) {
    SCOPED_TRACE(materialModelName(model));
    const Problem problem = twistedBeam(2, model);
    NewtonSolver newton;
    IterationLog log(newton.logColumns());
    Budget budget;
    budget.max_iterations = 60;
    budget.target_relative_residual = 1e-12;  // deep enough to see the asymptotic rate
    const auto runs = runAll(problem, newton, budget, log);
    for (size_t s = 0; s < runs.size(); ++s) {
      SCOPED_TRACE("step " + std::to_string(s + 1));
      const auto& rows = runs[s].rows;
      ASSERT_EQ(runs[s].reason, StopReason::kConverged);
      std::printf("[ history  ] %s step %zu\n", materialModelName(model).c_str(), s + 1);
      expectQuadraticTail(rows);
      // The true Hessian (column "hessian" == 0) is what converges quadratically.
      EXPECT_EQ(log.value(rows.back(), "hessian"), 0.0);
    }
  }
}

// One Newton step from the solution x* perturbed by eps along a fixed random direction:
// quadratic convergence means |r(x_1)| = C |r(x_0)|^2 with the same C for every small eps.
// (The three-residual ratio test of the natural iteration is a poor estimator on these
// meshes: its residuals mix modes with very different constants, so it reports orders of
// 1.4-1.7 although every step is exactly quadratic; this controlled test is not fooled.)
void expectQuadraticNewtonStep(const Problem& problem, const StepObjective& objective, const Positions& solution) {
  std::mt19937 rng(1);
  std::normal_distribution<double> normal;
  VecX direction = VecX::Zero(solution.size());
  for (int dof : problem.freeDofs()) direction[dof] = normal(rng);
  direction /= direction.norm();
  FreeDofHessian hessian(objective);
  std::vector<double> constants;
  for (double eps : {1e-3, 1e-4, 1e-5}) {
    const Positions x0 = solution + eps * direction;
    VecX g;
    objective.gradient(x0, g);
    Eigen::CholmodSupernodalLLT<SparseMatrix, Eigen::Lower> cholesky;
    cholesky.compute(hessian.assemble(objective, x0, HessianKind::kTrue));
    ASSERT_EQ(cholesky.info(), Eigen::Success) << "the true Hessian is definite at the solution";
    Positions x1 = x0;
    hessian.addFromFree(-cholesky.solve(hessian.restrictToFree(g)), x1);
    const double r0 = objective.residualNorm(x0), r1 = objective.residualNorm(x1);
    constants.push_back(r1 / (r0 * r0));
    std::printf("[ newton   ] eps %.0e: |r0| %.3e -> |r1| %.3e, |r1| / |r0|^2 = %.4e\n", eps, r0, r1, constants.back());
  }
  // C varies by less than 10% over two decades of eps (a linear method would change it 100x).
  for (double c : constants) EXPECT_NEAR(c, constants.back(), 0.1 * constants.back());
}

// Newton on every element type and mesh family: every step of the twist converges, and the
// Newton step is quadratic at the solution.
TEST(Newton, TwistedBeamConvergesOnEveryElementType) {
  struct Case {
    BoxFamily family;
    int order;
  };
  for (const Case& c : {Case{BoxFamily::kFiveTet, 1}, Case{BoxFamily::kFiveTet, 2}, Case{BoxFamily::kFiveTet, 3},
                        Case{BoxFamily::kBiased, 1}, Case{BoxFamily::kUnstructured, 1}, Case{BoxFamily::kHex, 1},
                        Case{BoxFamily::kPrism, 1}, Case{BoxFamily::kPyramid, 1}}) {
    SCOPED_TRACE(boxFamilyName(c.family) + " order " + std::to_string(c.order));
    const Problem problem = twistedBeam(2, MaterialModel::kStableNeoHookean, c.family, c.order);
    NewtonSolver newton;
    IterationLog log(newton.logColumns());
    Budget budget;
    budget.max_iterations = 60;
    budget.target_relative_residual = 1e-12;
    State state = initialState(problem);
    newton.setup(problem);
    for (int step = 0; step < problem.time.num_steps; ++step) {
      StepObjective objective(problem, state.x, state.v, step);
      StepMonitor monitor(objective, budget, log);
      newton.advance(objective, state, monitor);
      ASSERT_TRUE(monitor.stopReason() == StopReason::kConverged || monitor.stopReason() == StopReason::kRoundoff)
          << stopReasonName(monitor.stopReason());
      std::printf("[ newton   ] %s order %d step %d: %d iterations\n", boxFamilyName(c.family).c_str(), c.order,
                  step + 1, monitor.iterations());
      if (step + 1 == problem.time.num_steps) expectQuadraticNewtonStep(problem, objective, state.x);
    }
  }
}

TEST(Newton, BackwardEulerFreeFallIsExactInOneIteration) {
  Problem problem;
  BoxMeshRecipe recipe;
  recipe.cells = {2, 2, 2};
  problem.mesh = makeBoxMesh(recipe);
  problem.gravity = Vec3(0, 0, -9.81);
  problem.time = {Integrator::kBackwardEuler, 0.01, 3};
  problem.finalize("free fall");
  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  Budget budget;
  budget.target_relative_residual = 1e-10;
  State state = initialState(problem);
  newton.setup(problem);
  for (int step = 0; step < 3; ++step) {
    const StepResult result = advanceOneStep(newton, problem, state, budget, log);  // sets v
    EXPECT_EQ(result.reason, StopReason::kConverged);
    EXPECT_LE(result.iterations, 1);
  }
  // Backward Euler free fall: v_n = n dt g, z_n = z_0 + dt^2 g n (n + 1) / 2.
  const double dt = 0.01;
  for (int i = 0; i < problem.numNodes(); ++i) {
    EXPECT_NEAR(state.v[3 * i + 2], 3 * dt * -9.81, 1e-10);
    EXPECT_NEAR(state.x[3 * i + 2], problem.mesh.restPosition(i)[2] + dt * dt * -9.81 * 6, 1e-10);
  }
}

TEST(Newton, HonoursAnIterationBudgetWithoutLineSearch) {
  const Problem problem = twistedBeam(1);
  NewtonOptions options;
  options.line_search = false;
  NewtonSolver newton(options);
  IterationLog log(newton.logColumns());
  Budget budget;
  budget.max_iterations = 2;
  const auto runs = runAll(problem, newton, budget, log);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].reason, StopReason::kIterationBudget);
  EXPECT_EQ(runs[0].rows.size(), 3u);  // the initial guess and two iterations
  for (size_t k = 1; k < runs[0].rows.size(); ++k) {
    EXPECT_EQ(log.value(runs[0].rows[k], "line_search_steps"), 0.0);
    EXPECT_EQ(log.value(runs[0].rows[k], "step_length"), 1.0);  // full steps
  }
}

TEST(Newton, LogsSolverTimeAndFactorTime) {
  const Problem problem = twistedBeam(1);
  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  const auto runs = runAll(problem, newton, Budget{}, log);
  ASSERT_EQ(runs[0].reason, StopReason::kConverged);
  const auto& rows = runs[0].rows;
  for (size_t k = 1; k < rows.size(); ++k) {
    EXPECT_GE(rows[k].solver_seconds, rows[k - 1].solver_seconds);
    EXPECT_GT(log.value(rows[k], "factor_seconds"), 0.0);
  }
}

// --- The budgeted baselines' linear solvers (PBNG §11) ---------------------------------------

NewtonOptions withLinearSolver(LinearSolverKind kind, int cap, double tolerance, bool line_search,
                               NewtonOptions::Hessian hessian = NewtonOptions::Hessian::kAuto) {
  NewtonOptions options;
  options.linear_solver = kind;
  options.linear_iterations = cap;
  options.linear_tolerance = tolerance;
  options.line_search = line_search;
  options.hessian = hessian;  // kAuto: the linear solver's default
  if (kind == LinearSolverKind::kGaussSeidel) options.sor_omega = 1.3;  // the paper's
  return options;
}

struct NewtonRun {
  State state;
  std::vector<StepRun> steps;
  int newton_iterations = 0;
};

NewtonRun runWith(const Problem& problem, const NewtonOptions& options, const Budget& budget, IterationLog* log_out = nullptr) {
  NewtonSolver newton(options);
  IterationLog log(newton.logColumns());
  NewtonRun run;
  run.state = initialState(problem);
  newton.setup(problem);
  for (int step = 0; step < problem.time.num_steps; ++step) {
    const StepResult result = advanceOneStep(newton, problem, run.state, budget, log);
    run.steps.push_back({log.rowsOfStep(step + 1), result.reason});
    run.newton_iterations += result.iterations;
  }
  if (log_out) *log_out = log;
  return run;
}

std::string historyOf(const NewtonRun& run) {
  std::string history;
  for (size_t s = 0; s < run.steps.size(); ++s) {
    history += " | step " + std::to_string(s + 1) + " " + stopReasonName(run.steps[s].reason) + ":";
    for (const auto& row : run.steps[s].rows) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, " %.1e", row.relative_residual);
      history += buffer;
    }
  }
  return history;
}

// Uncapped, with a tight linear tolerance, every linear solver's Newton reaches CHOLMOD's
// solution; the column linear_iterations shows what the solve used.
TEST(NewtonLinearSolvers, EachLinearSolverReachesTheCholmodSolution) {
  const Problem problem = twistedBeam(2);
  Budget budget;
  budget.max_iterations = 60;
  budget.target_relative_residual = 1e-11;
  const NewtonRun reference = runWith(problem, NewtonOptions{}, budget);
  const Positions rest = problem.mesh.restPositionsFlat();
  double displacement = 0.0;
  for (int i = 0; i < problem.numDofs(); ++i)
    displacement = std::max(displacement, std::abs(reference.state.x[i] - rest[i]));
  using Hessian = NewtonOptions::Hessian;
  const std::vector<std::pair<LinearSolverKind, Hessian>> cases = {
      {LinearSolverKind::kConjugateGradient, Hessian::kProjected}, {LinearSolverKind::kConjugateGradient, Hessian::kTrue},
      {LinearSolverKind::kBiCgStab, Hessian::kTrue},               {LinearSolverKind::kGaussSeidel, Hessian::kProjected},
      {LinearSolverKind::kGaussSeidel, Hessian::kTrue},            {LinearSolverKind::kLu, Hessian::kTrue}};
  for (const auto& [kind, hessian] : cases) {
    for (bool line_search : {true, false}) {
      const std::string name = linearSolverName(kind) + (hessian == Hessian::kTrue ? " true" : " projected");
      SCOPED_TRACE(name + (line_search ? " with" : " without") + " line search");
      NewtonOptions options = withLinearSolver(kind, 1000000, 1e-13, line_search, hessian);
      IterationLog log;
      const NewtonRun run = runWith(problem, options, budget, &log);
      const double distance = (run.state.x - reference.state.x).lpNorm<Eigen::Infinity>() / displacement;
      std::printf("[ measured ] %s, line search %d: %d Newton iterations (CHOLMOD %d), distance %.2e;%s\n",
                  name.c_str(), int(line_search), run.newton_iterations,
                  reference.newton_iterations, distance, historyOf(run).c_str());
      for (const StepRun& step : run.steps) {
        EXPECT_EQ(step.reason, StopReason::kConverged) << stopReasonName(step.reason);
        for (size_t k = 1; k < step.rows.size(); ++k) {
          EXPECT_GE(log.value(step.rows[k], "linear_iterations"), 1.0);
          EXPECT_LE(log.value(step.rows[k], "linear_residual"), 1e-12);
        }
      }
      EXPECT_LT(distance, 1e-8);
    }
  }
}

// The paper's budgeted Newton ("2 (7 CGs)", no line search): CG capped at 7 iterations per
// Newton step. Every iteration logs at most 7, and the step needs more Newton iterations than
// with CG run to its tolerance (a cap that were ignored would give the same count).
TEST(NewtonLinearSolvers, CappedConjugateGradientsRespectTheCapAndConvergeMoreSlowly) {
  const Problem problem = twistedBeam(2);
  Budget budget;
  budget.max_iterations = 400;
  budget.target_relative_residual = 1e-8;
  const NewtonRun uncapped = runWith(problem, withLinearSolver(LinearSolverKind::kConjugateGradient, 100000, 1e-12, false), budget);
  for (bool line_search : {false, true}) {
    SCOPED_TRACE(line_search ? "with line search" : "without line search");
    IterationLog log;
    const NewtonRun capped =
        runWith(problem, withLinearSolver(LinearSolverKind::kConjugateGradient, 7, 1e-12, line_search), budget, &log);
    std::printf("[ measured ] CG capped at 7, line search %d: %d Newton iterations (uncapped CG %d)\n", int(line_search),
                capped.newton_iterations, uncapped.newton_iterations);
    int at_cap = 0, rows = 0;
    for (const StepRun& step : capped.steps) {
      EXPECT_EQ(step.reason, StopReason::kConverged) << stopReasonName(step.reason);
      for (size_t k = 1; k < step.rows.size(); ++k, ++rows) {
        const double used = log.value(step.rows[k], "linear_iterations");
        EXPECT_GE(used, 1.0);
        EXPECT_LE(used, 7.0);
        at_cap += used == 7.0;
        EXPECT_GT(log.value(step.rows[k], "linear_residual"), 1e-12);  // the cap, not the tolerance, ended it
      }
    }
    EXPECT_EQ(at_cap, rows);
    EXPECT_GE(capped.newton_iterations, 1.3 * uncapped.newton_iterations);
  }
}

// Linear Gauss-Seidel with SOR capped at a few sweeps (the paper's Fig. 10 runs 3 or 7).
TEST(NewtonLinearSolvers, CappedGaussSeidelRespectsTheCap) {
  const Problem problem = twistedBeam(2);
  Budget budget;
  budget.max_iterations = 400;
  budget.target_relative_residual = 1e-6;
  IterationLog log;
  const NewtonRun run = runWith(problem, withLinearSolver(LinearSolverKind::kGaussSeidel, 7, 1e-12, true), budget, &log);
  std::printf("[ measured ] Gauss-Seidel (omega 1.3) capped at 7 sweeps, line search: %d Newton iterations;%s\n",
              run.newton_iterations, historyOf(run).substr(0, 400).c_str());
  for (const StepRun& step : run.steps)
    for (size_t k = 1; k < step.rows.size(); ++k) EXPECT_EQ(log.value(step.rows[k], "linear_iterations"), 7.0);
}

// CHOLMOD's rows say one direct solve and the residual it reached.
TEST(NewtonLinearSolvers, CholmodLogsOneSolveAndItsResidual) {
  const Problem problem = twistedBeam(1);
  IterationLog log;
  const NewtonRun run = runWith(problem, NewtonOptions{}, Budget{}, &log);
  ASSERT_EQ(run.steps[0].reason, StopReason::kConverged);
  for (size_t k = 1; k < run.steps[0].rows.size(); ++k) {
    EXPECT_EQ(log.value(run.steps[0].rows[k], "linear_iterations"), 1.0);
    EXPECT_LT(log.value(run.steps[0].rows[k], "linear_residual"), 1e-8);
  }
}

// The scene's options: each bad value or combination is an InputError at its own field.
TEST(NewtonLinearSolvers, OptionsAreReadStrictly) {
  const auto make = [](const char* text) {
    return makeSolver("newton", nlohmann::json::parse(text), "scene.json", "/solver/options");
  };
  const auto options = [&](const char* text) { return dynamic_cast<const NewtonSolver&>(*make(text)).options(); };
  using Hessian = NewtonOptions::Hessian;
  EXPECT_EQ(options("{}").linear_solver, LinearSolverKind::kCholmod);
  EXPECT_EQ(options("{}").hessian, Hessian::kAuto);
  EXPECT_EQ(options(R"({"linear_solver": "cg"})").hessian, Hessian::kProjected);
  EXPECT_EQ(options(R"({"linear_solver": "gauss_seidel"})").hessian, Hessian::kProjected);
  EXPECT_EQ(options(R"({"linear_solver": "bicgstab"})").hessian, Hessian::kTrue);
  EXPECT_EQ(options(R"({"linear_solver": "lu"})").hessian, Hessian::kTrue);
  const NewtonOptions gs =
      options(R"({"linear_solver": "gauss_seidel", "linear_iterations": 3, "linear_tolerance": 1e-6, "sor_omega": 1.3,
                  "hessian": "true", "line_search": false})");
  EXPECT_EQ(gs.linear_solver, LinearSolverKind::kGaussSeidel);
  EXPECT_EQ(gs.linear_iterations, 3);
  EXPECT_EQ(gs.linear_tolerance, 1e-6);
  EXPECT_EQ(gs.sor_omega, 1.3);
  EXPECT_EQ(gs.hessian, Hessian::kTrue);
  EXPECT_EQ(options(R"({"linear_solver": "cg", "linear_iterations": 7})").linear_iterations, 7);

  struct Bad {
    const char* options;
    const char* field;
  };
  for (const Bad& bad : {
           Bad{R"({"linear_solver": "qr"})", "/solver/options/linear_solver"},
           Bad{R"({"linear_solver": 1})", "/solver/options/linear_solver"},
           Bad{R"({"linear_solver": "cg", "linear_iterations": 0})", "/solver/options/linear_iterations"},
           Bad{R"({"linear_solver": "cg", "linear_iterations": 7.5})", "/solver/options/linear_iterations"},
           Bad{R"({"linear_solver": "cg", "linear_tolerance": -1e-6})", "/solver/options/linear_tolerance"},
           Bad{R"({"linear_solver": "gauss_seidel", "sor_omega": 2.0})", "/solver/options/sor_omega"},
           Bad{R"({"linear_solver": "gauss_seidel", "sor_omega": 0})", "/solver/options/sor_omega"},
           Bad{R"({"linear_solver": "gauss_seidel", "sor_omega": "fast"})", "/solver/options/sor_omega"},
           // Options of another linear solver.
           Bad{R"({"linear_iterations": 7})", "/solver/options/linear_iterations"},
           Bad{R"({"linear_tolerance": 1e-6})", "/solver/options/linear_tolerance"},
           Bad{R"({"linear_solver": "lu", "linear_iterations": 7})", "/solver/options/linear_iterations"},
           Bad{R"({"linear_solver": "cg", "sor_omega": 1.3})", "/solver/options/sor_omega"},
           Bad{R"({"linear_solver": "bicgstab", "sor_omega": 1.3})", "/solver/options/sor_omega"},
           Bad{R"({"sor_omega": 1.3})", "/solver/options/sor_omega"},
           // "auto" has no fallback to choose from without CHOLMOD.
           Bad{R"({"linear_solver": "cg", "hessian": "auto"})", "/solver/options/hessian"},
           Bad{R"({"linear_solver": "lu", "hessian": "auto"})", "/solver/options/hessian"},
           Bad{R"({"linear_solvr": "cg"})", "/solver/options/linear_solvr"},
       }) {
    SCOPED_TRACE(bad.options);
    try {
      make(bad.options);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& error) {
      EXPECT_EQ(error.field(), bad.field) << error.what();
      EXPECT_EQ(error.file(), "scene.json");
      std::printf("[ message  ] %s\n", error.what());
    }
  }
}

}  // namespace
}  // namespace pbdlab
