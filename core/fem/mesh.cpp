#include "core/fem/mesh.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <Eigen/Geometry>

#include "core/support/input_error.hpp"
#include "core/support/short_number.hpp"

namespace pbdlab {

Positions Mesh::restPositionsFlat() const {
  // MatX3 is row-major, so its storage already is [x0 y0 z0 x1 ...].
  return Eigen::Map<const Positions>(rest_positions.data(), 3 * rest_positions.rows());
}

double signedTetVolume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  return (b - a).dot((c - a).cross(d - a)) / 6.0;
}

bool isTwoDimensional(const Mesh& mesh) {
  return mesh.element_type == ElementType::kTri3 && (mesh.rest_positions.col(2).array() == 0.0).all();
}

ElementNodes elementRestPositions(const Mesh& mesh, int e) {
  const int n = static_cast<int>(mesh.elements.cols());
  ElementNodes X(n, 3);
  for (int k = 0; k < n; ++k) X.row(k) = mesh.rest_positions.row(mesh.elements(e, k));
  return X;
}

namespace {

// dN/dr at one point, numNodes x 3 (fixed maximum size: no allocation per element).
using NodeGradients = Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::ColMajor, 20, 3>;

std::string elementField(int e) { return "element " + std::to_string(e); }

// Everything about the mesh's element type that the geometry checks need, evaluated once on
// the reference element.
struct TypeData {
  const ReferenceElement* ref = nullptr;
  int dimension = 3;
  bool two_dimensional = false;  // tri3 with z == 0: signed 2x2 det J
  // Straight P1 simplex: J is constant, one evaluation stands for every point.
  bool constant_jacobian = false;
  // The points where det J is checked: the nodes, then the stiffness rule's points, then the
  // mass rule's points (the last ones also give the volume and the consistent-mass diagonal).
  std::vector<NodeGradients> dN;
  std::vector<std::string> label;
  int mass_begin = 0;
  QuadratureRule mass_rule;
  std::vector<VecX> mass_N;  // N(r_q) at the mass points
  // Dihedral angle stencils {p, q, a, b}: the angle at corner edge p-q between the faces
  // through p-q, represented by a and b, the corners next to p in those faces.
  std::vector<std::array<int, 4>> dihedral;
};

TypeData typeData(const Mesh& mesh) {
  TypeData data;
  data.ref = &ReferenceElement::of(mesh.element_type);
  const ReferenceElement& ref = *data.ref;
  data.dimension = ref.dimension();
  data.two_dimensional = isTwoDimensional(mesh);
  data.constant_jacobian = elementOrder(mesh.element_type) == 1 && ref.numCorners() == ref.dimension() + 1;
  auto add = [&data](const Eigen::MatrixXd& gradients, std::string where) {
    data.dN.emplace_back(gradients);
    data.label.push_back(std::move(where));
  };
  for (int i = 0; i < ref.numNodes(); ++i)
    add(ref.shapeGradients(ref.nodeCoordinates()[static_cast<std::size_t>(i)]), "node " + std::to_string(i));
  const QuadratureRule stiffness = ref.quadrature(ref.stiffnessQuadratureDegree());
  for (int q = 0; q < stiffness.size(); ++q)
    add(ref.shapeGradients(stiffness.points[static_cast<std::size_t>(q)]),
        "stiffness quadrature point " + std::to_string(q));
  data.mass_begin = static_cast<int>(data.label.size());
  data.mass_rule = ref.quadrature(ref.massQuadratureDegree());
  for (int q = 0; q < data.mass_rule.size(); ++q) {
    const Vec3& r = data.mass_rule.points[static_cast<std::size_t>(q)];
    add(ref.shapeGradients(r), "mass quadrature point " + std::to_string(q));
    data.mass_N.push_back(ref.shapeValues(r));
  }
  // Dihedral stencils at both ends of every corner edge, from the faces through it.
  for (const auto& edge : ref.cornerEdges()) {
    for (int end = 0; end < 2; ++end) {
      const int p = edge[static_cast<std::size_t>(end)], q = edge[static_cast<std::size_t>(1 - end)];
      std::vector<int> neighbours;  // in each face through p-q: p's other neighbour
      for (const auto& face : ref.cornerFaces()) {
        const int m = static_cast<int>(face.size());
        for (int k = 0; k < m; ++k) {
          if (face[static_cast<std::size_t>(k)] != p) continue;
          const int next = face[static_cast<std::size_t>((k + 1) % m)];
          const int prev = face[static_cast<std::size_t>((k + m - 1) % m)];
          if (next == q) neighbours.push_back(prev);
          if (prev == q) neighbours.push_back(next);
        }
      }
      if (neighbours.size() == 2) data.dihedral.push_back({p, q, neighbours[0], neighbours[1]});
    }
  }
  return data;
}

// det J(X, r) from dN/dr at r: J = X^T dN/dr (eq. 9; the third column is zero for triangles).
double jacobianDeterminant(const TypeData& data, const ElementNodes& X, const NodeGradients& dN) {
  const Mat3 J = X.transpose().lazyProduct(dN);  // 3 x n x 3: coefficient-wise beats GEMM here
  if (data.dimension == 3) return J.determinant();
  if (data.two_dimensional) return J(0, 0) * J(1, 1) - J(0, 1) * J(1, 0);
  return J.col(0).cross(J.col(1)).norm();  // surface triangle in 3D: area element
}

// Longest edge between corner nodes.
double longestCornerEdge(const ReferenceElement& ref, const ElementNodes& X) {
  double h = 0.0;
  for (const auto& edge : ref.cornerEdges()) h = std::max(h, (X.row(edge[0]) - X.row(edge[1])).norm());
  return h;
}

// The geometry of one valid element.
struct ElementGeometry {
  double volume = 0.0;
  double min_det = 0.0;
  double max_det = 0.0;
};

// The one check behind validateMesh, restVolumes, lumpedNodeMasses and summarize: throws
// InputError naming mesh.source and the first bad node or element; otherwise calls
// visit(e, X, dets, geometry) for every element, dets = det J at data's points.
// MeshCheck::kTrusted (a mesh validated before): no checks, and dets holds det J at the mass
// points only (the other entries are left stale); geometry.min_det/max_det are then over the
// mass points.
template <typename Visit>
void forEachCheckedElement(const Mesh& mesh, const TypeData& data, double rel_tol, Visit&& visit,
                           MeshCheck check = MeshCheck::kValidate) {
  const int per_element = nodesPerElement(mesh.element_type);
  if (mesh.elements.rows() > 0 && mesh.elements.cols() != per_element) {
    throw InputError(mesh.source, "elements",
                     "an element of type " + elementTypeName(mesh.element_type) + " needs " +
                         std::to_string(per_element) + " nodes, the connectivity has " +
                         std::to_string(mesh.elements.cols()) + " columns");
  }
  const int n_nodes = mesh.numNodes();
  const bool validate = check == MeshCheck::kValidate;
  for (int i = 0; validate && i < n_nodes; ++i) {
    if (!mesh.rest_positions.row(i).allFinite()) {
      throw InputError(mesh.source, "node " + std::to_string(i),
                       "non-finite rest coordinate (" + shortNumber(mesh.rest_positions(i, 0)) + ", " +
                           shortNumber(mesh.rest_positions(i, 1)) + ", " +
                           shortNumber(mesh.rest_positions(i, 2)) + ")");
    }
  }
  const ReferenceElement& ref = *data.ref;
  const std::string type_name = elementTypeName(mesh.element_type);
  const int n_points = static_cast<int>(data.dN.size());
  std::vector<double> dets(static_cast<std::size_t>(n_points));
  for (int e = 0; e < mesh.numElements(); ++e) {
    for (int k = 0; validate && k < per_element; ++k) {
      const int node = mesh.elements(e, k);
      if (node < 0 || node >= n_nodes) {
        throw InputError(mesh.source, elementField(e),
                         "node index " + std::to_string(node) + " out of range [0, " + std::to_string(n_nodes) +
                             ")");
      }
    }
    const ElementNodes X = elementRestPositions(mesh, e);
    if (data.constant_jacobian) {
      std::fill(dets.begin(), dets.end(), jacobianDeterminant(data, X, data.dN[0]));
    } else {
      for (int s = validate ? 0 : data.mass_begin; s < n_points; ++s)
        dets[static_cast<std::size_t>(s)] = jacobianDeterminant(data, X, data.dN[static_cast<std::size_t>(s)]);
    }
    if (!validate) {
      const auto first = dets.begin() + data.mass_begin;
      ElementGeometry geometry;
      geometry.min_det = *std::min_element(first, dets.end());
      geometry.max_det = *std::max_element(first, dets.end());
      for (int q = 0; q < data.mass_rule.size(); ++q)
        geometry.volume += data.mass_rule.weights[static_cast<std::size_t>(q)] *
                           dets[static_cast<std::size_t>(data.mass_begin + q)];
      visit(e, X, dets, geometry);
      continue;
    }
    const auto worst = std::min_element(dets.begin(), dets.end());
    // Threshold relative to the element's size: h^3 (h^2 for triangles), h its longest
    // corner edge, so the test does not depend on the mesh's unit of length.
    const double h = longestCornerEdge(ref, X);
    const double threshold = rel_tol * (data.dimension == 3 ? h * h * h : h * h);
    if (!(*worst > threshold)) {
      // The messages are built only here: formatting for every element would cost more than
      // the check itself.
      const std::string where = data.constant_jacobian
                                    ? "(constant on the element)"
                                    : "at " + data.label[static_cast<std::size_t>(worst - dets.begin())];
      const std::string threshold_text = shortNumber(rel_tol) + " * h^" + std::to_string(data.dimension) +
                                         " = " + shortNumber(threshold) + ", h = " + shortNumber(h) +
                                         " the longest corner edge";
      const std::string found = type_name + ": det J = " + shortNumber(*worst) + " " + where;
      if (*worst < -threshold) {
        // Negative everywhere: the nodes are listed in the mirrored order. Negative somewhere:
        // the element folds over itself (a misplaced corner or midside node).
        const bool everywhere = *std::max_element(dets.begin(), dets.end()) < 0.0;
        throw InputError(mesh.source, elementField(e),
                         "inverted rest element (" + found + " < -threshold, threshold " + threshold_text + "; " +
                             (everywhere ? "its nodes are in mirrored order, e.g. two corners swapped"
                                         : "det J changes sign inside: the element folds over itself") +
                             ")");
      }
      throw InputError(mesh.source, elementField(e),
                       "degenerate rest element (" + found + " <= threshold " + threshold_text + ")");
    }
    ElementGeometry geometry;
    geometry.min_det = *worst;
    geometry.max_det = *std::max_element(dets.begin(), dets.end());
    for (int q = 0; q < data.mass_rule.size(); ++q)
      geometry.volume += data.mass_rule.weights[static_cast<std::size_t>(q)] *
                         dets[static_cast<std::size_t>(data.mass_begin + q)];
    visit(e, X, dets, geometry);
  }
}

// Angle at corner p between the rays to a and b, seen along the edge p-q (the components
// orthogonal to q - p): the dihedral angle between the planes (p, q, a) and (p, q, b).
double dihedralAngle(const Vec3& p, const Vec3& q, const Vec3& a, const Vec3& b) {
  const Vec3 axis = (q - p).normalized();
  const Vec3 da = (a - p) - (a - p).dot(axis) * axis;
  const Vec3 db = (b - p) - (b - p).dot(axis) * axis;
  const double c = da.dot(db) / (da.norm() * db.norm());
  return std::acos(std::clamp(c, -1.0, 1.0));
}

double triangleMinAngle(const Vec3& a, const Vec3& b, const Vec3& c) {
  auto angle = [](const Vec3& p, const Vec3& x, const Vec3& y) {
    const double cosine = (x - p).dot(y - p) / ((x - p).norm() * (y - p).norm());
    return std::acos(std::clamp(cosine, -1.0, 1.0));
  };
  return std::min({angle(a, b, c), angle(b, c, a), angle(c, a, b)});
}

}  // namespace

