// The assembled sparse Hessian over the free DOFs is the derivative of the assembled
// gradient (central differences), on every element type, quasistatic and backward Euler.
#include <gtest/gtest.h>

#include <random>

#include "meshes/box_mesh.hpp"
#include "reference/hessian_assembly.hpp"

namespace pbdlab {
namespace {

struct Case {
  BoxFamily family;
  int order;
};

class HessianAssembly : public ::testing::TestWithParam<Case> {};

TEST_P(HessianAssembly, MatchesFiniteDifferencesOfTheGradient) {
  for (Integrator integrator : {Integrator::kQuasistatic, Integrator::kBackwardEuler}) {
    SCOPED_TRACE(integratorName(integrator));
    Problem problem;
    BoxMeshRecipe recipe;
    recipe.size = Vec3(1.0, 0.5, 0.5);
    recipe.cells = {2, 1, 1};
    recipe.family = GetParam().family;
    recipe.order = GetParam().order;
    problem.mesh = makeBoxMesh(recipe);
    problem.material.model = MaterialModel::kStableNeoHookean;
    problem.material.youngs_modulus = 1e3;
    problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
    problem.time = {integrator, 0.05, 1};
    problem.finalize("hessian assembly");
    const Positions x0 = problem.mesh.restPositionsFlat();
    const StepObjective objective(problem, x0, VecX::Zero(x0.size()), 0);
    std::mt19937 rng(13);
    std::normal_distribution<double> normal(0.0, 0.05);
    Positions x = x0;
    for (int dof : problem.freeDofs()) x[dof] += normal(rng);

    FreeDofHessian assembler(objective);
    const Eigen::MatrixXd lower = Eigen::MatrixXd(assembler.assemble(objective, x, HessianKind::kTrue));
    const Eigen::MatrixXd H = lower.selfadjointView<Eigen::Lower>();
    const double h = 1e-6;
    Eigen::MatrixXd H_fd(H.rows(), H.cols());
    VecX gp, gm;
    for (int k = 0; k < assembler.numFree(); ++k) {
      const int dof = problem.freeDofs()[k];
      Positions xp = x, xm = x;
      xp[dof] += h;
      xm[dof] -= h;
      objective.gradient(xp, gp);
      objective.gradient(xm, gm);
      H_fd.col(k) = (assembler.restrictToFree(gp) - assembler.restrictToFree(gm)) / (2 * h);
    }
    ASSERT_GT(H.norm(), 0.0);
    EXPECT_LT((H - H_fd).norm(), 1e-6 * H.norm());
  }
}

INSTANTIATE_TEST_SUITE_P(EveryType, HessianAssembly,
                         ::testing::Values(Case{BoxFamily::kFiveTet, 1}, Case{BoxFamily::kFiveTet, 2},
                                           Case{BoxFamily::kFiveTet, 3}, Case{BoxFamily::kHex, 1},
                                           Case{BoxFamily::kPrism, 1}, Case{BoxFamily::kPyramid, 1}),
                         [](const auto& info) {
                           return boxFamilyName(info.param.family) + "_order" + std::to_string(info.param.order);
                         });

}  // namespace
}  // namespace pbdlab
