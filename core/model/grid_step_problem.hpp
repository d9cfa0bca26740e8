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

#include "core/grid/grid_weights.hpp"
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

// One wall per face, in the order x-min, x-max, y-min, y-max, z-min, z-max.
struct GridWalls {
  std::array<GridWall, 6> faces{};

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
// strain (its pinned z is one too), collisions between bodies (the grid's shared nodes are the
// contact) or kinematic colliders (not embedded yet).
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
// throws (an element larger than a grid cell, naming it).
Problem makeGridStepProblem(const Problem& mesh_problem, std::shared_ptr<const GridWeights> weights,
                            const VecX& grid_masses, const GridWalls& walls);

}  // namespace pbdlab
