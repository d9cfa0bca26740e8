#include "core/model/grid_step_problem.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/terms/embedded_term.hpp"

namespace pbdlab {

namespace {
const char* const kGridFaceNames[6] = {"x-min", "x-max", "y-min", "y-max", "z-min", "z-max"};
}  // namespace

int GridWalls::faceIndex(const std::string& name) {
  for (int face = 0; face < 6; ++face)
    if (name == kGridFaceNames[face]) return face;
  throw std::invalid_argument("unknown grid face '" + name + "' (x-min, x-max, y-min, y-max, z-min, z-max)");
}

std::string GridWalls::faceName(int face) {
  if (face < 0 || face >= 6) throw std::invalid_argument("grid face index " + std::to_string(face) + " is not in 0..5");
  return kGridFaceNames[face];
}

std::string gridWallKindName(GridWall::Kind kind) {
  switch (kind) {
    case GridWall::Kind::kNone: return "none";
    case GridWall::Kind::kSticky: return "sticky";
    case GridWall::Kind::kSlip: return "slip";
  }
  return "?";
}

GridWall::Kind parseGridWallKind(const std::string& name) {
  if (name == "none") return GridWall::Kind::kNone;
  if (name == "sticky") return GridWall::Kind::kSticky;
  if (name == "slip") return GridWall::Kind::kSlip;
  throw std::invalid_argument("unknown grid wall kind '" + name + "' (none, sticky, slip)");
}

RigidMap rigidMapAt(const BoundaryMotion& motion, double t) {
  RigidMap map;
  map.translation = motion.positionAt(Vec3::Zero(), t);
  for (int d = 0; d < 3; ++d) map.rotation.col(d) = motion.positionAt(Vec3::Unit(d), t) - map.translation;
  // Re-orthonormalize (the columns carry the round-off of cos and sin): the polar factor.
  const Eigen::JacobiSVD<Mat3> svd(map.rotation, Eigen::ComputeFullU | Eigen::ComputeFullV);
  map.rotation = svd.matrixU() * svd.matrixV().transpose();
  return map;
}

BoundaryMotion motionIncrement(const BoundaryMotion& motion, double t0, double t1) {
  const RigidMap from = rigidMapAt(motion, t0);
  const RigidMap to = rigidMapAt(motion, t1);
  // A y = R1 R0^T (y - p0) + p1 = R y + (p1 - R p0).
  const Mat3 rotation = to.rotation * from.rotation.transpose();
  const Vec3 translation = to.translation - rotation * from.translation;
  const Eigen::AngleAxisd turn(rotation);
  BoundaryMotion increment;
  MotionStage rotate;
  rotate.kind = MotionStage::Kind::kRotate;
  rotate.t_start = t0;
  rotate.t_end = t1;
  rotate.axis_point = Vec3::Zero();
  rotate.axis_direction = turn.axis();
  rotate.angle = turn.angle();
  MotionStage translate;
  translate.kind = MotionStage::Kind::kTranslate;
  translate.t_start = t0;
  translate.t_end = t1;
  translate.translation = translation;
  increment.stages = {rotate, translate};
  return increment;
}

std::vector<int> colliderGridNodes(const BackgroundGrid& grid, const Collider& collider) {
  std::vector<int> nodes;
  for (int i = 0; i < grid.numNodes(); ++i)
    if (signedDistance(collider.shape, grid.nodePosition(i)) < 0.0) nodes.push_back(i);
  return nodes;
}

std::vector<int> movingWallNodes(const BackgroundGrid& grid, const GridMovingWall& wall, double t) {
  const RigidMap map = rigidMapAt(wall.motion, t);
  const double tolerance = 1e-9 * grid.spacing();
  std::vector<int> nodes;
  for (int i = 0; i < grid.numNodes(); ++i) {
    const Vec3 X = map.inverse(grid.nodePosition(i));
    if (((X - wall.box_min).array() >= -tolerance).all() && ((wall.box_max - X).array() >= -tolerance).all())
      nodes.push_back(i);
  }
  return nodes;
}

std::string gridStepRejection(const Problem& mesh_problem) {
  const std::string me = "the grid step ";
  if (mesh_problem.numNodes() == 0 || mesh_problem.nodeMasses().size() != mesh_problem.numNodes())
    return me + "needs a finalized mesh problem (Problem::finalize)";
  if (mesh_problem.time.integrator != Integrator::kBackwardEuler)
    return me + "integrates backward Euler (the grid's velocities carry the motion from step to step); the problem is "
                "quasistatic";
  if (!mesh_problem.dirichlet.empty())
    return me + "does not take Dirichlet conditions of the mesh (node set '" + mesh_problem.dirichlet[0].node_set +
           "'): a prescribed vertex x_p = sum_i w_ip q_i is a constraint on the several grid nodes that "
           "interpolate it, not a DOF of the grid problem; hold the body with a grid wall instead";
  if (mesh_problem.isPlaneStrain())
    return me + "does not take plane strain: its pinned z of every vertex is a constraint on the grid nodes, as a "
                "Dirichlet condition would be";
  if (mesh_problem.collisions.enabled)
    return me + "handles contact through the grid (vertices of different bodies near each other share grid nodes); "
                "turn the mesh's collisions off";
  return "";
}

// Sets the members finalize() would compute (Problem's friend).
class GridStepProblemBuilder {
 public:
  static Problem build(const Problem& mesh_problem, std::shared_ptr<const GridWeights> weights,
                       const VecX& grid_masses, const GridWalls& walls, int step);
};

Problem GridStepProblemBuilder::build(const Problem& mesh_problem, std::shared_ptr<const GridWeights> weights,
                                      const VecX& grid_masses, const GridWalls& walls, int step) {
  if (const std::string why = gridStepRejection(mesh_problem); !why.empty()) throw std::invalid_argument(why);
  if (!weights) throw std::invalid_argument("grid step problem: no grid weights");
  const GridWeights& W = *weights;
  const BackgroundGrid& grid = W.grid;
  const int n = grid.numNodes();
  if (W.numPoints() != mesh_problem.numNodes())
    throw std::invalid_argument("grid step problem: weights of " + std::to_string(W.numPoints()) +
                                " points for a mesh of " + std::to_string(mesh_problem.numNodes()) + " vertices");
  if (grid_masses.size() != n)
    throw std::invalid_argument("grid step problem: " + std::to_string(grid_masses.size()) +
                                " grid masses for a grid of " + std::to_string(n) + " nodes");
  if (!grid_masses.allFinite() || (n > 0 && grid_masses.minCoeff() < 0.0))
    throw std::invalid_argument("grid step problem: the grid masses must be finite and >= 0");
  for (int face = 0; face < 6; ++face) {
    const GridWall& wall = walls.faces[static_cast<size_t>(face)];
    const int layers = grid.nodeCounts()[face / 2];
    if (wall.kind != GridWall::Kind::kNone && (wall.thickness < 1 || wall.thickness > layers))
      throw std::invalid_argument("grid wall " + GridWalls::faceName(face) + ": thickness " +
                                  std::to_string(wall.thickness) + " node layers, must be in 1.." +
                                  std::to_string(layers) + " (the grid's nodes on that axis)");
  }

  Problem p;
  p.time = mesh_problem.time;
  p.gravity = mesh_problem.gravity;  // f_ext below; kept for solvers' gravity-based initial guesses
  p.discretization = mesh_problem.discretization;
  p.mesh.rest_positions.resize(n, 3);
  for (int i = 0; i < n; ++i) p.mesh.rest_positions.row(i) = grid.nodePosition(i).transpose();
  p.mesh.elements.resize(0, nodesPerElement(p.mesh.element_type));
  p.mesh.source = "background grid (" + gridKernelName(W.kernel) + ", h = " + std::to_string(grid.spacing()) + ")";

  // Prescribed nodes as Dirichlet sets that hold them at rest (the default motion).
  const double mass_floor = n > 0 ? kGridMasslessFraction * grid_masses.maxCoeff() : 0.0;
  std::vector<int>& massless = p.mesh.node_sets["massless"];
  for (int i = 0; i < n; ++i)
    if (!(grid_masses[i] > mass_floor)) massless.push_back(i);
  if (!massless.empty()) p.dirichlet.push_back({"massless", {true, true, true}, {}});
  for (int face = 0; face < 6; ++face) {
    const GridWall& wall = walls.faces[static_cast<size_t>(face)];
    if (wall.kind == GridWall::Kind::kNone) continue;
    const int axis = face / 2;
    const int count = grid.nodeCounts()[axis];
    const std::string set = "wall/" + GridWalls::faceName(face);
    std::vector<int>& nodes = p.mesh.node_sets[set];
    for (int i = 0; i < n; ++i) {
      const int layer = grid.nodeCoordinates(i)[axis];
      if (face % 2 == 0 ? layer < wall.thickness : layer >= count - wall.thickness) nodes.push_back(i);
    }
    std::array<bool, 3> components{true, true, true};
    if (wall.kind == GridWall::Kind::kSlip) components = {axis == 0, axis == 1, axis == 2};
    p.dirichlet.push_back({set, components, {}});
  }
  // Kinematic colliders: the grid nodes inside each held at rest (the header), before the
  // moving walls.
  for (size_t c = 0; c < mesh_problem.colliders.size(); ++c) {
    const std::string set = "collider/" + std::to_string(c);  // names may repeat or be empty
    p.mesh.node_sets[set] = colliderGridNodes(grid, mesh_problem.colliders[c]);
    p.dirichlet.push_back({set, {true, true, true}, {}});
  }
  // Moving walls: this step's increment of their motion (see the header), after the faces.
  const double t0 = mesh_problem.timeAt(step), t1 = mesh_problem.timeAt(step + 1);
  for (const GridMovingWall& wall : walls.moving) {
    const std::string set = "moving/" + wall.name;
    if (p.mesh.node_sets.count(set))
      throw std::invalid_argument("grid step problem: two moving walls are named '" + wall.name + "'");
    p.mesh.node_sets[set] = movingWallNodes(grid, wall, t0);
    p.dirichlet.push_back({set, {true, true, true}, motionIncrement(wall.motion, t0, t1)});
  }

  p.shared_mesh_ = std::make_shared<const Mesh>(p.mesh);
  p.body_first_node_ = {0};  // no bodies: the grid's nodes belong to none

  // Every term through W but the colliders' penalties: the grid holds their nodes instead.
  for (const auto& term : mesh_problem.terms())
    if (!dynamic_cast<const ColliderTerm*>(term.get()))
      p.terms_.push_back(std::make_shared<const EmbeddedTerm>(term, weights));

  p.node_masses_ = grid_masses;
  for (int i : massless) p.node_masses_[i] = 0.0;  // below the floor: none (see the header)
  p.dof_masses_.resize(3 * n);
  p.gravity_force_.resize(3 * n);
  for (int i = 0; i < n; ++i) {
    p.dof_masses_.segment<3>(3 * i).setConstant(p.node_masses_[i]);
    p.gravity_force_.segment<3>(3 * i) = p.node_masses_[i] * p.gravity;  // = W^T (m_p g)
  }
  // Each load scattered by W (nodes ascending, as finalize() keeps them), with its schedule.
  std::vector<Vec3> scattered(static_cast<size_t>(n));
  std::vector<char> touched(static_cast<size_t>(n));
  for (const NodalLoad& load : mesh_problem.nodalLoads()) {
    std::fill(scattered.begin(), scattered.end(), Vec3::Zero());
    std::fill(touched.begin(), touched.end(), 0);
    for (size_t k = 0; k < load.nodes.size(); ++k) {
      const size_t first = W.entry(load.nodes[k]);
      for (int a = 0; a < W.nodes_per_point; ++a) {
        if (W.weight[first + a] == 0.0) continue;
        scattered[static_cast<size_t>(W.node[first + a])] += W.weight[first + a] * load.forces[k];
        touched[static_cast<size_t>(W.node[first + a])] = 1;
      }
    }
    NodalLoad grid_load;
    grid_load.schedule = load.schedule;
    grid_load.area = load.area;
    for (int i = 0; i < n; ++i)
      if (touched[static_cast<size_t>(i)]) {
        grid_load.nodes.push_back(i);
        grid_load.forces.push_back(scattered[static_cast<size_t>(i)]);
      }
    p.nodal_loads_.push_back(std::move(grid_load));
  }

  p.is_fixed_.assign(3 * static_cast<size_t>(n), 0);
  p.dof_condition_.assign(3 * static_cast<size_t>(n), -1);
  for (size_t c = 0; c < p.dirichlet.size(); ++c)
    for (int node : p.mesh.node_sets.at(p.dirichlet[c].node_set))
      for (int k = 0; k < 3; ++k)
        if (p.dirichlet[c].components[static_cast<size_t>(k)]) {
          p.is_fixed_[3 * static_cast<size_t>(node) + k] = 1;
          p.dof_condition_[3 * static_cast<size_t>(node) + k] = static_cast<int>(c);
        }
  for (int dof = 0; dof < 3 * n; ++dof)
    (p.is_fixed_[static_cast<size_t>(dof)] ? p.fixed_dofs_ : p.free_dofs_).push_back(dof);
  return p;
}

Problem makeGridStepProblem(const Problem& mesh_problem, std::shared_ptr<const GridWeights> weights,
                            const VecX& grid_masses, const GridWalls& walls, int step) {
  return GridStepProblemBuilder::build(mesh_problem, std::move(weights), grid_masses, walls, step);
}

}  // namespace pbdlab
