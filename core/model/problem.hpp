#pragma once
// A Problem is everything a solver needs and nothing of a solver (DESIGN.md "The shared
// model"): bodies (mesh, material, density, per-element data), the energy terms over them
// and between them, Dirichlet node sets with their motion, the external loads (gravity,
// surface tractions and point loads, each a function of time: core/model/loads.hpp) and the time
// stepping.
// Build one with a scene file (validation/scene.hpp) or by hand, then call finalize().
//
// Bodies: either set `mesh` and `material` (one body, every single-body scene) or fill
// `bodies`. finalize() concatenates the bodies' nodes into `mesh`, in body order, so DOFs are
// concatenated; with several bodies their node sets are named "body/set".
// Solid meshes (and 2D triangle meshes, in plane strain) get the elastic term; a triangle
// surface in 3D (cloth) gets the membrane term (PBNG eq. 36, fixed corotated only) and, with
// a bending stiffness, the bending term (eq. 35).
//
// Element types. A Mesh holds one element type (every mesh file and recipe is single-type), so
// the elements of a problem are kept as element blocks, one Mesh per element type present
// (elementBlocks()): each block has every node of the problem (global numbering, the combined
// rest positions and node sets) and the elements of the bodies of its type, in body order.
//  - All bodies of one type (every scene before mixed types, and still the common case): one
//    block, and it IS `mesh`: `mesh.elements` holds every element, as it always did, so every
//    single-type consumer works unchanged.
//  - Bodies of different solid types (e.g. a tet4 body and a hex8 body, or tet10 and tet4):
//    several blocks, one elastic term per block (terms() lists them all, so the yardstick,
//    Newton's Hessian, explicit relaxation and PBNG see every element), masses lumped per
//    block and summed (= per body, concatenated). `mesh` then holds the nodes and node sets
//    only: `mesh.elements` is EMPTY (0 rows) and `mesh.element_type` is meaningless, so that
//    no consumer reading one connectivity can silently miss the elements of a second type;
//    hasMixedElementTypes() says so, and a consumer either reads elementBlocks() (the .vtu
//    writer, samplers, measures, the run summary) or refuses the problem naming the reason
//    (solvers through rejectionReason(), e.g. the XPBD family and FP-PXPBD, which build their
//    constraints from the one elastic term elasticEnergy() returns; it throws for a mixed
//    problem). Mixing a triangle body (cloth, plane strain) with another type is refused.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "core/fem/mesh.hpp"
#include "core/materials/material.hpp"
#include "core/model/boundary_motion.hpp"
#include "core/model/loads.hpp"
#include "core/terms/collider_term.hpp"
#include "core/terms/elastic_energy.hpp"
#include "core/terms/energy_term.hpp"
#include "core/terms/weak_constraint_term.hpp"

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
  // Backward Euler: the frame time. Quasistatic: the load step in the same time units that
  // boundary motions use (t_n = n dt); it does not enter the equations.
  double dt = 1.0;
  int num_steps = 1;  // frames
  // Each frame is `substeps` steps of dt / substeps (high-order paper Alg. 1; PBNG's
  // collision examples): the yardstick judges every substep; outputs are per frame.
  int substeps = 1;
  double substepDt() const { return dt / substeps; }
  int numSubsteps() const { return num_steps * substeps; }
};

// How the continuous problem is discretized beyond the mesh: quadrature and mass lumping.
// What a triangle mesh is: kAuto takes a mesh with every z = 0 as 2D plane strain and any
// other as a cloth surface in 3D; a flat cloth lying in z = 0 must say kMembrane.
enum class TriangleModel { kAuto, kPlaneStrain, kMembrane };
std::string triangleModelName(TriangleModel model);

struct Discretization {
  int quadrature_degree = 0;  // <= 0: the element type's stiffness degree (ReferenceElement)
  MassLumping mass_lumping = MassLumping::kEqualShare;  // PXPBD eq. 50, or HRZ
  TriangleModel triangles = TriangleModel::kAuto;
};

