#pragma once
// Vertex-triangle collisions between bodies, created each step (PBNG §4.1 and §11.2): at the
// start of a step, every surface vertex of one body that lies inside another (solid) body is
// tied to the closest point of that body's surface by a weak constraint (PBNG eq. 18-19):
// w_a = 1 at the vertex, w_b = the barycentric weights of the closest point of the nearest
// surface triangle, K = k_n n n^T + k_t (I - n n^T) with n that triangle's normal, all frozen
// for the step. The step's objective then holds these contacts as one more energy term
// (core/solver/yardstick.hpp), so every solver and the yardstick see the same penalty.
//
// Scope: vertices of any body against solid bodies (a cloth has no inside). No self-collision.
// A vertex is "inside" when it lies in one of the body's elements at the current positions
// (core/fem/field_sampling.hpp: exact for affine elements, Newton's inverse map otherwise); an
// element too distorted for the inverse map counts as not containing it. The nearest
// triangle is found by a scan over the body's surface: O(surface) per penetrating vertex,
// fine for the few vertices in contact per step; a bounding-volume hierarchy is the next step
// for scenes with thousands of contacts.
#include <array>
#include <vector>

#include "core/model/problem.hpp"

namespace pbdlab {

class CollisionDetector {
 public:
  // Precomputes each body's surface (corner-node triangles and vertices) and keeps its own
  // copy of the bodies' meshes (no pointer back to the problem, which may be moved). The
  // problem's bodies must have been combined (Problem::finalize does this).
  CollisionDetector(const Problem& problem, const CollisionSettings& settings);

  // The contacts at positions x: one weak constraint per (vertex, body it penetrates), in
  // vertex order, then body order (deterministic).
  std::vector<WeakConstraint> detect(const Positions& x) const;

  const CollisionSettings& settings() const { return settings_; }

 private:
  struct BodySurface {
    int body = 0;
    int first_node = 0;  // global index of the body's node 0
    Mesh mesh;           // the body's own mesh (local numbering)
    bool solid = false;
    std::vector<std::array<int, 3>> triangles;  // global node indices
    std::vector<int> vertices;                  // global node indices, sorted
  };
  CollisionSettings settings_;
  std::vector<BodySurface> surfaces_;
};

}  // namespace pbdlab