std::vector<double> restVolumes(const Mesh& mesh, MeshCheck check) {
  const TypeData data = typeData(mesh);
  std::vector<double> volumes(static_cast<std::size_t>(mesh.numElements()));
  forEachCheckedElement(
      mesh, data, 1e-10,
      [&](int e, const ElementNodes&, const std::vector<double>&, const ElementGeometry& g) {
        volumes[static_cast<std::size_t>(e)] = g.volume;
      },
      check);
  return volumes;
}

void validateMesh(const Mesh& mesh, double rel_tol) {
  const TypeData data = typeData(mesh);
  forEachCheckedElement(mesh, data, rel_tol,
                        [](int, const ElementNodes&, const std::vector<double>&, const ElementGeometry&) {});
}

void addBoundingBoxNodeSets(Mesh& mesh, double tol) {
  static const char* const kAxis[3] = {"x", "y", "z"};
  const int n = mesh.numNodes();
  std::vector<int> lo[3], hi[3];
  if (n > 0) {
    const Vec3 bmin = mesh.rest_positions.colwise().minCoeff().transpose();
    const Vec3 bmax = mesh.rest_positions.colwise().maxCoeff().transpose();
    const double eps = tol * (bmax - bmin).norm();
    for (int i = 0; i < n; ++i) {
      for (int d = 0; d < 3; ++d) {
        const double v = mesh.rest_positions(i, d);
        if (v <= bmin[d] + eps) lo[d].push_back(i);
        if (v >= bmax[d] - eps) hi[d].push_back(i);
      }
    }
  }
  for (int d = 0; d < 3; ++d) {
    mesh.node_sets[std::string(kAxis[d]) + "-min"] = std::move(lo[d]);
    mesh.node_sets[std::string(kAxis[d]) + "-max"] = std::move(hi[d]);
  }
}

