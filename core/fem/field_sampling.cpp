#include "core/fem/field_sampling.hpp"

#include <Eigen/LU>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/fem/reference_element.hpp"

namespace pbdlab {

namespace {

// Whether r lies in the reference element of `type`, within tol.
bool insideReference(ElementType type, const Vec3& r, double tol) {
  const double u = r.x(), v = r.y(), w = r.z();
  switch (type) {
    case ElementType::kTet4:
    case ElementType::kTet10:
    case ElementType::kTet20:
      return u >= -tol && v >= -tol && w >= -tol && u + v + w <= 1 + tol;
    case ElementType::kHex8:
      return r.cwiseAbs().maxCoeff() <= 1 + tol;
    case ElementType::kPrism6:
      return u >= -tol && v >= -tol && u + v <= 1 + tol && std::abs(w) <= 1 + tol;
    case ElementType::kPyramid5:
      return w >= -tol && w <= 1 + tol && std::abs(u) <= 1 - w + tol && std::abs(v) <= 1 - w + tol;
    case ElementType::kTri3:
      return u >= -tol && v >= -tol && u + v <= 1 + tol;
  }
  return false;
}

// A point inside every reference element, to start Newton from.
Vec3 referenceCentre(ElementType type) {
  switch (type) {
    case ElementType::kHex8: return Vec3::Zero();
    case ElementType::kPrism6: return Vec3(1.0 / 3, 1.0 / 3, 0.0);
    case ElementType::kPyramid5: return Vec3(0.0, 0.0, 0.25);
    case ElementType::kTri3: return Vec3(1.0 / 3, 1.0 / 3, 0.0);
    default: return Vec3::Constant(0.25);
  }
}

}  // namespace

FieldSampler::FieldSampler(const Mesh& mesh) : mesh_(&mesh) {
  if (mesh.numNodes() == 0) throw std::invalid_argument("FieldSampler: the mesh " + mesh.source + " has no nodes");
  // The bucket grid spans the rest bounding box, padded so that points on its faces fall
  // inside. A flat mesh (a 2D mesh in z = 0, a flat cloth) has a zero extent along some axis:
  // that axis gets one cell, and the grid divides only the others, about one element per bucket.
  const Vec3 lo = mesh.rest_positions.colwise().minCoeff().transpose();
  const Vec3 hi = mesh.rest_positions.colwise().maxCoeff().transpose();
  const double extent = std::max((hi - lo).maxCoeff(), 1e-300);
  const double pad = 1e-9 * extent;
  int spanned_axes = 0;
  double spanned_volume = 1.0;  // the product of the spanned extents, relative to `extent`
  for (int k = 0; k < 3; ++k)
    if (hi[k] - lo[k] > 1e-12 * extent) {
      ++spanned_axes;
      spanned_volume *= (hi[k] - lo[k]) / extent;
    }
  const double per_axis =
      spanned_axes == 0 ? 1.0 : std::pow(std::max(1, mesh.numElements()) / spanned_volume, 1.0 / spanned_axes);
  for (int k = 0; k < 3; ++k) {
    const bool spanned = hi[k] - lo[k] > 1e-12 * extent;
    cells_[k] = spanned ? std::clamp(static_cast<int>(std::ceil(per_axis * (hi[k] - lo[k]) / extent)), 1, 512) : 1;
    // A flat axis' one cell is as thick as the mesh is wide: the element test decides
    // whether a point off the mesh's plane is on it.
    const double half_width = spanned ? 0.5 * (hi[k] - lo[k]) + pad : 0.5 * extent;
    origin_[k] = 0.5 * (lo[k] + hi[k]) - half_width;
    cell_size_[k] = 2.0 * half_width / cells_[k];
  }
  // The buckets in CSR form (one array, not a vector per bucket: at Res 64 the per-bucket
  // vectors cost some 150 MB in small allocations), filled in two passes over the elements'
  // bucket ranges; each bucket lists its elements in ascending order.
  const size_t num_buckets = static_cast<size_t>(cells_[0]) * cells_[1] * cells_[2];
  const int n = nodesPerElement(mesh.element_type);
  auto forEachBucketOf = [&](int e, auto&& visit) {
    Vec3 emin = Vec3::Constant(INFINITY), emax = Vec3::Constant(-INFINITY);
    for (int a = 0; a < n; ++a) {
      emin = emin.cwiseMin(mesh.restPosition(mesh.elements(e, a)));
      emax = emax.cwiseMax(mesh.restPosition(mesh.elements(e, a)));
    }
    std::array<int, 3> first, last;
    for (int k = 0; k < 3; ++k) {
      first[k] = std::clamp(static_cast<int>(std::floor((emin[k] - origin_[k]) / cell_size_[k])), 0, cells_[k] - 1);
      last[k] = std::clamp(static_cast<int>(std::floor((emax[k] - origin_[k]) / cell_size_[k])), 0, cells_[k] - 1);
    }
    for (int i = first[0]; i <= last[0]; ++i)
      for (int j = first[1]; j <= last[1]; ++j)
        for (int k = first[2]; k <= last[2]; ++k) visit((static_cast<size_t>(i) * cells_[1] + j) * cells_[2] + k);
  };
  bucket_start_.assign(num_buckets + 1, 0);
  for (int e = 0; e < mesh.numElements(); ++e) forEachBucketOf(e, [&](size_t b) { ++bucket_start_[b + 1]; });
  for (size_t b = 0; b < num_buckets; ++b) bucket_start_[b + 1] += bucket_start_[b];
  bucket_elements_.resize(bucket_start_[num_buckets]);
  std::vector<size_t> next(bucket_start_.begin(), bucket_start_.end() - 1);
  for (int e = 0; e < mesh.numElements(); ++e) forEachBucketOf(e, [&](size_t b) { bucket_elements_[next[b]++] = e; });
}

int FieldSampler::bucketIndex(const Vec3& X) const {
  std::array<int, 3> c;
  for (int k = 0; k < 3; ++k) {
    const double s = (X[k] - origin_[k]) / cell_size_[k];
    if (s < -1e-9 * cells_[k] || s > cells_[k] * (1 + 1e-9)) return -1;
    c[k] = std::clamp(static_cast<int>(std::floor(s)), 0, cells_[k] - 1);
  }
  return static_cast<int>((static_cast<size_t>(c[0]) * cells_[1] + c[1]) * cells_[2] + c[2]);
}

FieldSampler::Location FieldSampler::locate(const Vec3& X, double tolerance) const {
  const int bucket = bucketIndex(X);
  if (bucket < 0) return {};
  const ElementType type = mesh_->element_type;
  const ReferenceElement& reference = ReferenceElement::of(type);
  const int dimension = reference.dimension();
  for (size_t p = bucket_start_[bucket]; p < bucket_start_[bucket + 1]; ++p) {
    const int e = bucket_elements_[p];
    const ElementNodes nodes = elementRestPositions(*mesh_, e);
    // Newton (Gauss-Newton for a triangle, whose map X(r) spans a plane in 3D: the step is
    // the least-squares one, and X's distance from the plane is what remains).
    Vec3 r = referenceCentre(type);
    Vec3 residual = Vec3::Zero();
    bool converged = false;
    for (int it = 0; it < 30; ++it) {
      residual = nodes.transpose() * reference.shapeValues(r) - X;
      const Mat3 J = nodes.transpose() * reference.shapeGradients(r);
      Vec3 step = Vec3::Zero();
      if (dimension == 3)
        step = J.fullPivLu().solve(residual);
      else
        step.head<2>() = J.leftCols<2>().colPivHouseholderQr().solve(residual);
      r -= step;
      if (!r.allFinite()) break;
      if (step.norm() < 1e-13) {
        converged = true;
        break;
      }
    }
    if (!converged || !insideReference(type, r, tolerance)) continue;
    // A triangle of a surface (or of a 2D mesh) contains X only if X lies on its plane, within
    // kSurfaceDistance of the element's size (a volume element's Newton residual is round-off).
    if (dimension == 2) {
      residual = nodes.transpose() * reference.shapeValues(r) - X;
      const double size = (nodes.colwise().maxCoeff() - nodes.colwise().minCoeff()).norm();
      if (residual.norm() > kSurfaceDistance * size) continue;
    }
    return {e, r};
  }
  return {};
}

Vec3 FieldSampler::sample(const VecX& nodal_field, const Vec3& X) const {
  const Location location = locate(X);
  if (location.element < 0)
    throw std::out_of_range("FieldSampler: point (" + std::to_string(X.x()) + ", " + std::to_string(X.y()) + ", " +
                            std::to_string(X.z()) + ") is outside the mesh " + mesh_->source);
  const Eigen::VectorXd N = ReferenceElement::of(mesh_->element_type).shapeValues(location.reference);
  Vec3 value = Vec3::Zero();
  for (int a = 0; a < N.size(); ++a) value += N[a] * nodal_field.segment<3>(3 * mesh_->elements(location.element, a));
  return value;
}

BlockFieldSampler::BlockFieldSampler(std::vector<std::shared_ptr<const Mesh>> blocks) : blocks_(std::move(blocks)) {
  if (blocks_.empty()) throw std::invalid_argument("BlockFieldSampler: needs at least one element block");
  for (const auto& block : blocks_) samplers_.emplace_back(*block);
}

BlockFieldSampler::Location BlockFieldSampler::locate(const Vec3& X, double tolerance) const {
  for (size_t b = 0; b < samplers_.size(); ++b) {
    const FieldSampler::Location at = samplers_[b].locate(X, tolerance);
    if (at.element >= 0) return {static_cast<int>(b), at};
  }
  return {};
}

Vec3 BlockFieldSampler::sample(const VecX& nodal_field, const Vec3& X) const {
  const Location location = locate(X);
  if (location.block < 0) {
    std::string sources;
    for (const auto& block : blocks_) sources += (sources.empty() ? "" : ", ") + block->source;
    throw std::out_of_range("BlockFieldSampler: point (" + std::to_string(X.x()) + ", " + std::to_string(X.y()) + ", " +
                            std::to_string(X.z()) + ") is outside the mesh " + sources);
  }
  const Mesh& mesh = *blocks_[static_cast<size_t>(location.block)];
  const Eigen::VectorXd N = ReferenceElement::of(mesh.element_type).shapeValues(location.at.reference);
  Vec3 value = Vec3::Zero();
  for (int a = 0; a < N.size(); ++a) value += N[a] * nodal_field.segment<3>(3 * mesh.elements(location.at.element, a));
  return value;
}

}  // namespace pbdlab