struct Body {
  std::string name;  // names its node sets "name/set" in a problem of several bodies
  Mesh mesh;
  MaterialSpec material;
  // Optional per-element material data (e.g. a muscle's fibre directions; one per element).
  std::vector<MaterialPointData> element_data;
  // Optional activation a(t) of the material (a muscle); null: element_data's activation.
  ActivationSchedule activation;
  // A triangle surface in 3D (cloth): k_b of the dihedral bending term (PBNG eq. 35); 0: none.
  double bending_stiffness = 0.0;
};

// Binds every node of `node_set` to body `body` with weak constraints: each node's rest
// position is located in an element of that body, and the node is tied to the point of the
// body there (PBNG eq. 19 with w_a = 1 at the node and w_b the element's shape functions at
// the located point). The two blocks of PBNG Fig. 17 are bound this way.
struct NodeSetBinding {
  std::string node_set;  // a node set of the combined mesh, e.g. "top/y-min"
  std::string body;      // the body the nodes are bound to
  double k_n = 0.0;
  double k_t = 0.0;
  Vec3 normal = Vec3::UnitX();
  // Each node at rest position X is bound to the body's point at X + offset (zero: the point
  // where the node lies). A non-zero offset starts the springs stretched across a gap (PBNG
  // Fig. 17's iteration 0); the spring's rest length is zero either way.
  Vec3 offset = Vec3::Zero();
};

// Vertex-triangle collisions between bodies, detected at the start of each step
// (core/model/collision_detection.hpp): anisotropic weak constraints as in PBNG §11.2
// (k_n = 1e8, k_t = 0 there).
struct CollisionSettings {
  bool enabled = false;
  double k_n = 1e8;
  double k_t = 0.0;
};

class CollisionDetector;
class GridStepProblemBuilder;  // core/model/grid_step_problem.cpp

class Problem {
 public:
  // Single-body shorthand (see above); after finalize(), `mesh` is the combined mesh.
  Mesh mesh;
  MaterialSpec material;
  std::vector<Body> bodies;
  std::vector<WeakConstraint> weak_constraints;
  std::vector<NodeSetBinding> bindings;  // turned into weak_constraints by finalize()
  std::vector<Collider> colliders;       // kinematic, acting on every node
  CollisionSettings collisions;          // between bodies, created each step
  Discretization discretization;
  Vec3 gravity = Vec3::Zero();
  // Dead surface tractions and point loads, each scaled by its schedule (core/model/loads.hpp).
  std::vector<Load> loads;
  std::vector<DirichletCondition> dirichlet;
  TimeStepping time;
  // The state at t = 0 is the rest shape mapped by x0 = p + A (X - p), then the boundary
  // values at t = 0 (identity by default). A with det A < 0 starts every element inverted
  // (the high-order paper's flattened bunny, Fig. 11).
  Mat3 initial_map = Mat3::Identity();
  Vec3 initial_map_fixed_point = Vec3::Zero();
  // The velocity at t = 0 of the node at x0: v0 = u + w x (x0 - c), a uniform velocity u plus
  // a rigid spin w about the point c (the multi-layer paper's spinning box, Fig. 9a), zero on
  // prescribed DOFs. Zero by default; backward Euler only (a quasistatic step has none).
  Vec3 initial_velocity = Vec3::Zero();
  Vec3 initial_angular_velocity = Vec3::Zero();
  Vec3 initial_spin_center = Vec3::Zero();
  // The spin's velocity as the chord of one step's rotation instead of the tangent w x r:
  // v0 = (r - R(-h w) r) / h, r = x0 - c, h = the step's dt, i.e. the velocity a rigid step of
  // the rotation h w would have left (the multi-layer authors' setRigidMotion, Fig. 9a).
  bool initial_spin_chord = false;

  // Validates and precomputes (bodies, masses, free DOFs, external forces, energy terms).
  // Throws InputError naming `source` (the scene file) and the offending field.
  void finalize(const std::string& source = "<problem>");

