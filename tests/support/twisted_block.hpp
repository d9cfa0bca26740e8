#pragma once
// PBNG §11.1's stretching block, small: a unit cube of 4x4x4 five-tet cells (125 nodes, 320
// tets), x-min clamped, x-max pulled out by 0.2 and turned by `degrees` about the x axis,
// quasistatic, one load step, no gravity; E = 1e5, nu = 0.3, rho = 10. The node-solver tests
// (PBNG, VBD) build it here. The problem is finalized.
#include "core/model/problem.hpp"
#include "meshes/box_mesh.hpp"

namespace pbdlab::test {

inline Problem twistedBlock(MaterialModel model = MaterialModel::kFixedCorotated, double degrees = 60.0,
                            int order = 1) {
  constexpr double kPi = 3.14159265358979323846;
  BoxMeshRecipe box;
  box.cells = {4, 4, 4};
  box.order = order;
  Problem problem;
  problem.mesh = makeBoxMesh(box);
  problem.material.model = model;
  problem.material.youngs_modulus = 1e5;
  problem.material.poisson_ratio = 0.3;
  problem.material.density = 10.0;
  problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
  BoundaryMotion motion;
  MotionStage pull;
  pull.kind = MotionStage::Kind::kTranslate;
  pull.t_end = 1.0;
  pull.translation = Vec3(0.2, 0.0, 0.0);
  MotionStage twist;
  twist.kind = MotionStage::Kind::kRotate;
  twist.t_end = 1.0;
  twist.axis_point = Vec3(1.0, 0.5, 0.5);
  twist.axis_direction = Vec3::UnitX();
  twist.angle = degrees * kPi / 180.0;
  motion.stages = {pull, twist};
  problem.dirichlet.push_back({"x-max", {true, true, true}, motion});
  problem.time = {Integrator::kQuasistatic, 1.0, 1, 1};
  problem.finalize("twisted block");
  return problem;
}

// The twisted block with every node prescribed but the one nearest the cube's centre
// (`free_node`): the others move with the twist (x-max's motion, pulled 0.05 instead of 0.2),
// gravity on, one step of 0.01 s. A node solver's first sweep is then one restricted step.
inline Problem oneFreeNodeBlock(const Problem& twisted, Integrator integrator, int& free_node) {
  const Mesh& mesh = twisted.mesh;
  free_node = -1;
  double best = 1e300;
  for (int i = 0; i < mesh.numNodes(); ++i) {
    const double d = (mesh.restPosition(i) - Vec3(0.5, 0.5, 0.5)).norm();
    if (d < best) best = d, free_node = i;
  }
  Problem one;
  one.mesh = mesh;
  std::vector<int> others;
  for (int i = 0; i < mesh.numNodes(); ++i)
    if (i != free_node) others.push_back(i);
  one.mesh.node_sets["others"] = others;
  one.material = twisted.material;
  one.gravity = Vec3(0.0, -9.8, 0.0);
  BoundaryMotion motion = twisted.dirichlet[1].motion;
  motion.stages[0].translation = Vec3(0.05, 0.0, 0.0);
  one.dirichlet.push_back({"others", {true, true, true}, motion});
  one.time = {integrator, 0.01, 1, 1};
  one.finalize("one free node");
  return one;
}

}  // namespace pbdlab::test