MassLumping parseMassLumping(const std::string& name) {
  if (name == "equal_share") return MassLumping::kEqualShare;
  if (name == "hrz") return MassLumping::kHrz;
  throw std::invalid_argument("unknown mass lumping '" + name + "' (known: equal_share, hrz)");
}

std::string massLumpingName(MassLumping lumping) {
  switch (lumping) {
    case MassLumping::kEqualShare: return "equal_share";
    case MassLumping::kHrz: return "hrz";
  }
  throw std::invalid_argument("unknown mass lumping");
}

VecX lumpedNodeMasses(const Mesh& mesh, const std::vector<double>& element_densities, MassLumping lumping,
                      MeshCheck check) {
  if (static_cast<int>(element_densities.size()) != mesh.numElements()) {
    throw std::invalid_argument("lumpedNodeMasses: " + std::to_string(element_densities.size()) + " densities for " +
                                std::to_string(mesh.numElements()) + " elements");
  }
  const TypeData data = typeData(mesh);
  const int per_element = nodesPerElement(mesh.element_type);
  VecX masses = VecX::Zero(mesh.numNodes());
  VecX diagonal(per_element);
  forEachCheckedElement(
      mesh, data, 1e-10, [&](int e, const ElementNodes&, const std::vector<double>& dets, const ElementGeometry& g) {
        const double element_mass = element_densities[static_cast<std::size_t>(e)] * g.volume;
        if (lumping == MassLumping::kEqualShare) {
          // PXPBD eq. 50: every node of the element (corner or not) gets rho V_e / n_e.
          for (int k = 0; k < per_element; ++k) masses[mesh.elements(e, k)] += element_mass / per_element;
          return;
        }
        // HRZ: consistent-mass diagonal integral N_i^2 dV (rho is constant per element and
        // cancels in the ratio), scaled so that the element's masses sum to rho V_e. Each
        // entry is an integral of a non-negative function that is not identically zero:
        // strictly positive for every element type.
        diagonal.setZero();
        for (int q = 0; q < data.mass_rule.size(); ++q) {
          const double dv = data.mass_rule.weights[static_cast<std::size_t>(q)] *
                            dets[static_cast<std::size_t>(data.mass_begin + q)];
          diagonal += dv * data.mass_N[static_cast<std::size_t>(q)].cwiseAbs2();
        }
        const double sum = diagonal.sum();
        for (int k = 0; k < per_element; ++k) masses[mesh.elements(e, k)] += element_mass * diagonal[k] / sum;
      },
      check);
  return masses;
}