  // --- available after finalize() ---
  int numNodes() const { return mesh.numNodes(); }
  int numDofs() const { return 3 * mesh.numNodes(); }
  int numBodies() const { return static_cast<int>(bodies.size()); }
  // The first global node of body b (nodes of body b: [bodyFirstNode(b), bodyFirstNode(b+1))).
  int bodyFirstNode(int b) const { return body_first_node_[b]; }
  // Every energy term of the potential: the elastic terms (one per element block) or membrane
  // and bending terms first, then weak constraints, then colliders' penalties.
  const std::vector<std::shared_ptr<const EnergyTerm>>& terms() const { return terms_; }
  const std::vector<std::shared_ptr<const ColliderTerm>>& colliderTerms() const { return collider_terms_; }
  // Null unless collisions are enabled; the step objective asks it for each step's contacts.
  const CollisionDetector* collisionDetector() const { return collision_detector_.get(); }
  // The element blocks, one per element type present, in order of first appearance in the
  // bodies (see above). One block (the combined `mesh` itself) unless the types differ.
  const std::vector<std::shared_ptr<const Mesh>>& elementBlocks() const { return element_blocks_; }
  // True when the bodies have different element types: `mesh.elements` is empty then.
  bool hasMixedElementTypes() const { return element_blocks_.size() > 1; }
  // Elements of every block.
  int numElements() const;
  // The element type's name, or the blocks' joined by '+' ("tet4+hex8") for mixed types.
  std::string elementTypesName() const;
  // The elastic terms of solid (and plane strain) bodies, one per element block; a cloth
  // problem has none.
  const std::vector<std::shared_ptr<const ElasticEnergy>>& elasticTerms() const { return elastic_terms_; }
  bool hasElasticEnergy() const { return !elastic_terms_.empty(); }
  // THE elastic term of a single-type problem. Throws std::logic_error for a problem without
  // one (a cloth) and for a mixed problem (several terms: use elasticTerms()).
  const ElasticEnergy& elasticEnergy() const;
  const VecX& nodeMasses() const { return node_masses_; }
  const VecX& dofMasses() const { return dof_masses_; }  // node mass repeated 3 times
  // f_ext(t) = m_i g (lumped gravity) + sum_k s_k(t) f_k (the loads' nodal forces), all DOFs.
  // A step reads it once, at its own time, from its StepObjective (core/solver/yardstick.hpp).
  VecX externalForce(double t) const;
  // The loads as nodal forces at s = 1, in the order of `loads` (precomputed by finalize()).
  const std::vector<NodalLoad>& nodalLoads() const { return nodal_loads_; }
  const std::vector<int>& freeDofs() const { return free_dofs_; }
  const std::vector<int>& fixedDofs() const { return fixed_dofs_; }
  bool isFixedDof(int dof) const { return is_fixed_[dof] != 0; }
  bool isPlaneStrain() const { return elastic_terms_.size() == 1 && elastic_terms_[0]->isPlaneStrain(); }
  // Sets every prescribed DOF of x to its value at time t.
  void applyDirichlet(Positions& x, double t) const;
  // The time at the end of substep `substep` (0 = the start of the run).
  double timeAt(int substep) const { return substep * time.substepDt(); }
  // The time step of one substep (backward Euler's dt in the yardstick).
  double stepDt() const { return time.substepDt(); }

 private:
  // The grid step's Problem (core/model/grid_step_problem.hpp) is built from a mesh problem's
  // terms, loads and the grid's masses, not from bodies: it sets what finalize() computes.
  friend class GridStepProblemBuilder;

  void combineBodies(const std::string& source);
  void bindNodeSets(const std::string& source);
  void buildLoads(const std::string& source);

  std::shared_ptr<const Mesh> shared_mesh_;
  std::vector<std::shared_ptr<const Mesh>> element_blocks_;
  std::vector<std::vector<int>> block_bodies_;  // the bodies of each block, in body order
  std::vector<std::shared_ptr<const ElasticEnergy>> elastic_terms_;
  std::vector<std::shared_ptr<const EnergyTerm>> terms_;
  std::vector<std::shared_ptr<const ColliderTerm>> collider_terms_;
  std::shared_ptr<const CollisionDetector> collision_detector_;
  std::vector<int> body_first_node_;
  VecX node_masses_;
  VecX dof_masses_;
  VecX gravity_force_;
  std::vector<NodalLoad> nodal_loads_;
  std::vector<int> free_dofs_;
  std::vector<int> fixed_dofs_;
  std::vector<char> is_fixed_;
  // Per prescribed DOF: the condition that prescribes it (-1: pinned z of plane strain).
  std::vector<int> dof_condition_;
};

}  // namespace pbdlab
