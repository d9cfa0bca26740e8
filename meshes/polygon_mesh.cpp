#include "meshes/polygon_mesh.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "core/support/short_number.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "meshes/gmsh_module.hpp"
#include "meshes/node_sets.hpp"

namespace pbdlab {

namespace {

using Point = PolygonRecipe::Point;
using Loop = std::vector<Point>;

constexpr double kPi = 3.14159265358979323846;

double cross(const Point& o, const Point& a, const Point& b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

// Whether segments [a, b] and [c, d] share a point (crossing, touching, or overlapping).
bool segmentsMeet(const Point& a, const Point& b, const Point& c, const Point& d) {
  const double d1 = cross(c, d, a), d2 = cross(c, d, b), d3 = cross(a, b, c), d4 = cross(a, b, d);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return true;
  const auto onSegment = [](const Point& p, const Point& q, const Point& r) {  // r on [p, q], collinear
    return std::min(p[0], q[0]) <= r[0] && r[0] <= std::max(p[0], q[0]) && std::min(p[1], q[1]) <= r[1] &&
           r[1] <= std::max(p[1], q[1]);
  };
  return (d1 == 0 && onSegment(c, d, a)) || (d2 == 0 && onSegment(c, d, b)) || (d3 == 0 && onSegment(a, b, c)) ||
         (d4 == 0 && onSegment(a, b, d));
}

// Even-odd rule; p is not on the boundary (the loops were checked not to meet).
bool inside(const Point& p, const Loop& loop) {
  bool in = false;
  for (std::size_t i = 0, j = loop.size() - 1; i < loop.size(); j = i++) {
    const Point& a = loop[i];
    const Point& b = loop[j];
    if ((a[1] > p[1]) != (b[1] > p[1]) && p[0] < (b[0] - a[0]) * (p[1] - a[1]) / (b[1] - a[1]) + a[0]) in = !in;
  }
  return in;
}

std::string loopName(std::size_t loop) { return loop == 0 ? "the outline" : "hole " + std::to_string(loop - 1); }

void checkLoop(const Loop& loop, const std::string& name) {
  if (loop.size() < 3)
    throw std::invalid_argument(name + " has " + std::to_string(loop.size()) + " vertices (at least 3)");
  for (std::size_t i = 0; i < loop.size(); ++i) {
    if (!std::isfinite(loop[i][0]) || !std::isfinite(loop[i][1]))
      throw std::invalid_argument(name + ": vertex " + std::to_string(i) + " is not finite");
    const Point& next = loop[(i + 1) % loop.size()];
    if (loop[i] == next) throw std::invalid_argument(name + ": vertices " + std::to_string(i) + " and " +
                                                     std::to_string((i + 1) % loop.size()) + " coincide");
  }
}

// Every pair of edges that are not neighbours in one loop must not meet; neighbours meet only
// at their shared vertex (a fold back onto the previous edge is a meeting too).
void checkEdgesApart(const std::vector<const Loop*>& loops) {
  struct Edge {
    std::size_t loop, index;
    Point a, b;
  };
  std::vector<Edge> edges;
  for (std::size_t l = 0; l < loops.size(); ++l)
    for (std::size_t i = 0; i < loops[l]->size(); ++i)
      edges.push_back({l, i, (*loops[l])[i], (*loops[l])[(i + 1) % loops[l]->size()]});
  for (std::size_t e = 0; e < edges.size(); ++e)
    for (std::size_t f = e + 1; f < edges.size(); ++f) {
      const Edge& p = edges[e];
      const Edge& q = edges[f];
      const std::size_t n = loops[p.loop]->size();
      const bool neighbours = p.loop == q.loop && (q.index == (p.index + 1) % n || p.index == (q.index + 1) % n);
      if (neighbours) {
        // Shared vertex s; the other ends must not lie on the other edge (a fold).
        const Point& s = q.index == (p.index + 1) % n ? p.b : p.a;
        const Point& u = q.index == (p.index + 1) % n ? p.a : p.b;
        const Point& w = q.index == (p.index + 1) % n ? q.b : q.a;
        if (cross(s, u, w) == 0.0 && (u[0] - s[0]) * (w[0] - s[0]) + (u[1] - s[1]) * (w[1] - s[1]) > 0.0)
          throw std::invalid_argument(loopName(p.loop) + ": edges " + std::to_string(p.index) + " and " +
                                      std::to_string(q.index) + " fold back onto each other");
        continue;
      }
      if (segmentsMeet(p.a, p.b, q.a, q.b)) {
        throw std::invalid_argument(loopName(p.loop) + " edge " + std::to_string(p.index) + " and " + loopName(q.loop) +
                                    " edge " + std::to_string(q.index) +
                                    " cross or touch (each loop must be simple, and the loops apart)");
      }
    }
}

// Nodes within round-off of one of the loop's edges.
std::vector<int> nodesOnLoop(const Mesh& mesh, const Loop& loop, double scale) {
  std::vector<int> nodes;
  for (int i = 0; i < mesh.numNodes(); ++i) {
    const Vec3 x = mesh.restPosition(i);
    for (std::size_t k = 0; k < loop.size(); ++k) {
      const Point& a = loop[k];
      const Point& b = loop[(k + 1) % loop.size()];
      const double dx = b[0] - a[0], dy = b[1] - a[1];
      const double rx = x.x() - a[0], ry = x.y() - a[1];
      const double length2 = dx * dx + dy * dy;
      const double along = (rx * dx + ry * dy) / length2;
      const bool on_line = std::abs(dx * ry - dy * rx) <= 1e-10 * scale * std::sqrt(length2);
      if (on_line && along >= -1e-10 && along <= 1.0 + 1e-10) {
        nodes.push_back(i);
        break;
      }
    }
  }
  return nodes;
}

}  // namespace

std::string PolygonRecipe::describe() const {
  return "polygon of " + std::to_string(outline.size()) + " vertices" +
         (holes.empty() ? std::string() : " with " + std::to_string(holes.size()) + " hole(s)") + ", target size " +
         shortNumber(target_size);
}

std::string StarRecipe::describe() const {
  return "star of " + std::to_string(points) + " points, radii " + shortNumber(outer_radius) + " and " +
         shortNumber(inner_radius) + " about (" + shortNumber(center[0]) + ", " + shortNumber(center[1]) +
         "), target size " +
         shortNumber(target_size);
}

PolygonRecipe StarRecipe::polygon() const {
  if (points < 2) throw std::invalid_argument("a star has at least 2 points, got " + std::to_string(points));
  if (!(outer_radius > 0.0) || !std::isfinite(outer_radius))
    throw std::invalid_argument("outer_radius must be positive and finite, got " + shortNumber(outer_radius));
  if (!(inner_radius > 0.0 && inner_radius <= outer_radius))
    throw std::invalid_argument("inner_radius must lie in (0, outer_radius], got " + shortNumber(inner_radius));
  PolygonRecipe polygon;
  polygon.target_size = target_size;
  for (int k = 0; k < 2 * points; ++k) {
    const double angle = 0.5 * kPi + kPi * k / points;  // counter-clockwise from the tip on +y
    const double r = k % 2 == 0 ? outer_radius : inner_radius;
    polygon.outline.push_back({center[0] + r * std::cos(angle), center[1] + r * std::sin(angle)});
  }
  return polygon;
}

void checkPolygon(const PolygonRecipe& recipe) {
  if (!(recipe.target_size > 0.0) || !std::isfinite(recipe.target_size))
    throw std::invalid_argument("target_size must be positive and finite, got " + shortNumber(recipe.target_size));
  std::vector<const Loop*> loops = {&recipe.outline};
  for (const Loop& hole : recipe.holes) loops.push_back(&hole);
  for (std::size_t l = 0; l < loops.size(); ++l) checkLoop(*loops[l], loopName(l));
  checkEdgesApart(loops);
  for (std::size_t h = 1; h < loops.size(); ++h) {
    if (!inside(loops[h]->front(), recipe.outline))
      throw std::invalid_argument(loopName(h) + " lies outside the outline");
    for (std::size_t g = 1; g < loops.size(); ++g)
      if (g != h && inside(loops[h]->front(), *loops[g]))
        throw std::invalid_argument(loopName(h) + " lies inside " + loopName(g));
  }
}

Mesh makePolygonMesh(const PolygonRecipe& recipe) {
  const std::string source = recipe.describe();
  try {
    checkPolygon(recipe);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(source + ": " + e.what());
  }
  Mesh mesh = gmshModule().polygon(recipe, source);
  orientTrianglesCounterClockwise(mesh);  // as every 2D mesh
  mesh.rest_positions.col(2).setZero();
  mesh.source = source;
  addFaceNodeSets(mesh);
  const double scale = (mesh.rest_positions.colwise().maxCoeff() - mesh.rest_positions.colwise().minCoeff()).norm();
  mesh.node_sets["outline"] = nodesOnLoop(mesh, recipe.outline, scale);
  for (std::size_t h = 0; h < recipe.holes.size(); ++h)
    mesh.node_sets["hole-" + std::to_string(h)] = nodesOnLoop(mesh, recipe.holes[h], scale);
  return mesh;
}

}  // namespace pbdlab
