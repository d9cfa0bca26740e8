#pragma once
// The block of the PXPBD and PBNG experiments (PXPBD §5, PBNG §11.7) on any mesh: left face
// (x-min) clamped, falling under gravity (0, -9.8, 0; another `gravity` if given), E = 1000,
// nu = 0.3, rho = 10, one body of `model`. The solver tests and benchmarks of every position-based family build it here,
// not each its own copy. The problem is finalized.
#include "core/model/problem.hpp"

namespace pbdlab::test {

inline Problem clampedBlock(Mesh mesh, MaterialModel model, Integrator integrator, double dt, int steps,
                            const std::string& name = "clamped block", const Vec3& gravity = Vec3(0.0, -9.8, 0.0)) {
  Problem problem;
  problem.mesh = std::move(mesh);
  problem.material.model = model;
  problem.material.youngs_modulus = 1000.0;
  problem.material.poisson_ratio = 0.3;
  problem.material.density = 10.0;
  problem.gravity = gravity;
  problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
  problem.time = {integrator, dt, steps, 1};
  problem.finalize(name);
  return problem;
}

}  // namespace pbdlab::test
