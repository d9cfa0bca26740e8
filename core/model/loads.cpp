#include "core/model/loads.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include <Eigen/Geometry>

#include "core/fem/reference_element.hpp"

namespace pbdlab {

Vec3 NodalLoad::total() const {
  Vec3 sum = Vec3::Zero();
  for (const Vec3& f : forces) sum += f;
  return sum;
}

namespace {

// A face's own rule: points (s, t) in its 2D reference face with weights. Triangle faces:
// the unit triangle (0,0) (1,0) (0,1); quadrilateral faces: [-1, 1]^2; edges: [0, 1] (t = 0).
struct FaceRule {
  std::vector<double> s, t, w;
};

FaceRule triangleFaceRule(int degree) {
  const QuadratureRule rule = ReferenceElement::of(ElementType::kTri3).quadrature(std::max(1, degree));
  FaceRule face;
  for (int q = 0; q < rule.size(); ++q) {
    face.s.push_back(rule.points[q].x());
    face.t.push_back(rule.points[q].y());
    face.w.push_back(rule.weights[q]);
  }
  return face;
}

FaceRule quadFaceRule(int n) {
  const GaussRule1D g = gaussJacobi(n, 0.0);
  FaceRule face;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      face.s.push_back(g.points[i]);
      face.t.push_back(g.points[j]);
      face.w.push_back(g.weights[i] * g.weights[j]);
    }
  return face;
}

FaceRule edgeRule(int n) {
  const GaussRule1D g = gaussJacobi(n, 0.0);
  FaceRule face;
  for (int i = 0; i < n; ++i) {
    face.s.push_back(0.5 * (1.0 + g.points[i]));
    face.t.push_back(0.0);
    face.w.push_back(0.5 * g.weights[i]);
  }
  return face;
}

std::vector<std::vector<int>> edgesAsFaces(const ReferenceElement& reference) {
  std::vector<std::vector<int>> faces;
  for (const auto& edge : reference.cornerEdges()) faces.push_back({edge[0], edge[1]});
  return faces;
}

}  // namespace

const std::vector<std::vector<int>>& localFaces(ElementType type) {
  static const std::vector<std::vector<int>> tables[] = {
      ReferenceElement::of(ElementType::kTet4).cornerFaces(),
      ReferenceElement::of(ElementType::kTet10).cornerFaces(),
      ReferenceElement::of(ElementType::kTet20).cornerFaces(),
      ReferenceElement::of(ElementType::kHex8).cornerFaces(),
      ReferenceElement::of(ElementType::kPrism6).cornerFaces(),
      ReferenceElement::of(ElementType::kPyramid5).cornerFaces(),
      edgesAsFaces(ReferenceElement::of(ElementType::kTri3)),
  };
  switch (type) {
    case ElementType::kTet4: return tables[0];
    case ElementType::kTet10: return tables[1];
    case ElementType::kTet20: return tables[2];
    case ElementType::kHex8: return tables[3];
    case ElementType::kPrism6: return tables[4];
    case ElementType::kPyramid5: return tables[5];
    case ElementType::kTri3: return tables[6];
  }
  throw std::invalid_argument("localFaces: unknown element type");
}

