#pragma once
// A Problem is everything a solver needs and nothing of a solver: the mesh, materials,
// Dirichlet node sets with their motion, gravity and the integrator (DESIGN.md, "The shared
// model"). Build one with a scene file (core/scene.hpp) or by hand, then call finalize().
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "core/boundary_motion.hpp"
#include "core/elastic_energy.hpp"
#include "core/material.hpp"
#include "core/mesh.hpp"

namespace pbdlab {

struct DirichletCondition {
  std::string node_set;                         // name in mesh.node_sets
  std::array<bool, 3> components{true, true, true};  // which of x, y, z are prescribed
  BoundaryMotion motion;
};

enum class Integrator { kQuasistatic, kBackwardEuler };
std::string integratorName(Integrator integrator);

struct TimeStepping {
  Integrator integrator = Integrator::kQuasistatic;
  // Backward Euler: the time step. Quasistatic: the load step in the same time units that
  // boundary motions use (t_n = n dt); it does not enter the equations.
  double dt = 1.0;
  int num_steps = 1;
};

// How the continuous problem is discretized beyond the mesh: quadrature and mass lumping.
struct Discretization {
  int quadrature_degree = 0;  // <= 0: the element type's stiffness degree (ReferenceElement)
  MassLumping mass_lumping = MassLumping::kEqualShare;  // PXPBD eq. 50, or HRZ
};

class Problem {
 public:
  Mesh mesh;
  MaterialSpec material;  // one material for the whole mesh
  Discretization discretization;
  Vec3 gravity = Vec3::Zero();
  std::vector<DirichletCondition> dirichlet;
  TimeStepping time;

  // Validates and precomputes (masses, free DOFs, external forces, element data). Throws
  // InputError naming `source` (the scene file) and the offending field.
  void finalize(const std::string& source = "<problem>");

  // --- available after finalize() ---
  int numNodes() const { return mesh.numNodes(); }
  int numDofs() const { return 3 * mesh.numNodes(); }
  const ElasticEnergy& elasticEnergy() const { return *elastic_; }
  const VecX& nodeMasses() const { return node_masses_; }
  const VecX& dofMasses() const { return dof_masses_; }  // node mass repeated 3 times
  const VecX& externalForce() const { return external_force_; }  // lumped gravity m_i g
  const std::vector<int>& freeDofs() const { return free_dofs_; }
  const std::vector<int>& fixedDofs() const { return fixed_dofs_; }
  bool isFixedDof(int dof) const { return is_fixed_[dof] != 0; }
  // Sets every prescribed DOF of x to its value at time t.
  void applyDirichlet(Positions& x, double t) const;
  double timeAt(int step) const { return step * time.dt; }

 private:
  std::shared_ptr<const ElasticEnergy> elastic_;
  VecX node_masses_;
  VecX dof_masses_;
  VecX external_force_;
  std::vector<int> free_dofs_;
  std::vector<int> fixed_dofs_;
  std::vector<char> is_fixed_;
  // Per prescribed DOF: the condition that prescribes it (the last one wins).
  std::vector<int> dof_condition_;
};

}  // namespace pbdlab
