#include "solvers/ml_xpbd/rigid_body.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cmath>
#include <stdexcept>

namespace pbdlab::ml_xpbd {

Mat3 crossMatrix(const Vec3& a) {
  Mat3 m;
  m << 0.0, -a.z(), a.y(), a.z(), 0.0, -a.x(), -a.y(), a.x(), 0.0;
  return m;
}

Mat3 rotationFromVector(const Vec3& theta) {
  const double angle_squared = theta.squaredNorm();
  const Mat3 k = crossMatrix(theta);
  double sin_term, cos_term;  // sin(a)/a and (1 - cos a)/a^2
  if (angle_squared < 1e-8) {  // |theta| < 1e-4: the next Taylor terms are below 1e-18
    sin_term = 1.0 - angle_squared / 6.0;
    cos_term = 0.5 - angle_squared / 24.0;
  } else {
    const double angle = std::sqrt(angle_squared);
    sin_term = std::sin(angle) / angle;
    cos_term = (1.0 - std::cos(angle)) / angle_squared;
  }
  return Mat3::Identity() + sin_term * k + cos_term * k * k;
}

Mat3 inertiaPseudoInverse(const Mat3& inertia) {
  const double trace = inertia.trace();
  if (!(trace > 0.0)) return Mat3::Zero();  // a point mass: no rotational inertia at all
  Eigen::SelfAdjointEigenSolver<Mat3> eigen(inertia);
  const double cutoff = kInertiaCutoff * trace;
  Vec3 inverse_eigenvalues;
  for (int k = 0; k < 3; ++k) {
    const double lambda = eigen.eigenvalues()[k];
    inverse_eigenvalues[k] = lambda > cutoff ? 1.0 / lambda : 0.0;
  }
  return eigen.eigenvectors() * inverse_eigenvalues.asDiagonal() * eigen.eigenvectors().transpose();
}

namespace {

bool isPlanar(const RigidBody& body) { return body.dimension == BodyDimension::k2d; }

// In 2D only the rotation about z exists: keep the in-plane part of a vector.
Vec3 inPlane(const Vec3& a) { return {a.x(), a.y(), 0.0}; }

}  // namespace

RigidBody makeRigidBody(BodyDimension dimension, const std::vector<int>& vertices, const VecX& node_masses,
                        const Positions& x, const Positions& v) {
  if (vertices.empty()) throw std::invalid_argument("rigid body: no vertex");
  RigidBody body;
  body.dimension = dimension;
  body.vertices = vertices;
  const bool planar = dimension == BodyDimension::k2d;

  Vec3 momentum = Vec3::Zero();
  Vec3 weighted_position = Vec3::Zero();
  for (int node : vertices) {
    const double m = node_masses[node];
    body.mass += m;                                   // eq. 21
    weighted_position += m * x.segment<3>(3 * node);  // eq. 22
    momentum += m * v.segment<3>(3 * node);           // eq. 23
  }
  if (!(body.mass > 0.0)) throw std::invalid_argument("rigid body: zero mass");
  body.centre = weighted_position / body.mass;
  body.centre_velocity = momentum / body.mass;
  if (planar) body.centre_velocity.z() = 0.0;

  body.offsets.resize(vertices.size());
  Vec3 spin_momentum = Vec3::Zero();  // sum m r x (v - v_r), eq. 26
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const int node = vertices[i];
    const double m = node_masses[node];
    Vec3 r = x.segment<3>(3 * node) - body.centre;  // eq. 24
    if (planar) r.z() = 0.0;
    body.offsets[i] = r;
    const Vec3 relative_velocity = v.segment<3>(3 * node) - body.centre_velocity;
    spin_momentum += m * r.cross(planar ? inPlane(relative_velocity) : relative_velocity);
    if (planar) {
      body.inertia(2, 2) += m * r.squaredNorm();  // the scalar sum m |r|^2
    } else {
      const Mat3 r_cross = crossMatrix(r);
      body.inertia += m * r_cross.transpose() * r_cross;  // eq. 25
    }
  }
  if (planar) {
    const double izz = body.inertia(2, 2);
    // Coincident vertices only (a planar body of distinct points always has inertia).
    body.inverse_inertia(2, 2) = izz > 0.0 ? 1.0 / izz : 0.0;
  } else {
    body.inverse_inertia = inertiaPseudoInverse(body.inertia);
  }
  body.angular_velocity = body.inverse_inertia * spin_momentum;  // eq. 26
  return body;
}