MeshSummary summarize(const Mesh& mesh) {
  MeshSummary s;
  s.nodes = mesh.numNodes();
  s.elements = mesh.numElements();
  s.element_type = mesh.element_type;
  if (s.elements > 0) s.elements_per_type[elementTypeName(mesh.element_type)] = s.elements;
  if (s.nodes > 0) {
    s.bbox_min = mesh.rest_positions.colwise().minCoeff().transpose();
    s.bbox_max = mesh.rest_positions.colwise().maxCoeff().transpose();
  }
  const TypeData data = typeData(mesh);
  const double pi = std::acos(-1.0);
  double min_volume = std::numeric_limits<double>::infinity(), max_volume = 0.0;
  double min_angle = std::numeric_limits<double>::infinity();
  double min_scaled = std::numeric_limits<double>::infinity();
  forEachCheckedElement(
      mesh, data, 1e-10, [&](int, const ElementNodes& X, const std::vector<double>&, const ElementGeometry& g) {
        min_volume = std::min(min_volume, g.volume);
        max_volume = std::max(max_volume, g.volume);
        s.total_volume += g.volume;
        min_scaled = std::min(min_scaled, g.min_det / g.max_det);
        auto corner = [&X](int k) -> Vec3 { return X.row(k).transpose(); };
        if (data.dimension == 2) {
          min_angle = std::min(min_angle, triangleMinAngle(corner(0), corner(1), corner(2)));
        } else {
          for (const auto& st : data.dihedral)
            min_angle = std::min(min_angle, dihedralAngle(corner(st[0]), corner(st[1]), corner(st[2]), corner(st[3])));
        }
      });
  if (s.elements > 0) {
    s.min_volume = min_volume;
    s.max_volume = max_volume;
    s.min_dihedral_angle_deg = min_angle * 180.0 / pi;
    s.min_scaled_jacobian = min_scaled;
  }
  return s;
}

}  // namespace pbdlab
