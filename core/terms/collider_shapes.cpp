#include "core/terms/collider_shapes.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pbdlab {

PlaneCollider makePlaneCollider(const Vec3& point, const Vec3& normal) {
  const double length = normal.norm();
  if (!point.allFinite() || !std::isfinite(length) || !(length > 0.0))
    throw std::invalid_argument("plane collider: the normal must be a finite non-zero vector");
  return PlaneCollider{point, normal / length};
}

SphereCollider makeSphereCollider(const Vec3& center, double radius) {
  if (!center.allFinite() || !std::isfinite(radius) || !(radius > 0.0))
    throw std::invalid_argument("sphere collider: the radius must be positive and finite");
  return SphereCollider{center, radius};
}

BoxCollider makeBoxCollider(const Vec3& center, const Vec3& half_extents) {
  if (!center.allFinite() || !half_extents.allFinite() || !(half_extents.minCoeff() > 0.0))
    throw std::invalid_argument("box collider: the half extents must be positive and finite");
  return BoxCollider{center, half_extents};
}

double signedDistance(const PlaneCollider& plane, const Vec3& x, Vec3* gradient,
                      Mat3* hessian) {
  if (gradient) *gradient = plane.normal;
  if (hessian) hessian->setZero();
  return (x - plane.point).dot(plane.normal);
}

Vec3 closestPoint(const PlaneCollider& plane, const Vec3& x, Vec3* normal) {
  if (normal) *normal = plane.normal;
  return x - (x - plane.point).dot(plane.normal) * plane.normal;
}

double signedDistance(const SphereCollider& sphere, const Vec3& x, Vec3* gradient,
                      Mat3* hessian) {
  const Vec3 d = x - sphere.center;
  const double distance = d.norm();
  if (!(distance > 0.0)) {
    if (gradient) *gradient = Vec3::UnitZ();
    if (hessian) hessian->setZero();
    return -sphere.radius;
  }
  const Vec3 n = d / distance;
  if (gradient) *gradient = n;
  if (hessian) *hessian = (Mat3::Identity() - n * n.transpose()) / distance;
  return distance - sphere.radius;
}

Vec3 closestPoint(const SphereCollider& sphere, const Vec3& x, Vec3* normal) {
  const Vec3 d = x - sphere.center;
  const double distance = d.norm();
  const Vec3 n = distance > 0.0 ? Vec3(d / distance) : Vec3(Vec3::UnitZ());
  if (normal) *normal = n;
  return sphere.center + sphere.radius * n;
}

double signedDistance(const BoxCollider& box, const Vec3& x, Vec3* gradient,
                      Mat3* hessian) {
  const Vec3 d = x - box.center;
  Vec3 sign, q;
  for (int i = 0; i < 3; ++i) {
    sign(i) = d(i) < 0.0 ? -1.0 : 1.0;
    q(i) = std::abs(d(i)) - box.half_extents(i);
  }
  if (q.maxCoeff() > 0.0) {
    const Vec3 v = sign.cwiseProduct(q.cwiseMax(0.0));
    const double distance = v.norm();
    const Vec3 n = v / distance;
    if (gradient) *gradient = n;
    if (hessian) {
      Mat3 active = Mat3::Zero();
      for (int i = 0; i < 3; ++i)
        if (q(i) > 0.0) active(i, i) = 1.0;
      *hessian = (active - n * n.transpose()) / distance;
    }
    return distance;
  }
  int k = 0;
  const double phi = q.maxCoeff(&k);
  if (gradient) *gradient = sign(k) * Vec3::Unit(k);
  if (hessian) hessian->setZero();
  return phi;
}

Vec3 closestPoint(const BoxCollider& box, const Vec3& x, Vec3* normal) {
  const Vec3 d = x - box.center;
  Vec3 q;
  for (int i = 0; i < 3; ++i) q(i) = std::abs(d(i)) - box.half_extents(i);
  if (q.maxCoeff() > 0.0) {
    const Vec3 p = box.center + d.cwiseMax(-box.half_extents).cwiseMin(box.half_extents);
    if (normal) *normal = (x - p).normalized();
    return p;
  }
  int k = 0;
  q.maxCoeff(&k);
  const double s = d(k) < 0.0 ? -1.0 : 1.0;
  Vec3 p = x;
  p(k) = box.center(k) + s * box.half_extents(k);
  if (normal) *normal = s * Vec3::Unit(k);
  return p;
}

double signedDistance(const ColliderShape& shape, const Vec3& x, Vec3* gradient,
                      Mat3* hessian) {
  return std::visit([&](const auto& s) { return signedDistance(s, x, gradient, hessian); }, shape);
}

Vec3 closestPoint(const ColliderShape& shape, const Vec3& x, Vec3* normal) {
  return std::visit([&](const auto& s) { return closestPoint(s, x, normal); }, shape);
}

}  // namespace pbdlab
