// The shared mesh model on hand-made meshes: volumes, validation messages, masses, node
// sets, summary (tet4 first, then every element type: unit cubes of one hex8, 2 prisms and
// 6 pyramids, single affine elements, curved tet10/tet20, triangles in 2D and 3D), atomic
// output and element coloring.
#include <gtest/gtest.h>
#include <unistd.h>

#include <Eigen/LU>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/fem/mesh.hpp"
#include "core/fem/reference_element.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/input_error.hpp"
#include "core/topology/coloring.hpp"

namespace pbdlab {
namespace {

namespace fs = std::filesystem;

// Unit cube split into 5 positively oriented tets (8 nodes, one cell).
Mesh fiveTetCube() {
  Mesh mesh;
  mesh.source = "five_tet_cube";
  mesh.rest_positions.resize(8, 3);
  for (int n = 0; n < 8; ++n) mesh.rest_positions.row(n) << (n & 1), ((n >> 1) & 1), ((n >> 2) & 1);
  // Node n = a + 2b + 4c. Central tet of the even corners 0, 3, 5, 6, then the odd corners.
  mesh.elements.resize(5, 4);
  mesh.elements << 0, 3, 5, 6,  //
      1, 0, 3, 5,               //
      2, 3, 0, 6,               //
      4, 5, 6, 0,               //
      7, 6, 5, 3;
  for (int e = 0; e < 5; ++e) {
    const double v = signedTetVolume(mesh.restPosition(mesh.elements(e, 0)),
                                     mesh.restPosition(mesh.elements(e, 1)),
                                     mesh.restPosition(mesh.elements(e, 2)),
                                     mesh.restPosition(mesh.elements(e, 3)));
    if (v < 0) std::swap(mesh.elements(e, 2), mesh.elements(e, 3));
  }
  return mesh;
}

std::string expectInputError(const Mesh& mesh, const std::string& field) {
  try {
    validateMesh(mesh);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), mesh.source);
    EXPECT_EQ(e.field(), field);
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "validateMesh accepted a bad mesh, expected an error at " << field;
  return "";
}

TEST(Mesh, SignedTetVolumeSign) {
  const Vec3 a(0, 0, 0), b(1, 0, 0), c(0, 1, 0), d(0, 0, 1);
  EXPECT_NEAR(signedTetVolume(a, b, c, d), 1.0 / 6.0, 1e-15);
  EXPECT_NEAR(signedTetVolume(a, c, b, d), -1.0 / 6.0, 1e-15);
  EXPECT_NEAR(signedTetVolume(b, a, c, d), -1.0 / 6.0, 1e-15);
  EXPECT_EQ(signedTetVolume(a, b, c, Vec3(1, 1, 0)), 0.0);
}

TEST(Mesh, NodesPerElementAndName) {
  EXPECT_EQ(nodesPerElement(ElementType::kTet4), 4);
  EXPECT_EQ(elementTypeName(ElementType::kTet4), "tet4");
}

TEST(Mesh, RestPositionsFlat) {
  const Mesh mesh = fiveTetCube();
  const Positions flat = mesh.restPositionsFlat();
  ASSERT_EQ(flat.size(), 24);
  for (int n = 0; n < 8; ++n) {
    for (int d = 0; d < 3; ++d) EXPECT_EQ(flat[3 * n + d], mesh.rest_positions(n, d));
  }
}

TEST(Mesh, ValidMeshPassesAndVolumesSumToCube) {
  const Mesh mesh = fiveTetCube();
  EXPECT_NO_THROW(validateMesh(mesh));
  const std::vector<double> v = restVolumes(mesh);
  ASSERT_EQ(v.size(), 5u);
  double total = 0;
  for (double x : v) {
    EXPECT_GT(x, 0.0);
    total += x;
  }
  EXPECT_NEAR(total, 1.0, 1e-14);
  EXPECT_NEAR(v[0], 1.0 / 3.0, 1e-14);
}

TEST(Mesh, ValidateCatchesInvertedElement) {
  Mesh mesh = fiveTetCube();
  std::swap(mesh.elements(3, 0), mesh.elements(3, 1));
  const std::string what = expectInputError(mesh, "element 3");
  EXPECT_NE(what.find("inverted"), std::string::npos) << what;
  EXPECT_NE(what.find("five_tet_cube"), std::string::npos) << what;
  EXPECT_THROW(restVolumes(mesh), InputError);
}

TEST(Mesh, ValidateCatchesZeroVolumeElement) {
  Mesh mesh = fiveTetCube();
  mesh.elements.row(2) << 0, 1, 2, 3;  // four corners of the bottom face: flat
  const std::string what = expectInputError(mesh, "element 2");
  EXPECT_NE(what.find("degenerate"), std::string::npos) << what;
  EXPECT_THROW(restVolumes(mesh), InputError);
}

TEST(Mesh, ValidateCatchesNearlyFlatElementByRelativeThreshold) {
  Mesh mesh;
  mesh.source = "sliver";
  mesh.rest_positions.resize(4, 3);
  mesh.rest_positions << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0.3, 0.3, 1e-12;
  mesh.elements.resize(1, 4);
  mesh.elements << 0, 1, 2, 3;
  expectInputError(mesh, "element 0");
  EXPECT_NO_THROW(validateMesh(mesh, 1e-14));
}

TEST(Mesh, ValidateCatchesOutOfRangeIndex) {
  Mesh mesh = fiveTetCube();
  mesh.elements(4, 2) = 8;
  std::string what = expectInputError(mesh, "element 4");
  EXPECT_NE(what.find("out of range"), std::string::npos) << what;
  mesh.elements(4, 2) = -1;
  what = expectInputError(mesh, "element 4");
  EXPECT_NE(what.find("out of range"), std::string::npos) << what;
}

TEST(Mesh, ValidateCatchesNonFiniteCoordinate) {
  Mesh mesh = fiveTetCube();
  mesh.rest_positions(6, 1) = std::numeric_limits<double>::quiet_NaN();
  const std::string what = expectInputError(mesh, "node 6");
  EXPECT_NE(what.find("non-finite"), std::string::npos) << what;
  mesh.rest_positions(6, 1) = std::numeric_limits<double>::infinity();
  expectInputError(mesh, "node 6");
}

TEST(Mesh, LumpedMassesSumToDensityTimesVolume) {
  const Mesh mesh = fiveTetCube();
  const VecX m = lumpedNodeMasses(mesh, std::vector<double>(5, 1000.0));
  ASSERT_EQ(m.size(), 8);
  EXPECT_NEAR(m.sum(), 1000.0, 1e-10);
  for (int i = 0; i < 8; ++i) EXPECT_GT(m[i], 0.0);
  // Even corners belong to the central tet and to three corner tets.
  EXPECT_NEAR(m[0], 1000.0 * (1.0 / 3.0 + 3.0 / 6.0) / 4.0, 1e-10);
  EXPECT_NEAR(m[1], 1000.0 * (1.0 / 6.0) / 4.0, 1e-10);

  // Per-element densities.
  std::vector<double> rho = {1, 2, 3, 4, 5};
  const std::vector<double> v = restVolumes(mesh);
  double expected = 0;
  for (int e = 0; e < 5; ++e) expected += rho[e] * v[e];
  EXPECT_NEAR(lumpedNodeMasses(mesh, rho).sum(), expected, 1e-12);
  EXPECT_THROW(lumpedNodeMasses(mesh, std::vector<double>(4, 1.0)), std::invalid_argument);
}

TEST(Mesh, BoundingBoxNodeSets) {
  Mesh mesh = fiveTetCube();
  // Stretch and shift the cube: x in [2, 5], y in [-1, 0], z in [0, 0.5].
  for (int n = 0; n < 8; ++n) {
    mesh.rest_positions(n, 0) = 2 + 3 * mesh.rest_positions(n, 0);
    mesh.rest_positions(n, 1) = -1 + mesh.rest_positions(n, 1);
    mesh.rest_positions(n, 2) = 0.5 * mesh.rest_positions(n, 2);
  }
  addBoundingBoxNodeSets(mesh);
  EXPECT_EQ(mesh.node_sets.at("x-min"), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(mesh.node_sets.at("x-max"), (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(mesh.node_sets.at("y-min"), (std::vector<int>{0, 1, 4, 5}));
  EXPECT_EQ(mesh.node_sets.at("y-max"), (std::vector<int>{2, 3, 6, 7}));
  EXPECT_EQ(mesh.node_sets.at("z-min"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(mesh.node_sets.at("z-max"), (std::vector<int>{4, 5, 6, 7}));

  // A node slightly inside the face is not on it; one within tolerance is.
  mesh.rest_positions(0, 0) = 2 + 1e-6;
  mesh.rest_positions(2, 0) = 2 + 1e-12;
  addBoundingBoxNodeSets(mesh);
  EXPECT_EQ(mesh.node_sets.at("x-min"), (std::vector<int>{2, 4, 6}));
}

TEST(Mesh, Summary) {
  Mesh mesh = fiveTetCube();
  for (int n = 0; n < 8; ++n) mesh.rest_positions(n, 0) *= 2.0;
  const MeshSummary s = summarize(mesh);
  EXPECT_EQ(s.nodes, 8);
  EXPECT_EQ(s.elements, 5);
  EXPECT_NEAR(s.total_volume, 2.0, 1e-14);
  EXPECT_NEAR(s.min_volume, 2.0 / 6.0, 1e-14);
  EXPECT_NEAR(s.max_volume, 2.0 / 3.0, 1e-14);
  EXPECT_TRUE(s.bbox_min.isApprox(Vec3(0, 0, 0)));
  EXPECT_TRUE(s.bbox_max.isApprox(Vec3(2, 1, 1)));
}

// ---- Every element type -------------------------------------------------------------

// One element of `type`: the reference element under x = A r + b (A with det > 0).
Mesh singleElement(ElementType type, const Mat3& A, const Vec3& b) {
  const ReferenceElement& ref = ReferenceElement::of(type);
  Mesh mesh;
  mesh.source = "single_" + elementTypeName(type);
  mesh.element_type = type;
  mesh.rest_positions.resize(ref.numNodes(), 3);
  mesh.elements.resize(1, ref.numNodes());
  for (int i = 0; i < ref.numNodes(); ++i) {
    mesh.rest_positions.row(i) = (A * ref.nodeCoordinates()[static_cast<std::size_t>(i)] + b).transpose();
    mesh.elements(0, i) = i;
  }
  return mesh;
}

// A shear-and-stretch map with det 1.2 * 0.9 * 1.5 = 1.62; for triangles it keeps z = 0.
Mat3 skewMap(ElementType type) {
  Mat3 A;
  A << 1.2, 0.3, 0.1,  //
      0.0, 0.9, -0.2,  //
      0.0, 0.0, 1.5;
  if (elementDimension(type) == 2) A.row(2).setZero();
  return A;
}

// The unit cube's 8 corners, numbered n = a + 2b + 4c as in fiveTetCube.
MatX3 cubeCorners() {
  MatX3 X(8, 3);
  for (int n = 0; n < 8; ++n) X.row(n) << (n & 1), ((n >> 1) & 1), ((n >> 2) & 1);
  return X;
}

// Unit cube as one hex8 (Gmsh order: bottom face counter-clockwise seen from above, then top).
Mesh hexCube() {
  Mesh mesh;
  mesh.source = "hex_cube";
  mesh.element_type = ElementType::kHex8;
  mesh.rest_positions = cubeCorners();
  mesh.elements.resize(1, 8);
  mesh.elements << 0, 1, 3, 2, 4, 5, 7, 6;
  return mesh;
}

// Unit cube as two prisms split by the plane x + y = 1 (triangles counter-clockwise from above).
Mesh prismCube() {
  Mesh mesh;
  mesh.source = "prism_cube";
  mesh.element_type = ElementType::kPrism6;
  mesh.rest_positions = cubeCorners();
  mesh.elements.resize(2, 6);
  mesh.elements << 0, 1, 2, 4, 5, 6,  //
      1, 3, 2, 5, 7, 6;
  return mesh;
}

// Unit cube as six pyramids: one per face, apex at the centre (node 8). A pyramid's base runs
// counter-clockwise seen from its apex: the hex face cycles (outward) reversed.
Mesh pyramidCube() {
  const Mesh hex = hexCube();
  Mesh mesh;
  mesh.source = "pyramid_cube";
  mesh.element_type = ElementType::kPyramid5;
  mesh.rest_positions.resize(9, 3);
  mesh.rest_positions.topRows(8) = cubeCorners();
  mesh.rest_positions.row(8) << 0.5, 0.5, 0.5;
  const auto& faces = ReferenceElement::of(ElementType::kHex8).cornerFaces();
  mesh.elements.resize(6, 5);
  for (int f = 0; f < 6; ++f) {
    for (int k = 0; k < 4; ++k) mesh.elements(f, k) = hex.elements(0, faces[f][3 - k]);
    mesh.elements(f, 4) = 8;
  }
  return mesh;
}

// The unit right tet (0,0,0) (1,0,0) (0,1,0) (0,0,1) as tet10 or tet20 (nodes = reference).
Mesh referenceTet(ElementType type) { return singleElement(type, Mat3::Identity(), Vec3::Zero()); }

double sum(const std::vector<double>& v) {
  double total = 0;
  for (double x : v) total += x;
  return total;
}

TEST(MeshTypes, CubeVolumesForHexPrismPyramid) {
  for (const Mesh& mesh : {hexCube(), prismCube(), pyramidCube()}) {
    SCOPED_TRACE(mesh.source);
    EXPECT_NO_THROW(validateMesh(mesh));
    const std::vector<double> v = restVolumes(mesh);
    ASSERT_EQ(static_cast<int>(v.size()), mesh.numElements());
    for (double x : v) EXPECT_NEAR(x, 1.0 / mesh.numElements(), 1e-14);
    EXPECT_NEAR(sum(v), 1.0, 1e-14);
  }
}

TEST(MeshTypes, SingleElementVolumesUnderAnAffineMap) {
  for (ElementType type : allElementTypes()) {
    SCOPED_TRACE(elementTypeName(type));
    const Mat3 A = skewMap(type);
    const Mesh mesh = singleElement(type, A, Vec3(3, -1, elementDimension(type) == 2 ? 0 : 2));
    EXPECT_NO_THROW(validateMesh(mesh));
    const double det = elementDimension(type) == 2 ? A.topLeftCorner<2, 2>().determinant() : A.determinant();
    EXPECT_NEAR(restVolumes(mesh)[0], det * ReferenceElement::of(type).referenceMeasure(), 1e-13);
  }
}

TEST(MeshTypes, DistortedHexVolumeIsExact) {
  // Lift one top corner: the hex is no longer a parallelepiped (det J varies), its volume is
  // 1 + 0.5 / 4 (the lifted corner raises a bilinear top surface: mean height 1 + 0.5 / 4).
  Mesh mesh = hexCube();
  mesh.rest_positions(7, 2) = 1.5;  // cube corner 7 = (1, 1, 1), hex node 6
  EXPECT_NEAR(restVolumes(mesh)[0], 1.125, 1e-14);
  EXPECT_LT(summarize(mesh).min_scaled_jacobian, 1.0);
}

TEST(MeshTypes, CurvedTet10VolumeIsExact) {
  // Moving edge node 4 (edge 0-1, at (0.5, 0, 0)) by d changes the volume by d . integral
  // of grad N_4 = d . (0, -1/6, -1/6) (a rank-one update of J = I: det is linear in d; the
  // integral of grad N_4 is the boundary integral of N_4 n: A / 3 on the faces y = 0 and
  // z = 0).
  Mesh mesh = referenceTet(ElementType::kTet10);
  mesh.rest_positions(4, 1) = -0.1;
  EXPECT_NEAR(restVolumes(mesh)[0], 1.0 / 6.0 + 0.1 / 6.0, 1e-15);
  const MeshSummary s = summarize(mesh);
  EXPECT_LT(s.min_scaled_jacobian, 1.0);
  EXPECT_GT(s.min_scaled_jacobian, 0.0);
}

TEST(MeshTypes, TriangleAreasIn2DAnd3D) {
  Mesh flat;
  flat.source = "flat";
  flat.element_type = ElementType::kTri3;
  flat.rest_positions.resize(4, 3);
  flat.rest_positions << 0, 0, 0, 2, 0, 0, 2, 1, 0, 0, 1, 0;
  flat.elements.resize(2, 3);
  flat.elements << 0, 1, 2, 0, 2, 3;
  EXPECT_TRUE(isTwoDimensional(flat));
  EXPECT_NEAR(sum(restVolumes(flat)), 2.0, 1e-15);
  // In 2D a clockwise triangle is inverted.
  Mesh flipped = flat;
  std::swap(flipped.elements(1, 1), flipped.elements(1, 2));
  const std::string what = expectInputError(flipped, "element 1");
  EXPECT_NE(what.find("inverted"), std::string::npos) << what;
  EXPECT_NE(what.find("tri3"), std::string::npos) << what;

  // Lifted into 3D (tilted by 45 degrees about x): a surface, area scaled by sqrt 2; the
  // orientation has no sign there.
  Mesh surface = flipped;
  for (int n = 0; n < 4; ++n) surface.rest_positions(n, 2) = surface.rest_positions(n, 1);
  EXPECT_FALSE(isTwoDimensional(surface));
  EXPECT_NEAR(sum(restVolumes(surface)), 2.0 * std::sqrt(2.0), 1e-14);
  // A collinear surface triangle is degenerate (threshold h^2).
  surface.rest_positions.row(3) << 1, 0.5, 0.5;  // on the diagonal 0-2
  surface.rest_positions.row(2) << 2, 1, 1;
  surface.elements.row(1) << 0, 3, 2;
  const std::string flat_what = expectInputError(surface, "element 1");
  EXPECT_NE(flat_what.find("degenerate"), std::string::npos) << flat_what;
  EXPECT_NE(flat_what.find("h^2"), std::string::npos) << flat_what;
}

TEST(MeshTypes, ValidateCatchesInvertedHex) {
  Mesh mesh = hexCube();
  // Bottom and top swapped: the element is mirrored, det J < 0 everywhere.
  for (int k = 0; k < 4; ++k) std::swap(mesh.elements(0, k), mesh.elements(0, k + 4));
  const std::string what = expectInputError(mesh, "element 0");
  EXPECT_NE(what.find("inverted"), std::string::npos) << what;
  EXPECT_NE(what.find("hex8"), std::string::npos) << what;
  EXPECT_NE(what.find("det J = -0.125"), std::string::npos) << what;  // a unit cube: det J = 1/8
  EXPECT_NE(what.find("mirrored"), std::string::npos) << what;
  EXPECT_NE(what.find("threshold"), std::string::npos) << what;
  EXPECT_THROW(restVolumes(mesh), InputError);
  EXPECT_THROW(summarize(mesh), InputError);
  EXPECT_THROW(lumpedNodeMasses(mesh, {1.0}), InputError);
}

TEST(MeshTypes, ValidateCatchesHexWithAFoldedCorner) {
  // Pull hex node 6 (cube corner 7 = (1, 1, 1)) through to (0.1, 0.1, 0.1): the volume stays
  // positive but det J is negative at that node.
  Mesh mesh = hexCube();
  mesh.rest_positions.row(7) << 0.1, 0.1, 0.1;
  const std::string what = expectInputError(mesh, "element 0");
  EXPECT_NE(what.find("inverted"), std::string::npos) << what;
  EXPECT_NE(what.find("at node 6"), std::string::npos) << what;
  EXPECT_NE(what.find("folds over itself"), std::string::npos) << what;
}

TEST(MeshTypes, ValidateCatchesTet10WithAMidsideNodePushedPastTheQuarterPoint) {
  // On edge 0-1 the P2 map is x(t) = X0 N0 + X4 N4 + X1 N1, dx/dt(0) = 4 X4 - 3 X0 - X1: with
  // X4 = (s, 0, 0), dx/du at node 0 is 4 s - 1 < 0 for s < 1/4. The straight corner tet is
  // fine, only det J at node 0 tells.
  Mesh mesh = referenceTet(ElementType::kTet10);
  mesh.rest_positions(4, 0) = 0.3;
  EXPECT_NO_THROW(validateMesh(mesh));
  mesh.rest_positions(4, 0) = 0.2;
  const std::string what = expectInputError(mesh, "element 0");
  EXPECT_NE(what.find("inverted"), std::string::npos) << what;
  EXPECT_NE(what.find("tet10"), std::string::npos) << what;
  EXPECT_NE(what.find("at node 0"), std::string::npos) << what;
}

TEST(MeshTypes, ValidateChecksColumnsPerType) {
  Mesh mesh = hexCube();
  mesh.element_type = ElementType::kTet10;
  const std::string what = expectInputError(mesh, "elements");
  EXPECT_NE(what.find("tet10 needs 10 nodes"), std::string::npos) << what;
  mesh = pyramidCube();
  mesh.elements(2, 4) = 9;
  expectInputError(mesh, "element 2");
}

TEST(MeshTypes, LumpedMassesPositiveAndSumToDensityTimesVolume) {
  std::vector<Mesh> meshes = {fiveTetCube(), hexCube(), prismCube(), pyramidCube()};
  for (ElementType type : allElementTypes()) meshes.push_back(singleElement(type, skewMap(type), Vec3::Zero()));
  Mesh distorted = hexCube();
  distorted.rest_positions(7, 2) = 1.5;
  meshes.push_back(distorted);
  Mesh curved = referenceTet(ElementType::kTet20);
  curved.rest_positions(19, 0) += 0.05;  // tet20 with its inner-face node moved
  meshes.push_back(curved);
  for (const Mesh& mesh : meshes) {
    for (MassLumping lumping : {MassLumping::kEqualShare, MassLumping::kHrz}) {
      SCOPED_TRACE(mesh.source + " " + massLumpingName(lumping));
      std::vector<double> rho(static_cast<std::size_t>(mesh.numElements()));
      for (std::size_t e = 0; e < rho.size(); ++e) rho[e] = 10.0 + e;
      const std::vector<double> v = restVolumes(mesh);
      double expected = 0;
      for (std::size_t e = 0; e < rho.size(); ++e) expected += rho[e] * v[e];
      const VecX m = lumpedNodeMasses(mesh, rho, lumping);
      ASSERT_EQ(m.size(), mesh.numNodes());
      EXPECT_NEAR(m.sum(), expected, 1e-12 * expected);
      EXPECT_GT(m.minCoeff(), 0.0);
    }
  }
}

TEST(MeshTypes, EqualShareIsPxpbdEq50ForEveryNode) {
  // Every node of a tet10 (corner or midside) gets rho V / 10.
  const Mesh mesh = singleElement(ElementType::kTet10, skewMap(ElementType::kTet10), Vec3::Zero());
  const double V = restVolumes(mesh)[0];
  const VecX m = lumpedNodeMasses(mesh, {2.0});
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(m[i], 2.0 * V / 10.0, 1e-15);
  EXPECT_EQ(lumpedNodeMasses(mesh, {2.0}, MassLumping::kEqualShare), m);
}

// The consistent mass matrix of element 0, M_ij = integral rho N_i N_j |det J|, with the
// element's mass quadrature.
Eigen::MatrixXd consistentMass(const Mesh& mesh, double rho) {
  const ReferenceElement& ref = ReferenceElement::of(mesh.element_type);
  const QuadratureRule rule = ref.quadrature(ref.massQuadratureDegree());
  const ElementNodes X = elementRestPositions(mesh, 0);
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(ref.numNodes(), ref.numNodes());
  for (int q = 0; q < rule.size(); ++q) {
    const Eigen::VectorXd N = ref.shapeValues(rule.points[q]);
    const Mat3 J = X.transpose() * ref.shapeGradients(rule.points[q]);
    M += rho * rule.weights[q] * std::abs(J.determinant()) * N * N.transpose();
  }
  return M;
}

TEST(MeshTypes, RowSumLumpingOfTet10HasNegativeVertexMassesHrzDoesNot) {
  // Why the project lumps by equal share or HRZ: the row sums of the P2 consistent mass
  // (integral rho N_i) are -rho V / 20 at the vertices and rho V / 5 at the edge nodes.
  const Mesh mesh = singleElement(ElementType::kTet10, skewMap(ElementType::kTet10), Vec3(1, 2, 3));
  const double rho = 3.0;
  const double V = restVolumes(mesh)[0];
  const Eigen::MatrixXd M = consistentMass(mesh, rho);
  EXPECT_NEAR(M.sum(), rho * V, 1e-13);
  const VecX row_sums = M.rowwise().sum();
  for (int i = 0; i < 4; ++i) {
    EXPECT_LE(row_sums[i], 0.0) << "vertex " << i;
    EXPECT_NEAR(row_sums[i], -rho * V / 20.0, 1e-13);
  }
  for (int i = 4; i < 10; ++i) EXPECT_NEAR(row_sums[i], rho * V / 5.0, 1e-13);

  // HRZ: diagonal V/70 (vertex) and 8V/105 (edge), scaled to rho V: 1/36 and 4/27 of it.
  const VecX hrz = lumpedNodeMasses(mesh, {rho}, MassLumping::kHrz);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(hrz[i], rho * V / 36.0, 1e-13);
  for (int i = 4; i < 10; ++i) EXPECT_NEAR(hrz[i], rho * V * 4.0 / 27.0, 1e-13);
  // ... and HRZ is the consistent diagonal scaled to the element mass.
  const VecX diagonal = M.diagonal();
  EXPECT_LT((hrz - diagonal * (rho * V / diagonal.sum())).norm(), 1e-13);
}

TEST(MeshTypes, MassLumpingNames) {
  EXPECT_EQ(parseMassLumping("equal_share"), MassLumping::kEqualShare);
  EXPECT_EQ(parseMassLumping("hrz"), MassLumping::kHrz);
  EXPECT_EQ(massLumpingName(MassLumping::kHrz), "hrz");
  EXPECT_EQ(massLumpingName(MassLumping::kEqualShare), "equal_share");
  EXPECT_THROW(parseMassLumping("row_sum"), std::invalid_argument);
}

TEST(MeshTypes, SummaryFields) {
  // Five-tet cube: the corner tets have right angles at the corner and arccos(1/sqrt 3) =
  // 54.74 degrees at their slanted face; the central regular tet arccos(1/3) = 70.53.
  MeshSummary s = summarize(fiveTetCube());
  EXPECT_EQ(s.element_type, ElementType::kTet4);
  EXPECT_EQ(s.elements_per_type, (std::map<std::string, int>{{"tet4", 5}}));
  EXPECT_NEAR(s.min_dihedral_angle_deg, std::acos(1.0 / std::sqrt(3.0)) * 180.0 / std::acos(-1.0), 1e-10);
  EXPECT_NEAR(s.min_scaled_jacobian, 1.0, 1e-14);

  s = summarize(hexCube());
  EXPECT_EQ(s.elements_per_type, (std::map<std::string, int>{{"hex8", 1}}));
  EXPECT_NEAR(s.min_dihedral_angle_deg, 90.0, 1e-10);
  EXPECT_NEAR(s.min_scaled_jacobian, 1.0, 1e-14);
  EXPECT_NEAR(s.total_volume, 1.0, 1e-14);

  // Right prisms on right isosceles triangles: 45 degrees at the vertical edges.
  s = summarize(prismCube());
  EXPECT_EQ(s.elements_per_type, (std::map<std::string, int>{{"prism6", 2}}));
  EXPECT_NEAR(s.min_dihedral_angle_deg, 45.0, 1e-10);
  EXPECT_NEAR(s.min_volume, 0.5, 1e-14);
  EXPECT_NEAR(s.max_volume, 0.5, 1e-14);

  // Pyramids of height 1/2 on unit squares: 45 degrees between base and sides.
  s = summarize(pyramidCube());
  EXPECT_EQ(s.nodes, 9);
  EXPECT_EQ(s.elements, 6);
  EXPECT_EQ(s.element_type, ElementType::kPyramid5);
  EXPECT_NEAR(s.min_dihedral_angle_deg, 45.0, 1e-10);
  EXPECT_NEAR(s.min_scaled_jacobian, 1.0, 1e-14);
  EXPECT_NEAR(s.total_volume, 1.0, 1e-14);

  // Distorted hex: scaled Jacobian in (0, 1); tet20 on the reference tet: right angles and
  // arccos(1/sqrt 3).
  Mesh distorted = hexCube();
  distorted.rest_positions(7, 2) = 1.5;
  s = summarize(distorted);
  EXPECT_GT(s.min_scaled_jacobian, 0.0);
  EXPECT_LT(s.min_scaled_jacobian, 1.0);
  s = summarize(referenceTet(ElementType::kTet20));
  EXPECT_EQ(s.elements_per_type, (std::map<std::string, int>{{"tet20", 1}}));
  EXPECT_NEAR(s.min_dihedral_angle_deg, std::acos(1.0 / std::sqrt(3.0)) * 180.0 / std::acos(-1.0), 1e-10);

  // Triangles: the smallest interior angle.
  s = summarize(singleElement(ElementType::kTri3, Mat3::Identity(), Vec3::Zero()));
  EXPECT_NEAR(s.min_dihedral_angle_deg, 45.0, 1e-10);
  EXPECT_NEAR(s.total_volume, 0.5, 1e-15);

  // An empty mesh summarizes to zeros.
  s = summarize(Mesh{});
  EXPECT_EQ(s.elements, 0);
  EXPECT_TRUE(s.elements_per_type.empty());
}

fs::path freshTempDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() /
                       ("pbdlab_test_mesh_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(AtomicFile, WritesContentsAndLeavesNoTempFile) {
  const fs::path dir = freshTempDir("atomic");
  const std::string path = (dir / "out.txt").string();
  writeFileAtomically(path, "first\n");
  writeFileAtomically(path, "second line\nwith two lines\n");
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_EQ(contents.str(), "second line\nwith two lines\n");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "out.txt");
  }
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

TEST(AtomicFile, MissingFolderThrowsNamingPathAndLeavesNothing) {
  const fs::path dir = freshTempDir("atomic_missing");
  const std::string path = (dir / "no_such_folder" / "out.txt").string();
  try {
    writeFileAtomically(path, "x");
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(AtomicFile, RenameFailureRemovesTempFile) {
  // The target is an existing non-empty folder: rename fails after the temp file is written.
  const fs::path dir = freshTempDir("atomic_rename");
  const fs::path target = dir / "occupied";
  fs::create_directories(target / "inside");
  EXPECT_THROW(writeFileAtomically(target.string(), "x"), std::runtime_error);
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++entries;
    EXPECT_EQ(entry.path().filename(), "occupied");
  }
  EXPECT_EQ(entries, 1);
  fs::remove_all(dir);
}

// A 2 x 2 x 2 grid of cubes, each split like fiveTetCube (unmirrored, but that does not
// matter for coloring): 27 nodes, 40 tets.
Mesh gridOfCubes() {
  const Mesh cube = fiveTetCube();
  Mesh mesh;
  mesh.source = "grid";
  mesh.rest_positions.resize(27, 3);
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) mesh.rest_positions.row(i + 3 * j + 9 * k) << i, j, k;
  mesh.elements.resize(40, 4);
  int e = 0;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i)
        for (int t = 0; t < 5; ++t, ++e)
          for (int c = 0; c < 4; ++c) {
            const int n = cube.elements(t, c);
            mesh.elements(e, c) = (i + (n & 1)) + 3 * (j + ((n >> 1) & 1)) + 9 * (k + ((n >> 2) & 1));
          }
  return mesh;
}

TEST(Coloring, GreedyColoringIsValidAndDeterministic) {
  const Mesh mesh = gridOfCubes();
  const Coloring coloring = colorElements(mesh);
  EXPECT_TRUE(isValidElementColoring(mesh, coloring));
  EXPECT_GE(coloring.numColors(), 5);  // the 5 tets of one cube share a node pairwise
  const std::vector<int> sizes = coloring.sizes();
  ASSERT_EQ(static_cast<int>(sizes.size()), coloring.numColors());
  int total = 0;
  for (int s : sizes) {
    EXPECT_GT(s, 0);
    total += s;
  }
  EXPECT_EQ(total, 40);
  EXPECT_EQ(colorElements(mesh).groups, coloring.groups);
  // Greedy in element order: element 0 takes color 0.
  EXPECT_EQ(coloring.groups[0].front(), 0);
}

TEST(Coloring, InvalidColoringsAreRejected) {
  const Mesh mesh = fiveTetCube();
  Coloring one_color;
  one_color.groups = {{0, 1, 2, 3, 4}};
  EXPECT_FALSE(isValidElementColoring(mesh, one_color));
  Coloring missing;
  missing.groups = {{0}, {1}, {2}, {3}};
  EXPECT_FALSE(isValidElementColoring(mesh, missing));
  Coloring twice;
  twice.groups = {{0}, {1}, {2}, {3}, {4}, {4}};
  EXPECT_FALSE(isValidElementColoring(mesh, twice));
  Coloring good;
  good.groups = {{0}, {1}, {2}, {3}, {4}};
  EXPECT_TRUE(isValidElementColoring(mesh, good));
  EXPECT_TRUE(isValidElementColoring(mesh, colorElements(mesh)));
  EXPECT_EQ(colorElements(mesh).numColors(), 5);
}

TEST(Coloring, DisjointElementsShareAColor) {
  Mesh mesh;
  mesh.rest_positions.resize(8, 3);
  mesh.rest_positions << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1,  //
      5, 0, 0, 6, 0, 0, 5, 1, 0, 5, 0, 1;
  mesh.elements.resize(2, 4);
  mesh.elements << 0, 1, 2, 3, 4, 5, 6, 7;
  const Coloring coloring = colorElements(mesh);
  EXPECT_EQ(coloring.numColors(), 1);
  EXPECT_EQ(coloring.sizes(), std::vector<int>{2});
}

}  // namespace
}  // namespace pbdlab
