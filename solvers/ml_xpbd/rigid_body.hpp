#pragma once
// Rigid bodies of multi-layer XPBD (Mercier-Aubin & Kry 2024, §3, §3.2, §3.4; issue 26), in 3D
// and in 2D (plane: x and y of pbdlab's three coordinates; rotations about z).
//
//  - From a vertex set with masses, positions x and residual velocities v (eq. 21-26): mass,
//    centre, centre velocity, offsets r_i = x_i - x_r (world frame; the body frame is the world
//    frame at the layer's start, R = identity), inertia (3D: sum m [r]x^T [r]x, eq. 25; 2D:
//    the scalar sum m |r|^2, stored as the zz entry) and omega = I^-1 sum m r x (v - v_r).
//  - Singular inertia (collinear vertices, coincident ones): a pseudo-inverse that drops the
//    eigenvalues below kInertiaCutoff * trace(I). Along such an axis the body has no inertia,
//    and sum m r x v has no component there either, so nothing is lost.
//  - The step (eq. 4, 10-12): x_r += h v_r; in 3D omega += -h I_w^-1 (omega x I_w omega) (the
//    gyroscopic term of eq. 10; eq. 9 "tau += h f" is garbled, gravity is already in v, so no
//    torque); R <- exp(h [omega]x) R by Rodrigues (eq. 11); x_i = R r_i + x_r (eq. 12).
//  - Residual velocities, eq. 27: v_i <- R_step v_i - (x_i^{new} - x_i^{old}) / h.
//  - Rigid-elastic coupling (eq. 13-19): C = |x_i - (R r_i + x_r)| (the norm: eq. 13 prints the
//    square, whose gradient vanishes at C = 0), hard (alpha = 0); generalized inverse mass with
//    mass splitting over the body's n_C constraints: "paper" splits only the linear term
//    (eq. 15 literally), "tonge" both (Tonge et al. 2012: the body is split into n_C equal
//    sub-bodies, which never overshoots in a Jacobi pass). Corrections are accumulated per body
//    (Jacobi, §3.2) and applied at once: x_r += sum dx_r, R <- exp([sum dtheta]x) R.
//  - Contacts of a body vertex against a fixed point p with outward normal n (§3.5): the same
//    projection with the elastic particle replaced by p (inverse mass 0), C = min(n.(q - p), 0).
// docs: /work/shared/papers/specs/multi-layer-xpbd.md §2-3.
#include <vector>

#include "core/support/types.hpp"

namespace pbdlab::ml_xpbd {

enum class BodyDimension { k2d, k3d };

enum class MassSplitting {
  kPaper,  // eq. 15: w = n_C / m_r + (r x d)^T I^-1 (r x d)
  kTonge,  // w = n_C / m_r + n_C (r x d)^T I^-1 (r x d)
};

enum class GyroscopicTerm { kOff, kOn };

// Eigenvalues of the inertia below this times its trace count as zero (pseudo-inverse).
inline constexpr double kInertiaCutoff = 1e-12;

struct RigidBody {
  BodyDimension dimension = BodyDimension::k3d;
  std::vector<int> vertices;  // global node indices
  std::vector<Vec3> offsets;  // r_i, body frame (= world frame at the layer's start); 2D: z = 0
  double mass = 0.0;
  Vec3 centre = Vec3::Zero();           // x_r
  Vec3 centre_velocity = Vec3::Zero();  // x-dot_r; 2D: z = 0
  Mat3 inertia = Mat3::Zero();          // body frame; 2D: only the zz entry
  Mat3 inverse_inertia = Mat3::Zero();  // its pseudo-inverse, body frame
  Vec3 angular_velocity = Vec3::Zero(); // world frame; 2D: (0, 0, omega)
  Mat3 rotation = Mat3::Identity();     // R: body -> world
  Mat3 step_rotation = Mat3::Identity();  // exp(h [omega]x) of the last step (eq. 27)

