#pragma once
// External loads besides gravity (DESIGN.md "The shared model": gravity, dead surface
// tractions on named boundaries and point loads, each a function of time, all in f_ext).
//
//  - A surface traction is a DEAD load given per REFERENCE area (the first Piola traction
//    t = P N): it neither follows the surface's rotation nor its change of area. On a
//    boundary (a node set), the loaded faces are the element faces that belong to exactly
//    one element (over every element block) and whose corner nodes all lie in the set; the
//    consistent nodal forces are f_a = t ∫_Γ N_a dA_ref. In plane strain (tri3 in z = 0,
//    unit thickness) a face is a triangle's edge and dA_ref is its length times 1.
//  - A point load puts a force on every node of a node set (or its total spread equally).
//  - Each load is scaled by a schedule s(t) (core/support/time_schedule.hpp; null: 1).
// Problem::finalize() turns every load into its nodal forces at s = 1, once (NodalLoad);
// f_ext(t) = gravity + sum_k s_k(t) f_k (Problem::externalForce), computed once per step by
// the StepObjective, which is where every solver reads it.
//
// Face integration, for every element type and order, with the element's own (volume) shape
// functions: each local face is parametrized from a 2D reference face (a triangle affinely
// from its 3 corners, a quadrilateral bilinearly from its 4, a triangle's edge linearly from
// its 2) into the reference element, r(s, t); at the face's quadrature points the shape
// functions N_a(r) are evaluated (those of nodes off the face vanish there, so only the
// face's nodes are kept) and dA_ref = |dX/ds x dX/dt| ds dt with X(r(s, t)) = sum_a N_a X_a
// (curved high-order faces included). The area is unsigned: a face's orientation does not
// matter.
#include <memory>
#include <string>
#include <vector>

#include "core/fem/mesh.hpp"
#include "core/support/time_schedule.hpp"
#include "core/support/types.hpp"

namespace pbdlab {

struct Load {
  enum class Kind {
    kTraction,  // a dead surface traction on the boundary faces within `node_set`
    kPoint,     // a force on every node of `node_set`
  };
  Kind kind = Kind::kTraction;
  std::string node_set;  // the boundary (traction) or the loaded nodes (point), by name
  // kTraction: the traction, force per reference area; kPoint: the force on each node.
  // With `is_total`: the load's total force (a traction t = value / A_ref of the boundary;
  // a point load value / n on each of its n nodes).
  Vec3 value = Vec3::Zero();
  bool is_total = false;
  TimeSchedule schedule;  // s(t); null: 1
};

// A load as nodal forces at s = 1: the nodes it acts on (ascending) and the force on each.
struct NodalLoad {
  std::vector<int> nodes;
  std::vector<Vec3> forces;
  TimeSchedule schedule;
  double area = 0.0;  // traction: the boundary's reference area (length x 1 in plane strain); point: 0
  double scale(double t) const { return schedule ? schedule(t) : 1.0; }
  Vec3 total() const;  // sum of the forces
};

// The local faces of an element type as cycles of corner nodes: a solid's faces are the
// reference element's (ReferenceElement::cornerFaces: triangles and quadrilaterals, outward),
// a triangle's are its three edges (two corners each; plane strain).
const std::vector<std::vector<int>>& localFaces(ElementType type);

// ∫ N_a dA_ref over one face of one element, for the element's nodes a on that face.
struct FaceIntegral {
  std::vector<int> local_nodes;  // element-local node indices on the face
  std::vector<double> weights;   // ∫_face N_a dA_ref, same order; their sum is the face's area
};
// `corners`: the face as a cycle of element-local corner nodes (one of localFaces(type), in
// either direction and from any start); `element_positions`: the element's node positions
// (nodesPerElement(type) rows). Quadrature: a triangle face's rule has degree 3p - 2 (exact
// for N_a times the area element of a flat face of order p, curved edges included); a
// quadrilateral face 3 x 3 Gauss points; an edge 3 points.
FaceIntegral integrateOverFace(ElementType type, const std::vector<int>& corners, const MatX3& element_positions);

// A face of an element of one of the problem's element blocks.
struct BoundaryFace {
  int block = 0;
  int element = 0;
  int face = 0;  // index into localFaces(block's type)
};
// The faces that belong to exactly one element over all `blocks` (the boundary) and whose
// corner nodes all lie in `nodes`.
std::vector<BoundaryFace> boundaryFacesWithin(const std::vector<std::shared_ptr<const Mesh>>& blocks,
                                              const std::vector<int>& nodes);

// The consistent nodal forces of the uniform traction `traction` on `faces` (f_a = t ∫ N_a
// dA_ref, summed over the faces), with the faces' total reference area.
NodalLoad tractionNodalForces(const std::vector<std::shared_ptr<const Mesh>>& blocks,
                              const std::vector<BoundaryFace>& faces, const Vec3& traction);

}  // namespace pbdlab
