#pragma once
// Two bars of 8x2x2 five-tet cells (2 x 0.5 x 0.5 m) side by side at z = 0 and z = 1, the first
// fixed corotated and the second of `second`'s model, each clamped at its x-min face, under
// gravity; E = 1000, nu = 0.3, rho = 10. One elastic term of two materials: the lane kernels'
// mixed form (closed form of kind kNone). The problem is finalized.
#include "core/model/problem.hpp"
#include "meshes/box_mesh.hpp"

namespace pbdlab::test {

inline Problem mixedBars(MaterialModel second, Integrator integrator, double dt) {
  Problem problem;
  const MaterialModel models[] = {MaterialModel::kFixedCorotated, second};
  for (int b = 0; b < 2; ++b) {
    BoxMeshRecipe box;
    box.origin = Vec3(0.0, 0.0, b * 1.0);
    box.size = Vec3(2.0, 0.5, 0.5);
    box.cells = {8, 2, 2};
    Body body;
    body.name = b == 0 ? "corotated" : "second";
    body.mesh = makeBoxMesh(box);
    body.material.model = models[b];
    body.material.youngs_modulus = 1000.0;
    body.material.poisson_ratio = 0.3;
    body.material.density = 10.0;
    problem.dirichlet.push_back({body.name + "/x-min", {true, true, true}, {}});
    problem.bodies.push_back(std::move(body));
  }
  problem.gravity = Vec3(0.0, -9.8, 0.0);
  problem.time = {integrator, dt, 1, 1};
  problem.finalize("mixed bars");
  return problem;
}

}  // namespace pbdlab::test
