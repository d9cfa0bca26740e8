// Cook's membrane in plane strain (docs/validation.md, "Cook's membrane"): the trapezoid
// (0, 0), (48, 44), (48, 60), (0, 44) (mm), clamped on its left edge (x = 0), a uniform
// vertical dead shear traction on its right edge (x = 48), solved by Newton on structured
// triangle meshes of n x n cells (meshes/quadrilateral_mesh.hpp). The tip's vertical
// displacement (the corner (48, 60)) must converge under refinement: the differences between
// successive meshes shrink. The full study (4 ... 128 cells per side, with the Richardson
// extrapolation of the finest; 12 s) is compiled only for the full tier
// (cmake -DPBDLAB_FULL_TESTS=ON).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "core/model/problem.hpp"
#include "meshes/quadrilateral_mesh.hpp"
#include "tests/support/newton_solve.hpp"

namespace pbdlab {
namespace {

// The compressible plane strain variant of B. Mueller's thesis (2015; docs/validation.md):
// a neo-Hookean solid with E = 200, nu = 0.35, traction 4 per unit (reference) length of the
// right edge (total 64 on its 16 mm). pbdlab's neo_hookean (PBNG eq. 8) with the matched
// mapping has that small-strain response; its large-strain volumetric part differs from the
// classical log J form.
MaterialSpec cookMaterial(MaterialModel model = MaterialModel::kNeoHookean) {
  MaterialSpec spec;
  spec.model = model;
  spec.youngs_modulus = 200.0;
  spec.poisson_ratio = 0.35;
  spec.mapping = LameMapping::kMatchedToLinear;
  spec.density = 1e-9;
  return spec;
}

struct CookResult {
  double tip_uy = 0.0;
  int nodes = 0;
};

CookResult solveCook(int n, const MaterialSpec& material, double traction = 4.0, int load_steps = 4) {
  QuadrilateralRecipe recipe;
  recipe.corners = {{{0.0, 0.0}, {48.0, 44.0}, {48.0, 60.0}, {0.0, 44.0}}};
  recipe.cells = {n, n};
  Problem problem;
  problem.mesh = makeQuadrilateralMesh(recipe);
  problem.material = material;
  problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
  Load shear;
  shear.kind = Load::Kind::kTraction;
  shear.node_set = "x-max";
  shear.value = Vec3(0.0, traction, 0.0);
  shear.schedule = piecewiseLinearSchedule({{0.0, 0.0}, {1.0, 1.0}});
  problem.loads = {shear};
  problem.time = {Integrator::kQuasistatic, 1.0 / load_steps, load_steps};
  problem.finalize("Cook's membrane");
  int tip = -1;
  for (int i = 0; i < problem.numNodes(); ++i)
    if ((problem.mesh.restPosition(i) - Vec3(48.0, 60.0, 0.0)).norm() < 1e-9) tip = i;
  EXPECT_GE(tip, 0);
  const Positions x = test::solveWithNewton(problem, 1e-10);
  return {x[3 * tip + 1] - 60.0, problem.numNodes()};
}

// Differences between successive meshes and the observed order p = log2(d_k / d_{k+1}).
void printStudy(const char* title, const std::vector<int>& cells, const std::vector<CookResult>& results) {
  std::printf("[ measured ] %s\n", title);
  std::printf("[ measured ]   cells  nodes   tip u_y (mm)    difference     order\n");
  for (size_t k = 0; k < results.size(); ++k) {
    const double d = k > 0 ? results[k].tip_uy - results[k - 1].tip_uy : 0.0;
    const double p = k > 1 ? std::log2(std::abs(results[k - 1].tip_uy - results[k - 2].tip_uy) / std::abs(d)) : 0.0;
    std::printf("[ measured ]   %5d %6d  %.9f  %+.3e   %s\n", cells[k], results[k].nodes, results[k].tip_uy, d,
                k > 1 ? std::to_string(p).c_str() : "");
  }
  if (results.size() >= 3) {
    const size_t k = results.size() - 1;
    const double d1 = results[k - 1].tip_uy - results[k - 2].tip_uy, d2 = results[k].tip_uy - results[k - 1].tip_uy;
    const double p = std::log2(d1 / d2);
    const double extrapolated = results[k].tip_uy + d2 / (std::pow(2.0, p) - 1.0);
    std::printf("[ measured ]   Richardson from the three finest: order %.3f, tip u_y -> %.6f mm (finest %.3f%% from it)\n",
                p, extrapolated, 100.0 * std::abs(results[k].tip_uy - extrapolated) / std::abs(extrapolated));
  }
}

// Fast tier: 4, 8, 16, 32 cells per side; each refinement changes the tip displacement less
// than the one before, by at least a factor 1.5 (measured: see docs/validation.md), and the
// membrane bends up (u_y > 0, the load's direction).
TEST(CooksMembrane, TipDisplacementConvergesUnderRefinement) {
  const std::vector<int> cells = {4, 8, 16, 32};
  std::vector<CookResult> results;
  for (int n : cells) results.push_back(solveCook(n, cookMaterial()));
  printStudy("Cook's membrane, plane strain, neo_hookean E 200 nu 0.35, traction 4", cells, results);
  for (const CookResult& r : results) EXPECT_GT(r.tip_uy, 0.0);
  // Richardson from 8, 16, 32 (measured 6.1449) against the extrapolation of 32, 64, 128
  // (6.1453, the full tier's ConvergenceStudy) and B. Mueller's 6.1469 (a mixed formulation with the
  // classical log J neo-Hookean, so not the same discrete or even continuous problem; the
  // match within 0.03% says the models hardly differ at these strains). Gate: 1%.
  const double d1 = results[2].tip_uy - results[1].tip_uy, d2 = results[3].tip_uy - results[2].tip_uy;
  const double extrapolated = results[3].tip_uy + d2 / (d1 / d2 - 1.0);
  EXPECT_NEAR(extrapolated, 6.14529, 0.01 * 6.14529);
  EXPECT_NEAR(extrapolated, 6.1469, 0.01 * 6.1469);
  for (size_t k = 2; k < results.size(); ++k) {
    const double before = std::abs(results[k - 1].tip_uy - results[k - 2].tip_uy);
    const double now = std::abs(results[k].tip_uy - results[k - 1].tip_uy);
    EXPECT_LT(1.5 * now, before) << cells[k] << " cells";
  }
}

#ifdef PBDLAB_FULL_TESTS
// The study of docs/validation.md: 4 ... 128 cells per side, neo_hookean and (for comparison
// of the models' large-strain parts) stable_neo_hookean. Gates: each refinement changes the tip
// less than the one before, and for neo_hookean the Richardson extrapolation of 32/64/128
// (measured 6.14529) stays within 0.1% of the value docs/validation.md reports.
TEST(CooksMembrane, ConvergenceStudy) {
  const std::vector<int> cells = {4, 8, 16, 32, 64, 128};
  for (MaterialModel model : {MaterialModel::kNeoHookean, MaterialModel::kStableNeoHookean}) {
    std::vector<CookResult> results;
    for (int n : cells) results.push_back(solveCook(n, cookMaterial(model)));
    printStudy(materialModelName(model).c_str(), cells, results);
    for (size_t k = 2; k < results.size(); ++k)
      EXPECT_LT(std::abs(results[k].tip_uy - results[k - 1].tip_uy),
                std::abs(results[k - 1].tip_uy - results[k - 2].tip_uy))
          << cells[k] << " cells";
    if (model == MaterialModel::kNeoHookean) {
      const size_t k = results.size() - 1;
      const double d1 = results[k - 1].tip_uy - results[k - 2].tip_uy, d2 = results[k].tip_uy - results[k - 1].tip_uy;
      const double extrapolated = results[k].tip_uy + d2 / (d1 / d2 - 1.0);
      EXPECT_NEAR(extrapolated, 6.14529, 1e-3 * 6.14529);
    }
  }
}
#endif

}  // namespace
}  // namespace pbdlab
