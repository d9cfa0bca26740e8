// Rigid bodies of multi-layer XPBD (solvers/ml_xpbd/rigid_body.hpp), 2D and 3D: a step keeps
// every pairwise distance and the momenta; torque-free spin of an asymmetric body keeps its
// angular momentum far better with the gyroscopic term of eq. 10 than without; singular inertia
// stays finite; the coupling (eq. 13-19) pulls an elastic view onto its body and conserves the
// momenta of the pair; the two mass splittings; contacts against a fixed point; eq. 27.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <random>

#include "solvers/ml_xpbd/rigid_body.hpp"
#include "tests/support/random_samples.hpp"

namespace pbdlab::ml_xpbd {
namespace {

// A random cloud of point masses with a rigid velocity field (random spin) plus, optionally,
// a non-rigid part: positions x, velocities v, masses m (flat, one node per point).
struct PointCloud {
  std::vector<int> vertices;
  VecX masses;
  Positions x;
  Positions v;
};

PointCloud randomCloud(BodyDimension dimension, int count, std::mt19937& rng, double non_rigid = 0.0) {
  PointCloud cloud;
  cloud.masses.resize(count);
  cloud.x.resize(3 * count);
  cloud.v.resize(3 * count);
  const bool planar = dimension == BodyDimension::k2d;
  const Vec3 centre_velocity(test::uniform(rng, -1, 1), test::uniform(rng, -1, 1), planar ? 0.0 : test::uniform(rng, -1, 1));
  const Vec3 spin = planar ? Vec3(0, 0, test::uniform(rng, 1, 3))
                           : Vec3(test::uniform(rng, -3, 3), test::uniform(rng, -3, 3), test::uniform(rng, -3, 3));
  for (int i = 0; i < count; ++i) {
    cloud.vertices.push_back(i);
    cloud.masses[i] = test::uniform(rng, 0.5, 2.0);
    Vec3 p(test::uniform(rng, -1, 1) * 2.0, test::uniform(rng, -1, 1), planar ? 0.0 : test::uniform(rng, -1, 1) * 0.5);
    cloud.x.segment<3>(3 * i) = p + Vec3(0.3, -0.2, planar ? 0.0 : 0.1);
    Vec3 noise(test::uniform(rng, -1, 1), test::uniform(rng, -1, 1), planar ? 0.0 : test::uniform(rng, -1, 1));
    cloud.v.segment<3>(3 * i) = centre_velocity + spin.cross(p) + non_rigid * noise;
  }
  return cloud;
}

Vec3 linearMomentum(const PointCloud& cloud) {
  Vec3 p = Vec3::Zero();
  for (int i : cloud.vertices) p += cloud.masses[i] * cloud.v.segment<3>(3 * i);
  return p;
}

// sum m (x - c) x (v - v_c) about the mass centre.
Vec3 spinMomentum(const PointCloud& cloud) {
  double mass = 0.0;
  Vec3 c = Vec3::Zero(), vc = Vec3::Zero();
  for (int i : cloud.vertices) {
    mass += cloud.masses[i];
    c += cloud.masses[i] * cloud.x.segment<3>(3 * i);
    vc += cloud.masses[i] * cloud.v.segment<3>(3 * i);
  }
  c /= mass;
  vc /= mass;
  Vec3 l = Vec3::Zero();
  for (int i : cloud.vertices)
    l += cloud.masses[i] * (cloud.x.segment<3>(3 * i) - c).cross(cloud.v.segment<3>(3 * i) - vc);
  return l;
}

double largestPairwiseDistanceChange(const Positions& a, const Positions& b, int count) {
  double worst = 0.0;
  for (int i = 0; i < count; ++i)
    for (int j = i + 1; j < count; ++j) {
      const double before = (a.segment<3>(3 * i) - a.segment<3>(3 * j)).norm();
      const double after = (b.segment<3>(3 * i) - b.segment<3>(3 * j)).norm();
      worst = std::max(worst, std::abs(after - before));
    }
  return worst;
}

class RigidStep : public ::testing::TestWithParam<BodyDimension> {};

TEST_P(RigidStep, KeepsDistancesAndMomenta) {
  const BodyDimension dimension = GetParam();
  std::mt19937 rng(11);
  for (int trial = 0; trial < 10; ++trial) {
    const PointCloud cloud = randomCloud(dimension, 9, rng, /*non_rigid=*/0.3);
    const double h = 1e-3;
    RigidBody body = makeRigidBody(dimension, cloud.vertices, cloud.masses, cloud.x, cloud.v);
    // Eq. 21-26 reproduce the cloud's momenta.
    EXPECT_LT((body.mass * body.centre_velocity - linearMomentum(cloud)).norm(), 1e-12 * body.mass);
    const Vec3 spin_before = spinMomentum(cloud);
    EXPECT_LT((body.angularMomentum() - spin_before).norm(), 1e-12 * (1.0 + spin_before.norm()));

    stepRigidBody(body, h);
    Positions x = cloud.x;
    placeBodyVertices(body, x);
    EXPECT_LT(largestPairwiseDistanceChange(cloud.x, x, 9), 1e-13);
    // The stepped body's rigid velocity field v_c + omega x R r_i has the same momenta: exact in
    // 2D, O(h^2 |omega|^2) in 3D (the explicit gyroscopic step of eq. 10).
    PointCloud after = cloud;
    after.x = x;
    for (int i = 0; i < 9; ++i)
      after.v.segment<3>(3 * i) = body.centre_velocity + body.angular_velocity.cross(body.rotation * body.offsets[i]);
    EXPECT_LT((linearMomentum(after) - linearMomentum(cloud)).norm(), 1e-12 * body.mass);
    const double tolerance = dimension == BodyDimension::k2d ? 1e-12 : 1e-4;
    EXPECT_LT((spinMomentum(after) - spin_before).norm(), tolerance * spin_before.norm()) << "trial " << trial;
    EXPECT_LT((body.angularMomentum() - spin_before).norm(), tolerance * spin_before.norm());
    if (dimension == BodyDimension::k2d) {
      for (int i = 0; i < 9; ++i) EXPECT_EQ(x[3 * i + 2], 0.0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dimensions, RigidStep, ::testing::Values(BodyDimension::k2d, BodyDimension::k3d),
                         [](const auto& info) { return info.param == BodyDimension::k2d ? "plane" : "solid"; });

TEST(MultiLayerRigidBody, RodriguesIsTheRotationOfTheVector) {
  std::mt19937 rng(3);
  for (double scale : {1e-9, 1e-5, 1e-3, 0.5, 3.0}) {
    const Vec3 theta = scale * Vec3(test::uniform(rng, -1, 1), test::uniform(rng, -1, 1), test::uniform(rng, -1, 1));
    const Mat3 r = rotationFromVector(theta);
    const Mat3 expected = Eigen::AngleAxisd(theta.norm(), theta.normalized()).toRotationMatrix();
    EXPECT_LT((r - expected).norm(), 1e-15) << "|theta| = " << theta.norm();
    EXPECT_LT((r.transpose() * r - Mat3::Identity()).norm(), 1e-15);
  }
  EXPECT_EQ(rotationFromVector(Vec3::Zero()), Mat3::Identity());
}

// An asymmetric body (principal moments 1 : 2.5 : 4 roughly) spinning about no principal axis,
// no torque: L = I_w omega must stay. Without eq. 10's gyroscopic term omega stays fixed in
// the world while the inertia turns, and L drifts at first order in h.
TEST(MultiLayerRigidBody, GyroscopicTermKeepsAngularMomentum) {
  PointCloud cloud;
  const std::vector<Vec3> corners{{2.0, 0.0, 0.0}, {-2.0, 0.0, 0.0}, {0.0, 1.2, 0.0},
                                  {0.0, -1.2, 0.0}, {0.0, 0.0, 0.5}, {0.0, 0.0, -0.5}};
  const int count = static_cast<int>(corners.size());
  cloud.masses = VecX::Constant(count, 1.0);
  cloud.x.resize(3 * count);
  cloud.v.resize(3 * count);
  const Vec3 spin(1.0, 2.0, 0.5);
  for (int i = 0; i < count; ++i) {
    cloud.vertices.push_back(i);
    cloud.x.segment<3>(3 * i) = corners[i];
    cloud.v.segment<3>(3 * i) = spin.cross(corners[i]);
  }
  const double h = 0.01;
  double drift[2];
  for (GyroscopicTerm term : {GyroscopicTerm::kOff, GyroscopicTerm::kOn}) {
    RigidBody body = makeRigidBody(BodyDimension::k3d, cloud.vertices, cloud.masses, cloud.x, cloud.v);
    const Vec3 initial = body.angularMomentum();
    double worst = 0.0;
    for (int step = 0; step < 300; ++step) {
      stepRigidBody(body, h, term);
      worst = std::max(worst, (body.angularMomentum() - initial).norm() / initial.norm());
    }
    drift[term == GyroscopicTerm::kOn] = worst;
  }
  EXPECT_LT(drift[1], 0.1 * drift[0]) << "with " << drift[1] << ", without " << drift[0];
  EXPECT_LT(drift[1], 0.05);
  EXPECT_GT(drift[0], 0.1);  // the check is not vacuous
}

// Collinear vertices in 3D (no inertia about the line) and a single triangle in 2D.
TEST(MultiLayerRigidBody, SingularInertiaStaysFinite) {
  std::mt19937 rng(5);
  PointCloud line;
  const Vec3 axis = Vec3(1.0, 2.0, -0.5).normalized();
  line.masses = VecX::Constant(4, 1.0);
  line.x.resize(12);
  line.v.resize(12);
  for (int i = 0; i < 4; ++i) {
    line.vertices.push_back(i);
    line.x.segment<3>(3 * i) = Vec3(0.1, 0.2, 0.3) + (i - 1.3) * axis;
    line.v.segment<3>(3 * i) = Vec3(test::uniform(rng, -1, 1), test::uniform(rng, -1, 1), test::uniform(rng, -1, 1));
  }
  RigidBody body = makeRigidBody(BodyDimension::k3d, line.vertices, line.masses, line.x, line.v);
  EXPECT_TRUE(body.inverse_inertia.allFinite());
  EXPECT_TRUE(body.angular_velocity.allFinite());
  EXPECT_NEAR(body.angular_velocity.dot(axis), 0.0, 1e-12);  // no spin about the line
  // The line's momentum r x v is perpendicular to it: the pseudo-inverse loses none of it.
  EXPECT_LT((body.angularMomentum() - spinMomentum(line)).norm(), 1e-12);
  stepRigidBody(body, 0.01);
  Positions x = line.x;
  placeBodyVertices(body, x);
  EXPECT_TRUE(x.allFinite());
  EXPECT_LT(largestPairwiseDistanceChange(line.x, x, 4), 1e-13);
  BodyCorrection correction;
  Positions views = x;
  views.segment<3>(0) += Vec3(0.01, -0.02, 0.03);
  projectCoupling(body, 0, 1.0, MassSplitting::kTonge, 1, views, correction);
  EXPECT_TRUE(correction.translation.allFinite() && correction.rotation.allFinite());

  PointCloud triangle = randomCloud(BodyDimension::k2d, 3, rng);
  RigidBody planar = makeRigidBody(BodyDimension::k2d, triangle.vertices, triangle.masses, triangle.x, triangle.v);
  EXPECT_TRUE(planar.inverse_inertia.allFinite() && planar.angular_velocity.allFinite());
  stepRigidBody(planar, 0.01);
  Positions y = triangle.x;
  placeBodyVertices(planar, y);
  EXPECT_TRUE(y.allFinite());
  EXPECT_LT(largestPairwiseDistanceChange(triangle.x, y, 3), 1e-13);

  // Every vertex at one point: no inertia at all, still finite.
  PointCloud point = line;
  for (int i = 0; i < 4; ++i) point.x.segment<3>(3 * i) = Vec3(1.0, 1.0, 1.0);
  RigidBody lump = makeRigidBody(BodyDimension::k3d, point.vertices, point.masses, point.x, point.v);
  stepRigidBody(lump, 0.01);
  EXPECT_TRUE(lump.angular_velocity.allFinite() && lump.rotation.allFinite() && lump.centre.allFinite());
}

// Eq. 27: for a rigid motion the residual velocities are left with O(h) of the spin only; a
// pure translation leaves nothing.
TEST(MultiLayerRigidBody, ResidualVelocitiesOfARigidMotion) {
  std::mt19937 rng(9);
  PointCloud cloud = randomCloud(BodyDimension::k3d, 6, rng);
  for (int i = 0; i < 6; ++i) cloud.v.segment<3>(3 * i) = Vec3(0.5, -1.0, 2.0);
  RigidBody body = makeRigidBody(BodyDimension::k3d, cloud.vertices, cloud.masses, cloud.x, cloud.v);
  const double h = 0.01;
  stepRigidBody(body, h);
  Positions x = cloud.x;
  placeBodyVertices(body, x);
  Positions v = cloud.v;
  updateResidualVelocities(body, cloud.x, x, h, v);
  EXPECT_LT(v.norm(), 1e-12);

  PointCloud spinning = randomCloud(BodyDimension::k3d, 6, rng);
  RigidBody spinner = makeRigidBody(BodyDimension::k3d, spinning.vertices, spinning.masses, spinning.x, spinning.v);
  stepRigidBody(spinner, h);
  Positions xs = spinning.x;
  placeBodyVertices(spinner, xs);
  Positions vs = spinning.v;
  updateResidualVelocities(spinner, spinning.x, xs, h, vs);
  const double omega = spinner.angular_velocity.norm();
  const double speed = spinning.v.cwiseAbs().maxCoeff();
  EXPECT_LT(vs.cwiseAbs().maxCoeff(), 10.0 * h * omega * (omega * 3.0 + speed));
  EXPECT_GT(vs.cwiseAbs().maxCoeff(), 0.0);
}

// A body of 6 random points; its vertex 2 is also elastic, and its elastic view is pulled away.
struct CoupledPair {
  PointCloud cloud;
  RigidBody body;
  Positions views;  // the elastic views (vertex 2 moved)
};

CoupledPair coupledPair(BodyDimension dimension, std::mt19937& rng) {
  CoupledPair pair;
  pair.cloud = randomCloud(dimension, 6, rng);
  pair.body = makeRigidBody(dimension, pair.cloud.vertices, pair.cloud.masses, pair.cloud.x, pair.cloud.v);
  stepRigidBody(pair.body, 0.01);  // R != identity
  pair.views = pair.cloud.x;
  placeBodyVertices(pair.body, pair.views);
  const Vec3 pull(0.05, -0.08, dimension == BodyDimension::k2d ? 0.0 : 0.06);
  pair.views.segment<3>(6) += pull;
  return pair;
}

class RigidCoupling : public ::testing::TestWithParam<BodyDimension> {};

TEST_P(RigidCoupling, PullsTheElasticVertexOntoItsBody) {
  std::mt19937 rng(21);
  for (MassSplitting splitting : {MassSplitting::kPaper, MassSplitting::kTonge}) {
    CoupledPair pair = coupledPair(GetParam(), rng);
    const double initial = (pair.views.segment<3>(6) - pair.body.bodyPoint(2)).norm();
    std::vector<double> gaps;
    for (int pass = 0; pass < 40; ++pass) {
      projectBodyCoupling(pair.body, {2}, pair.cloud.masses, splitting, 0, pair.views);
      gaps.push_back((pair.views.segment<3>(6) - pair.body.bodyPoint(2)).norm());
    }
    // The scalar constraint |x_i - q| moves the body point sideways too (its inverse-mass matrix
    // 1/m_r + [r]x^T I^-1 [r]x is not isotropic), so the gap shrinks linearly, not in one pass.
    EXPECT_LT(gaps[0], 0.25 * initial);
    for (std::size_t k = 1; k < gaps.size(); ++k) EXPECT_LE(gaps[k], gaps[k - 1] + 1e-15);
    EXPECT_LT(gaps.back(), 1e-13);
  }
}

// One projection: the vertex gets +p / m_i, the body -p / m_r and -I^-1 (r x p): the pair's
// linear momentum and its angular momentum about the origin do not change.
TEST_P(RigidCoupling, ConservesMomentumOfThePair) {
  std::mt19937 rng(23);
  for (MassSplitting splitting : {MassSplitting::kPaper, MassSplitting::kTonge}) {
    CoupledPair pair = coupledPair(GetParam(), rng);
    const Vec3 vertex_before = pair.views.segment<3>(6);
    const double vertex_mass = pair.cloud.masses[2];
    BodyCorrection correction;
    const ProjectionResult result =
        projectCoupling(pair.body, 2, vertex_mass, splitting, 3, pair.views, correction);
    ASSERT_GT(result.constraint, 0.0);
    const Vec3 vertex_move = pair.views.segment<3>(6) - vertex_before;
    EXPECT_GT(vertex_move.norm(), 1e-3);  // both move
    EXPECT_GT(correction.translation.norm(), 1e-4);
    const Vec3 linear = vertex_mass * vertex_move + pair.body.mass * correction.translation;
    EXPECT_LT(linear.norm(), 1e-14) << "linear momentum change";
    const Vec3 angular = vertex_before.cross(vertex_mass * vertex_move) +
                         pair.body.centre.cross(pair.body.mass * correction.translation) +
                         pair.body.worldInertia() * correction.rotation;
    EXPECT_LT(angular.norm(), 1e-13) << "angular momentum change";
    // The linearized constraint is met: the vertex moved toward the body point.
    const Vec3 direction = (vertex_before - pair.body.bodyPoint(2)).normalized();
    EXPECT_LT(vertex_move.dot(direction), 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Dimensions, RigidCoupling, ::testing::Values(BodyDimension::k2d, BodyDimension::k3d),
                         [](const auto& info) { return info.param == BodyDimension::k2d ? "plane" : "solid"; });

TEST(MultiLayerMassSplitting, GeneralizedInverseMassOfEachOption) {
  std::mt19937 rng(31);
  const PointCloud cloud = randomCloud(BodyDimension::k3d, 7, rng);
  const RigidBody body = makeRigidBody(BodyDimension::k3d, cloud.vertices, cloud.masses, cloud.x, cloud.v);
  const Vec3 d = Vec3(0.3, -1.0, 0.4).normalized();
  const Vec3 moment = body.offsets[3].cross(d);
  const double rotational = moment.dot(body.inverse_inertia * moment);
  EXPECT_NEAR(generalizedInverseMass(body, 3, d, MassSplitting::kPaper, 1), 1.0 / body.mass + rotational, 1e-14);
  EXPECT_NEAR(generalizedInverseMass(body, 3, d, MassSplitting::kTonge, 1), 1.0 / body.mass + rotational, 1e-14);
  EXPECT_NEAR(generalizedInverseMass(body, 3, d, MassSplitting::kPaper, 4), 4.0 / body.mass + rotational, 1e-14);
  EXPECT_NEAR(generalizedInverseMass(body, 3, d, MassSplitting::kTonge, 4), 4.0 / body.mass + 4.0 * rotational,
              1e-14);
}

// A heavy hub (mass 100) with four light rim vertices (mass 1) at distance 1, whose elastic
// views (fixed: infinite mass) are turned by a small angle about the hub. One Jacobi pass:
// Tonge's splitting (both terms / n_C) turns the body by at most the angle, as a split body
// must; eq. 15 literally (the rotational term unsplit) turns it by about 3.5 times the angle.
TEST(MultiLayerMassSplitting, JacobiPassOvershootsOnlyWithoutSplittingTheRotation) {
  PointCloud hub;
  const std::vector<Vec3> points{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {-1, 0, 0}, {0, -1, 0}};
  hub.masses.resize(5);
  hub.x.resize(15);
  hub.v = Positions::Zero(15);
  for (int i = 0; i < 5; ++i) {
    hub.vertices.push_back(i);
    hub.masses[i] = i == 0 ? 100.0 : 1.0;
    hub.x.segment<3>(3 * i) = points[i];
  }
  const double angle = 1e-3;
  const Mat3 turn = rotationFromVector(Vec3(0, 0, angle));
  for (BodyDimension dimension : {BodyDimension::k2d, BodyDimension::k3d}) {
    double turned[2];
    for (MassSplitting splitting : {MassSplitting::kPaper, MassSplitting::kTonge}) {
      const RigidBody body = makeRigidBody(dimension, hub.vertices, hub.masses, hub.x, hub.v);
      Positions views = hub.x;
      for (int i = 1; i < 5; ++i) views.segment<3>(3 * i) = turn * hub.x.segment<3>(3 * i);
      BodyCorrection correction;
      for (int i = 1; i < 5; ++i) projectCoupling(body, i, 1e300, splitting, 4, views, correction);
      EXPECT_LT(correction.translation.norm(), 1e-15);
      turned[splitting == MassSplitting::kTonge] = correction.rotation.z();
    }
    EXPECT_GT(turned[1], 0.9 * angle);
    EXPECT_LE(turned[1], angle * (1.0 + 1e-6));
    EXPECT_GT(turned[0], 3.0 * angle);
  }
}

// A body vertex pushed below a fixed plane point is pushed back out along the normal (hard
// contact); one above it is left alone.
TEST(MultiLayerContact, BodyVertexAgainstAFixedPoint) {
  std::mt19937 rng(41);
  for (BodyDimension dimension : {BodyDimension::k2d, BodyDimension::k3d}) {
    const PointCloud cloud = randomCloud(dimension, 6, rng);
    RigidBody body = makeRigidBody(dimension, cloud.vertices, cloud.masses, cloud.x, cloud.v);
    const Vec3 normal = Vec3(0.2, 1.0, 0.0).normalized();
    const Vec3 point = body.bodyPoint(4) + 0.03 * normal;  // vertex 4 is 0.03 inside
    double lambda = 0.0;
    for (int pass = 0; pass < 10; ++pass) {
      BodyCorrection correction;
      projectFixedPointContact(body, 4, point, normal, 0.0, lambda, MassSplitting::kTonge, 1, correction);
      applyBodyCorrection(body, correction);
    }
    EXPECT_GT(lambda, 0.0);
    // Out of the plane, up to the rotation's second-order overshoot (a hard one-sided contact
    // does not pull back).
    const double separation = normal.dot(body.bodyPoint(4) - point);
    EXPECT_GE(separation, -1e-12);
    EXPECT_LT(separation, 0.01 * 0.03);

    // Outside and no multiplier: nothing.
    double idle_lambda = 0.0;
    BodyCorrection idle;
    const ProjectionResult result = projectFixedPointContact(body, 4, point - 0.1 * normal, normal, 0.0, idle_lambda,
                                                             MassSplitting::kTonge, 1, idle);
    EXPECT_EQ(result.delta_lambda, 0.0);
    EXPECT_EQ(idle.translation, Vec3::Zero());
    EXPECT_EQ(idle.rotation, Vec3::Zero());
  }
}

// One pass over a body with a coupled vertex and a contact: n_C = 2 for both, and the body
// moves by the sum of the two projections made against the same state (Jacobi, §3.2).
TEST(MultiLayerContact, CouplingAndContactInOneJacobiPass) {
  std::mt19937 rng(43);
  for (BodyDimension dimension : {BodyDimension::k2d, BodyDimension::k3d}) {
    CoupledPair pair = coupledPair(dimension, rng);
    const Vec3 normal = Vec3(-0.3, 1.0, 0.0).normalized();
    const double compliance_tilde = 1e-4 / (0.01 * 0.01);
    std::vector<BodyContact> contacts{{4, pair.body.bodyPoint(4) + 0.02 * normal, normal, 0.0, compliance_tilde}};

    RigidBody separate = pair.body;
    Positions separate_views = pair.views;
    BodyCorrection expected;
    projectCoupling(separate, 2, pair.cloud.masses[2], MassSplitting::kTonge, 2, separate_views, expected);
    double lambda = 0.0;
    projectFixedPointContact(separate, 4, contacts[0].point, normal, compliance_tilde, lambda, MassSplitting::kTonge,
                             2, expected);
    applyBodyCorrection(separate, expected);

    projectBodyConstraints(pair.body, {2}, pair.cloud.masses, contacts, MassSplitting::kTonge, pair.views);
    EXPECT_LT((pair.body.centre - separate.centre).norm(), 1e-15);
    EXPECT_LT((pair.body.rotation - separate.rotation).norm(), 1e-15);
    EXPECT_LT((pair.views - separate_views).norm(), 1e-15);
    EXPECT_EQ(contacts[0].lambda, lambda);
    EXPECT_GT(lambda, 0.0);
  }
}

}  // namespace
}  // namespace pbdlab::ml_xpbd
