#pragma once
// The Problem of one step of the grid-based scheme (PXPBD §5.5 after Jiang et al. 2015;
// DESIGN.md "The shared model"; docs/grid.md): its unknowns are the positions q of every node
// of a background grid, the mesh follows x = W q with W taken at the step's start, and the
// yardstick is backward Euler's residual in q. Built anew each step (W and the grid masses
// change) by core/solver/grid_stepper.hpp from a finalized mesh problem:
//  - nodes: the grid's nodes (a Mesh without elements whose rest positions are the nodes'), so
//    q^n = the rest positions: the grid starts every step undeformed;
//  - masses: the APIC grid masses m_i = sum_p w_ip m_p (core/grid/apic_transfer.hpp);
//  - f_ext(t) = W^T f_ext,mesh(t): gravity m_i g, each load's nodal forces scattered by W with
//    its own schedule;
//  - terms: one EmbeddedTerm per term of the mesh problem (core/terms/embedded_term.hpp);
//  - prescribed DOFs (held at the node's position, i.e. at rest): nodes without mass (no vertex
//    weights them: nothing moves them), and the grid walls below.
// The same time stepping as the mesh problem (backward Euler); the caller passes the mesh
// problem's step index to StepObjective so that t and dt match. The result has no bodies and no
// element blocks: solvers that build their constraints from a solid body's elements (the XPBD
// family, FP-PXPBD, multi-layer XPBD, MPBNG) refuse it through rejectionReason.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "core/grid/grid_weights.hpp"
#include "core/model/boundary_motion.hpp"
#include "core/model/problem.hpp"

namespace pbdlab {

// A wall on one face of the grid's box: the nodes of the `thickness` node layers nearest the
// face (distance < thickness h from it; 1 = the face's own nodes) are prescribed at rest.
// Sticky: every component (no-slip); slip: the normal component only (free tangential motion).
struct GridWall {
  enum class Kind { kNone, kSticky, kSlip };
  Kind kind = Kind::kNone;
  int thickness = 1;
};

// A moving wall inside the grid: the grid nodes in a box that a rigid motion carries, every
// component prescribed to follow that motion (a twisted or pulled end of a bar, PXPBD Fig. 10).
// The box is given at the motion's start (its rest frame); at time t the wall is the box moved
// by motion(t). The grid starts every step undeformed, so a step from t_n to t_n+1 prescribes
// its nodes X_i inside motion(t_n)(box) at A X_i, A = motion(t_n+1) o motion(t_n)^-1: the
// motion's increment over the step, applied where the material is now.
struct GridMovingWall {
  std::string name;
  Vec3 box_min = Vec3::Zero();
  Vec3 box_max = Vec3::Zero();
  BoundaryMotion motion;
};

// One wall per face, in the order x-min, x-max, y-min, y-max, z-min, z-max, and the moving
// walls (applied after the faces: a node in both follows its moving wall).
struct GridWalls {
  std::array<GridWall, 6> faces{};
  std::vector<GridMovingWall> moving;

  // "x-min", ... "z-max" (the mesh's node-set names) <-> 0..5; throws std::invalid_argument
  // for another name, listing the six.
  static int faceIndex(const std::string& name);
  static std::string faceName(int face);
  GridWall& operator[](const std::string& face) { return faces[static_cast<size_t>(faceIndex(face))]; }
};
std::string gridWallKindName(GridWall::Kind kind);  // "none", "sticky", "slip"
GridWall::Kind parseGridWallKind(const std::string& name);  // throws std::invalid_argument

// Why the grid step cannot take `mesh_problem`, or "" (one sentence; GridStepper throws it as
// std::invalid_argument): a problem not finalized, quasistatic, with Dirichlet conditions (a
// prescribed vertex is a constraint on the grid nodes that interpolate it, not a DOF), plane
// strain (its pinned z is one too) or collisions between bodies (the grid's shared nodes are the
// contact). Kinematic colliders are taken as grid boundary conditions (colliderGridNodes).
std::string gridStepRejection(const Problem& mesh_problem);

// Grid masses below this fraction of the largest are taken as none: a node that a vertex
// weights by round-off only (a vertex on a grid plane, weight ~1e-16) would add a free DOF
// whose mass and stiffness the factorization cannot resolve. Its momentum (that fraction of a
// vertex's) is dropped.
constexpr double kGridMasslessFraction = 1e-12;

// The grid step's Problem (above). `weights` are the mesh vertices' (the mesh problem's node
// numbering), `grid_masses` one per grid node (P2G's). Throws std::invalid_argument for a
// rejected mesh problem (gridStepRejection), sizes that do not match, a negative or
// non-finite mass, a wall thinner than 1 layer or thicker than the grid, and what EmbeddedTerm
// throws (an element larger than a grid cell, naming it). `step` is the (sub)step the problem
// advances from (t_n = mesh_problem.timeAt(step)): the moving walls' increment is that step's.
Problem makeGridStepProblem(const Problem& mesh_problem, std::shared_ptr<const GridWeights> weights,
                            const VecX& grid_masses, const GridWalls& walls, int step = 0);

// A kinematic collider of the mesh problem acts on the grid, as a wall does (Jiang et al. 2015
// handle collision objects on grid nodes): the grid nodes strictly inside it (signed distance
// phi(X_i) < 0 at the node's rest position, the step's q^n) are held at rest, every component
// (sticky; the shapes' arbitrary normals are not DOF components, so no slip). A body then stops
// where its vertices' stencils reach those nodes: within one cell (two for the quadratic kernel)
// of the surface, the grid's resolution of the contact. The mesh problem's penalty term of the
// collider is not embedded. The nodes, ascending:
std::vector<int> colliderGridNodes(const BackgroundGrid& grid, const Collider& collider);

// The rigid map x -> R x + p of a motion at time t (BoundaryMotion::positionAt is rigid: its
// stages translate and rotate), and the increment from t0 to t1 as a motion whose positionAt at
// t1 is motion(t1) o motion(t0)^-1 and at t0 the identity (one rotation about the origin, then
// a translation, both ramped over [t0, t1]).
struct RigidMap {
  Mat3 rotation = Mat3::Identity();
  Vec3 translation = Vec3::Zero();
  Vec3 operator()(const Vec3& x) const { return rotation * x + translation; }
  Vec3 inverse(const Vec3& y) const { return rotation.transpose() * (y - translation); }
};
RigidMap rigidMapAt(const BoundaryMotion& motion, double t);
BoundaryMotion motionIncrement(const BoundaryMotion& motion, double t0, double t1);

// The grid nodes inside moving wall `wall` at time t (nodes X_i with motion(t)^-1 X_i in the
// box, closed up to 1e-9 of the spacing), ascending.
std::vector<int> movingWallNodes(const BackgroundGrid& grid, const GridMovingWall& wall, double t);

}  // namespace pbdlab