void stepRigidBody(RigidBody& body, double h, GyroscopicTerm gyroscopic) {
  body.centre += h * body.centre_velocity;  // eq. 4
  if (!isPlanar(body) && gyroscopic == GyroscopicTerm::kOn) {
    // Eq. 10 without torque: omega += -h I_w^-1 (omega x I_w omega). A planar body spins about
    // a principal axis (z), where the term vanishes.
    const Mat3 world_inertia = body.worldInertia();
    body.angular_velocity -=
        h * body.worldInverseInertia() * body.angular_velocity.cross(world_inertia * body.angular_velocity);
  }
  body.step_rotation = rotationFromVector(h * body.angular_velocity);  // eq. 11
  body.rotation = body.step_rotation * body.rotation;
}

void placeBodyVertices(const RigidBody& body, Positions& x) {
  const bool planar = isPlanar(body);
  for (std::size_t i = 0; i < body.vertices.size(); ++i) {
    const Vec3 point = body.bodyPoint(static_cast<int>(i));  // eq. 12
    const int node = body.vertices[i];
    if (planar)
      x.segment<2>(3 * node) = point.head<2>();
    else
      x.segment<3>(3 * node) = point;
  }
}

void updateResidualVelocities(const RigidBody& body, const Positions& x_before, const Positions& x, double h,
                              Positions& v) {
  const int used = isPlanar(body) ? 2 : 3;
  for (int node : body.vertices) {
    // Eq. 27: the residual is an unstepped velocity at t, rotated into the stepped frame.
    const Vec3 rotated = body.step_rotation * v.segment<3>(3 * node);
    const Vec3 stepped = (x.segment<3>(3 * node) - x_before.segment<3>(3 * node)) / h;
    v.segment(3 * node, used) = (rotated - stepped).head(used);
  }
}

void rotateResidualVelocities(const RigidBody& body, const Mat3& rotation, Positions& v) {
  const int used = isPlanar(body) ? 2 : 3;
  for (int node : body.vertices) {
    const Vec3 rotated = rotation * v.segment<3>(3 * node);
    v.segment(3 * node, used) = rotated.head(used);
  }
}

double generalizedInverseMass(const RigidBody& body, int local_vertex, const Vec3& unit_direction,
                              MassSplitting splitting, int constraint_count) {
  const Vec3 arm = body.rotation * body.offsets[local_vertex];  // r^g = R r_i
  const Vec3 moment = arm.cross(unit_direction);
  const double rotational = moment.dot(body.worldInverseInertia() * moment);
  const double split = static_cast<double>(std::max(constraint_count, 1));
  // Eq. 15 splits the linear term only; Tonge's splitting divides the whole body (both terms).
  const double rotational_split = splitting == MassSplitting::kTonge ? split : 1.0;
  return split / body.mass + rotational_split * rotational;
}

namespace {

// The body side of a constraint with gradient `unit_direction` at its point: the position
// impulse P = dlambda u moves the centre by P / m_r and turns the body by I_w^-1 (r^g x P)
// (the un-split masses: mass splitting averages the sub-bodies' corrections, which sums them
// with the whole body's mass).
void accumulateBodyShare(const RigidBody& body, int local_vertex, const Vec3& impulse, BodyCorrection& correction) {
  const Vec3 arm = body.rotation * body.offsets[local_vertex];
  correction.translation += impulse / body.mass;
  correction.rotation += body.worldInverseInertia() * arm.cross(impulse);
}

}  // namespace

