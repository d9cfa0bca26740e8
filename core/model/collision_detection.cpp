#include "core/model/collision_detection.hpp"

#include <algorithm>
#include <limits>

#include "core/fem/field_sampling.hpp"
#include "core/fem/reference_element.hpp"
#include "core/terms/point_triangle.hpp"
#include "core/topology/topology.hpp"

namespace pbdlab {

CollisionDetector::CollisionDetector(const Problem& problem, const CollisionSettings& settings)
    : settings_(settings) {
  for (int b = 0; b < problem.numBodies(); ++b) {
    const Mesh& mesh = problem.bodies[b].mesh;
    BodySurface surface;
    surface.body = b;
    surface.first_node = problem.bodyFirstNode(b);
    surface.mesh = mesh;
    surface.solid = elementDimension(mesh.element_type) == 3;
    const int first = problem.bodyFirstNode(b);
    // A 2D or cloth body's triangles are its surface; a solid's are its boundary faces.
    for (auto triangle : surfaceTriangles(mesh)) {
      for (int& node : triangle) node += first;
      surface.triangles.push_back(triangle);
      surface.vertices.insert(surface.vertices.end(), triangle.begin(), triangle.end());
    }
    std::sort(surface.vertices.begin(), surface.vertices.end());
    surface.vertices.erase(std::unique(surface.vertices.begin(), surface.vertices.end()), surface.vertices.end());
    surfaces_.push_back(std::move(surface));
  }
}

std::vector<WeakConstraint> CollisionDetector::detect(const Positions& x) const {
  std::vector<WeakConstraint> contacts;
  for (const BodySurface& target : surfaces_) {
    if (!target.solid) continue;
    // The target body at the current positions, for point location.
    Mesh deformed = target.mesh;
    const int first = target.first_node;
    for (int i = 0; i < deformed.numNodes(); ++i)
      deformed.rest_positions.row(i) = x.segment<3>(3 * (first + i)).transpose();
    const FieldSampler sampler(deformed);
    for (const BodySurface& source : surfaces_) {
      if (source.body == target.body) continue;
      for (int vertex : source.vertices) {
        const Vec3 p = x.segment<3>(3 * vertex);
        if (sampler.locate(p, 0.0).element < 0) continue;
        // The closest point of the target's surface.
        double best = std::numeric_limits<double>::infinity();
        PointTriangleClosest closest;
        const std::array<int, 3>* nearest = nullptr;
        for (const auto& triangle : target.triangles) {
          const PointTriangleClosest c = pointTriangleClosest(p, x.segment<3>(3 * triangle[0]),
                                                              x.segment<3>(3 * triangle[1]), x.segment<3>(3 * triangle[2]));
          if (c.degenerate || c.distance >= best) continue;
          best = c.distance;
          closest = c;
          nearest = &triangle;
        }
        if (!nearest) continue;  // every surface triangle collapsed: no direction to push along
        WeakConstraint contact;
        contact.nodes_a = {vertex};
        contact.weights_a = {1.0};
        contact.nodes_b.assign(nearest->begin(), nearest->end());
        contact.weights_b = {closest.weights[0], closest.weights[1], closest.weights[2]};
        contact.k_n = settings_.k_n;
        contact.k_t = settings_.k_t;
        contact.normal = closest.normal;
        contacts.push_back(std::move(contact));
      }
    }
  }
  // Vertex order, then target order: the same contacts in the same order on every run.
  std::stable_sort(contacts.begin(), contacts.end(),
                   [](const WeakConstraint& a, const WeakConstraint& b) { return a.nodes_a[0] < b.nodes_a[0]; });
  return contacts;
}

}  // namespace pbdlab