FaceIntegral integrateOverFace(ElementType type, const std::vector<int>& corners, const MatX3& element_positions) {
  const ReferenceElement& reference = ReferenceElement::of(type);
  const int n = reference.numNodes();
  if (element_positions.rows() != n)
    throw std::invalid_argument("integrateOverFace: " + elementTypeName(type) + " has " + std::to_string(n) +
                                " nodes, got " + std::to_string(element_positions.rows()) + " positions");
  const std::vector<Vec3>& R = reference.nodeCoordinates();
  const size_t k = corners.size();
  if (k < 2 || k > 4 || (k == 2) != (reference.dimension() == 2))
    throw std::invalid_argument("integrateOverFace: a face of " + elementTypeName(type) + " needs " +
                                (reference.dimension() == 2 ? "2" : "3 or 4") + " corners");
  for (int c : corners)
    if (c < 0 || c >= reference.numCorners()) throw std::invalid_argument("integrateOverFace: corner out of range");

  // The element's nodes on the face: their reference coordinates lie on the face's line
  // (a triangle's edge) or plane (a solid's face; every reference face is planar). The
  // reference elements are convex, so the face's plane meets the element in the face only.
  const Vec3 r0 = R[corners[0]];
  const Vec3 e1 = R[corners[1]] - r0;
  FaceIntegral result;
  for (int a = 0; a < n; ++a) {
    const Vec3 d = R[a] - r0;
    const double off = k == 2 ? e1.cross(d).norm() / e1.norm()
                              : std::abs(e1.cross(R[corners[2]] - r0).normalized().dot(d));
    if (off < 1e-12) result.local_nodes.push_back(a);
  }
  result.weights.assign(result.local_nodes.size(), 0.0);

  // Reference face -> reference element: r(s, t) and its tangents dr/ds, dr/dt.
  const int p = elementOrder(type);
  const FaceRule rule = k == 2 ? edgeRule(3) : k == 3 ? triangleFaceRule(3 * p - 2) : quadFaceRule(3);
  for (size_t q = 0; q < rule.w.size(); ++q) {
    const double s = rule.s[q], t = rule.t[q];
    Vec3 r, dr_ds, dr_dt = Vec3::Zero();
    if (k == 2) {
      r = r0 + s * e1;
      dr_ds = e1;
    } else if (k == 3) {
      const Vec3 e2 = R[corners[2]] - r0;
      r = r0 + s * e1 + t * e2;
      dr_ds = e1;
      dr_dt = e2;
    } else {
      // Bilinear over [-1, 1]^2, corners in cycle order at (-1,-1) (1,-1) (1,1) (-1,1).
      const double phi[4] = {(1 - s) * (1 - t) / 4, (1 + s) * (1 - t) / 4, (1 + s) * (1 + t) / 4, (1 - s) * (1 + t) / 4};
      const double phi_s[4] = {-(1 - t) / 4, (1 - t) / 4, (1 + t) / 4, -(1 + t) / 4};
      const double phi_t[4] = {-(1 - s) / 4, -(1 + s) / 4, (1 + s) / 4, (1 - s) / 4};
      r.setZero();
      dr_ds.setZero();
      for (int c = 0; c < 4; ++c) {
        r += phi[c] * R[corners[c]];
        dr_ds += phi_s[c] * R[corners[c]];
        dr_dt += phi_t[c] * R[corners[c]];
      }
    }
    const Eigen::VectorXd N = reference.shapeValues(r);
    const Eigen::MatrixXd G = reference.shapeGradients(r);  // n x 3, dN/dr
    // X(r(s, t)) = sum_a N_a X_a: its derivatives along the face.
    const Vec3 dX_ds = element_positions.transpose() * (G * dr_ds);
    const double dA = k == 2 ? dX_ds.norm()  // an edge of a plane strain slab of unit thickness
                             : dX_ds.cross(Vec3(element_positions.transpose() * (G * dr_dt))).norm();
    for (size_t i = 0; i < result.local_nodes.size(); ++i)
      result.weights[i] += rule.w[q] * N[result.local_nodes[i]] * dA;
  }
  return result;
}

std::vector<BoundaryFace> boundaryFacesWithin(const std::vector<std::shared_ptr<const Mesh>>& blocks,
                                              const std::vector<int>& nodes) {
  int num_nodes = 0;
  for (const auto& block : blocks) num_nodes = std::max(num_nodes, block->numNodes());
  std::vector<char> in_set(static_cast<size_t>(num_nodes), 0);
  for (int node : nodes)
    if (node >= 0 && node < num_nodes) in_set[static_cast<size_t>(node)] = 1;
  // Every face by its sorted corners: how many elements have it, and the first one's.
  std::map<std::vector<int>, std::pair<int, BoundaryFace>> faces;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const Mesh& mesh = *blocks[b];
    const std::vector<std::vector<int>>& table = localFaces(mesh.element_type);
    for (int e = 0; e < mesh.numElements(); ++e)
      for (size_t f = 0; f < table.size(); ++f) {
        std::vector<int> key;
        for (int c : table[f]) key.push_back(mesh.elements(e, c));
        std::sort(key.begin(), key.end());
        auto [it, inserted] = faces.try_emplace(std::move(key), 0, BoundaryFace{static_cast<int>(b), e, static_cast<int>(f)});
        ++it->second.first;
      }
  }
  std::vector<BoundaryFace> boundary;
  for (const auto& [key, entry] : faces) {
    if (entry.first != 1) continue;
    if (std::all_of(key.begin(), key.end(), [&](int node) { return in_set[static_cast<size_t>(node)] != 0; }))
      boundary.push_back(entry.second);
  }
  // In element order (block, element, face): independent of the map's key order.
  std::sort(boundary.begin(), boundary.end(), [](const BoundaryFace& a, const BoundaryFace& b) {
    return std::tie(a.block, a.element, a.face) < std::tie(b.block, b.element, b.face);
  });
  return boundary;
}

NodalLoad tractionNodalForces(const std::vector<std::shared_ptr<const Mesh>>& blocks,
                              const std::vector<BoundaryFace>& faces, const Vec3& traction) {
  std::map<int, double> weight;  // node -> ∫ N_a dA_ref over every loaded face
  NodalLoad load;
  for (const BoundaryFace& face : faces) {
    const Mesh& mesh = *blocks[static_cast<size_t>(face.block)];
    const int n = nodesPerElement(mesh.element_type);
    MatX3 X(n, 3);
    for (int a = 0; a < n; ++a) X.row(a) = mesh.rest_positions.row(mesh.elements(face.element, a));
    const FaceIntegral integral =
        integrateOverFace(mesh.element_type, localFaces(mesh.element_type)[static_cast<size_t>(face.face)], X);
    for (size_t i = 0; i < integral.local_nodes.size(); ++i) {
      weight[mesh.elements(face.element, integral.local_nodes[i])] += integral.weights[i];
      load.area += integral.weights[i];
    }
  }
  for (const auto& [node, w] : weight) {
    load.nodes.push_back(node);
    load.forces.push_back(w * traction);
  }
  return load;
}

}  // namespace pbdlab