  Mat3 worldInertia() const { return rotation * inertia * rotation.transpose(); }
  Mat3 worldInverseInertia() const { return rotation * inverse_inertia * rotation.transpose(); }
  // R r_i + x_r (eq. 12) for the body's i-th vertex.
  Vec3 bodyPoint(int local_vertex) const { return rotation * offsets[local_vertex] + centre; }
  // Angular momentum about the centre, I_w omega.
  Vec3 angularMomentum() const { return worldInertia() * angular_velocity; }
};

// Skew matrix [a]x with [a]x b = a x b.
Mat3 crossMatrix(const Vec3& a);
// exp([theta]x) by Rodrigues' formula (eq. 11), with Taylor terms for |theta| < 1e-4.
Mat3 rotationFromVector(const Vec3& theta);
// Pseudo-inverse of a symmetric positive semi-definite 3x3 (cutoff kInertiaCutoff * trace).
Mat3 inertiaPseudoInverse(const Mat3& inertia);

// Eq. 21-26 from the vertices' masses (one per node), positions and residual velocities (flat
// [x0 y0 z0 ...]). Throws std::invalid_argument for an empty set or zero mass.
RigidBody makeRigidBody(BodyDimension dimension, const std::vector<int>& vertices, const VecX& node_masses,
                        const Positions& x, const Positions& v);

// Eq. 4, 10, 11: x_r += h v_r; (3D, kOn) omega += -h I_w^-1 (omega x I_w omega);
// step_rotation = exp(h [omega]x); R <- step_rotation R.
void stepRigidBody(RigidBody& body, double h, GyroscopicTerm gyroscopic = GyroscopicTerm::kOn);

// Eq. 12 for every vertex of the body (2D: x and y only; z is left as it is).
void placeBodyVertices(const RigidBody& body, Positions& x);

// Eq. 27 for every vertex of the body: v_i <- R_step v_i - (x_i - x_before_i) / h, with
// R_step = body.step_rotation (2D: x and y only).
void updateResidualVelocities(const RigidBody& body, const Positions& x_before, const Positions& x, double h,
                              Positions& v);
// Alg. 2 line 21: v_i <- rotation v_i for every vertex of the body (the rotation the constraint
// solves added, R_final R_step^T).
void rotateResidualVelocities(const RigidBody& body, const Mat3& rotation, Positions& v);

// --- coupling (eq. 13-19) and contacts (§3.5) ---

// The Jacobi sum of one pass over a body's constraints, all evaluated at the same (x_r, R).
struct BodyCorrection {
  Vec3 translation = Vec3::Zero();  // sum of dx_r (eq. 18)
  Vec3 rotation = Vec3::Zero();     // sum of dtheta_r = h dOmega_r (eq. 19)
};

// What one constraint projection did (for tests and logs).
struct ProjectionResult {
  double constraint = 0.0;               // C before the projection
  double generalized_inverse_mass = 0.0; // w of the body side (eq. 15)
  double delta_lambda = 0.0;             // eq. 14
  Vec3 vertex_displacement = Vec3::Zero();  // dx_i of the elastic particle (eq. 17)
};

// Generalized inverse mass of the body at its point R r_i + x_r along the unit direction u
// (eq. 15 with mass splitting over n_C constraints).
double generalizedInverseMass(const RigidBody& body, int local_vertex, const Vec3& unit_direction,
                              MassSplitting splitting, int constraint_count);

// Coupling of the body's vertex `local_vertex` to its elastic view x_i (in x, with mass
// vertex_mass): C = |x_i - (R r_i + x_r)|, skipped at C = 0; hard (alpha~ = 0). Moves x_i by
// p / m_i (eq. 17) and adds dx_r = -p / m_r, dtheta_r = -I_w^-1 (r^g x p) to `correction`
// (eq. 18-19). In 2D only x and y of x_i move.
ProjectionResult projectCoupling(const RigidBody& body, int local_vertex, double vertex_mass, MassSplitting splitting,
                                 int constraint_count, Positions& x, BodyCorrection& correction);

// Contact of the body's vertex with a fixed point p, outward normal n (unit):
// C = min(n.(q - p), 0), q = R r_i + x_r; compliance alpha~ = alpha / h^2 with its multiplier
// lambda (kept by the caller across iterations and layers). Adds its share to `correction`.
ProjectionResult projectFixedPointContact(const RigidBody& body, int local_vertex, const Vec3& point,
                                          const Vec3& normal, double compliance_tilde, double& lambda,
                                          MassSplitting splitting, int constraint_count, BodyCorrection& correction);

// x_r += translation; R <- exp([rotation]x) R (2D: the rotation's z only).
void applyBodyCorrection(RigidBody& body, const BodyCorrection& correction);

// A contact of one body vertex with a fixed point (§3.5), frozen for the step; `lambda` is its
// multiplier, zero at the step's start and kept across iterations and layers.
struct BodyContact {
  int local_vertex = 0;
  Vec3 point = Vec3::Zero();
  Vec3 normal = Vec3::UnitY();
  double lambda = 0.0;
  double compliance_tilde = 0.0;  // alpha / h^2 of this contact (contacts.hpp: alpha = 1 / stiffness)
};

// One Jacobi pass over all of a body's constraints: the coupling of its boundary vertices and
// its contacts, n_C = their total (eq. 15), each projected against the same body state, elastic
// views moved, then the summed correction applied to the body. The caller places the body's
// vertices afterwards (placeBodyVertices).
void projectBodyConstraints(RigidBody& body, const std::vector<int>& boundary_vertices, const VecX& node_masses,
                            std::vector<BodyContact>& contacts, MassSplitting splitting, Positions& x);

// One Jacobi pass of the coupling over the given boundary vertices (indices into
// body.vertices), n_C = their number plus `other_constraints` (e.g. the body's contacts in the
// same pass): each projected against the same body state, elastic views moved, then the sum
// applied to the body. The caller places the body's vertices (placeBodyVertices) afterwards,
// as the paper does ("we then update the relevant particle positions").
void projectBodyCoupling(RigidBody& body, const std::vector<int>& boundary_vertices, const VecX& node_masses,
                         MassSplitting splitting, int other_constraints, Positions& x);

}  // namespace pbdlab::ml_xpbd