ProjectionResult projectCoupling(const RigidBody& body, int local_vertex, double vertex_mass, MassSplitting splitting,
                                 int constraint_count, Positions& x, BodyCorrection& correction) {
  ProjectionResult result;
  const int node = body.vertices[local_vertex];
  Vec3 gap = x.segment<3>(3 * node) - body.bodyPoint(local_vertex);  // x_i - (R r_i + x_r)
  if (isPlanar(body)) gap.z() = 0.0;
  result.constraint = gap.norm();  // eq. 13 as a norm
  if (result.constraint == 0.0) return result;  // the direction is undefined; nothing to do
  const Vec3 direction = gap / result.constraint;  // d
  result.generalized_inverse_mass = generalizedInverseMass(body, local_vertex, direction, splitting, constraint_count);
  const double vertex_inverse_mass = vertex_mass > 0.0 ? 1.0 / vertex_mass : 0.0;
  // Eq. 14 with alpha~ = 0 (hard).
  result.delta_lambda = -result.constraint / (result.generalized_inverse_mass + vertex_inverse_mass);
  const Vec3 impulse = result.delta_lambda * direction;  // p, eq. 16
  result.vertex_displacement = vertex_inverse_mass * impulse;  // eq. 17
  x.segment<3>(3 * node) += result.vertex_displacement;
  // The body's gradient is -d: eq. 18-19 (dx_r = -p / m_r, dtheta = -I^-1 (r^g x p)).
  accumulateBodyShare(body, local_vertex, -impulse, correction);
  return result;
}

ProjectionResult projectFixedPointContact(const RigidBody& body, int local_vertex, const Vec3& point,
                                          const Vec3& normal, double compliance_tilde, double& lambda,
                                          MassSplitting splitting, int constraint_count, BodyCorrection& correction) {
  ProjectionResult result;
  Vec3 unit_normal = normal;
  if (isPlanar(body)) unit_normal.z() = 0.0;
  const double separation = unit_normal.dot(body.bodyPoint(local_vertex) - point);
  result.constraint = std::min(separation, 0.0);  // eq. 28 with n outward: C < 0 inside
  // Inactive, with no force left to release.
  if (result.constraint == 0.0 && lambda == 0.0) return result;
  result.generalized_inverse_mass = generalizedInverseMass(body, local_vertex, unit_normal, splitting, constraint_count);
  // Eq. 5 with the fixed point's inverse mass 0; lambda stays >= 0 (a contact only pushes out).
  double delta = (-result.constraint - compliance_tilde * lambda) /
                 (result.generalized_inverse_mass + compliance_tilde);
  if (lambda + delta < 0.0) delta = -lambda;
  result.delta_lambda = delta;
  lambda += delta;
  accumulateBodyShare(body, local_vertex, delta * unit_normal, correction);
  return result;
}

void applyBodyCorrection(RigidBody& body, const BodyCorrection& correction) {
  if (isPlanar(body)) {
    body.centre.head<2>() += correction.translation.head<2>();
    body.rotation = rotationFromVector(Vec3(0.0, 0.0, correction.rotation.z())) * body.rotation;
  } else {
    body.centre += correction.translation;
    body.rotation = rotationFromVector(correction.rotation) * body.rotation;
  }
}

void projectBodyCoupling(RigidBody& body, const std::vector<int>& boundary_vertices, const VecX& node_masses,
                         MassSplitting splitting, int other_constraints, Positions& x) {
  const int constraint_count = static_cast<int>(boundary_vertices.size()) + other_constraints;
  BodyCorrection correction;
  for (int local_vertex : boundary_vertices)
    projectCoupling(body, local_vertex, node_masses[body.vertices[local_vertex]], splitting, constraint_count, x,
                    correction);
  applyBodyCorrection(body, correction);
}

void projectBodyConstraints(RigidBody& body, const std::vector<int>& boundary_vertices, const VecX& node_masses,
                            std::vector<BodyContact>& contacts, MassSplitting splitting, Positions& x) {
  const int constraint_count = static_cast<int>(boundary_vertices.size() + contacts.size());
  BodyCorrection correction;
  for (int local_vertex : boundary_vertices)
    projectCoupling(body, local_vertex, node_masses[body.vertices[local_vertex]], splitting, constraint_count, x,
                    correction);
  for (BodyContact& contact : contacts)
    projectFixedPointContact(body, contact.local_vertex, contact.point, contact.normal, contact.compliance_tilde,
                             contact.lambda, splitting, constraint_count, correction);
  applyBodyCorrection(body, correction);
}

}  // namespace pbdlab::ml_xpbd
