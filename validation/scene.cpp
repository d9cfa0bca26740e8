#include "validation/scene.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <utility>
#include <variant>
#include <vector>

#include <Eigen/LU>

#include "core/grid/apic_transfer.hpp"
#include "core/support/input_error.hpp"
#include "core/support/json_reader.hpp"
#include "meshes/mesh_recipe.hpp"
#include "validation/body_placement.hpp"
#include "solvers/registry.hpp"

namespace pbdlab {

namespace {

using nlohmann::json;

constexpr double kPi = 3.14159265358979323846;

// Every field goes through the shared reader (core/support/json_reader.hpp): errors name the scene
// file and the field's JSON pointer.
using Reader = JsonReader;

std::string child(const std::string& at, const std::string& key) { return jsonPointerChild(at, key); }
std::string child(const std::string& at, size_t index) { return jsonPointerChild(at, index); }

json toJson(const Vec3& v) { return json::array({v[0], v[1], v[2]}); }

// --- sections --------------------------------------------------------------------------

// The mesh recipe (meshes/mesh_recipe.hpp, docs/meshes.md): its own parser checks every key
// and names the field under "/mesh"; file paths in it are relative to the scene's folder.
MeshRecipe parseMesh(const Reader& in, const json& doc, const std::string& parent, json& out) {
  const std::string at = parent + "/mesh";
  const json& mesh = in.object(in.required(doc, "mesh", parent), at);
  const std::string base_dir = in.source() == "<inline>" ? std::string()
                                                        : std::filesystem::path(in.source()).parent_path().string();
  MeshRecipe recipe = parseMeshRecipe(mesh, in.source(), at, base_dir);
  out = recipe.canonical;
  return recipe;
}

// Body-level material data that is not a MaterialSpec: a muscle's fibre direction and its
// activation schedule a(t) (piecewise linear between [t, a] points, constant outside).
struct MaterialExtras {
  Vec3 fibre_direction = Vec3::UnitX();
  SchedulePoints activation;       // empty: no activation
  double bending_stiffness = 0.0;  // cloth (a triangle surface in 3D)
};

// A piecewise-linear schedule [[t, value], ...] (core/support/time_schedule.hpp): a muscle's
// activation and a load's scale are read here, both. Times must not decrease; each value must
// lie in [min_value, max_value]. `out` gets the points as read.
SchedulePoints parseSchedulePoints(const Reader& in, const json& value, const std::string& at, double min_value,
                                   double max_value, const std::string& range_message, json& out) {
  SchedulePoints points;
  out = json::array();
  const json& list = in.array(value, at);
  for (size_t k = 0; k < list.size(); ++k) {
    const std::vector<double> point = in.numbers(list[k], child(at, k), 2);
    if (point[1] < min_value || point[1] > max_value) in.fail(child(child(at, k), 1), range_message);
    if (!points.empty() && point[0] < points.back().first) in.fail(child(child(at, k), 0), "times must not decrease");
    points.emplace_back(point[0], point[1]);
    out.push_back({point[0], point[1]});
  }
  return points;
}

MaterialSpec parseMaterial(const Reader& in, const json& doc, const std::string& parent, json& out,
                           MaterialExtras& extras) {
  const std::string at = parent + "/material";
  const json& material = in.object(in.required(doc, "material", parent), at);

  MaterialSpec spec;
  const std::string model = in.string(in.required(material, "model", at), at + "/model");
  try {
    spec.model = parseMaterialModel(model);
  } catch (const std::invalid_argument&) {
    in.failUnknownName(at + "/model", model, materialModelNames(), "material model");
  }
  const bool muscle = spec.model == MaterialModel::kMuscle;
  std::vector<std::string> keys = {"model", "youngs_modulus", "poisson_ratio", "lame_mapping", "density",
                                   "bending_stiffness"};
  if (muscle) keys.insert(keys.end(), {"sigma_max", "optimal_fibre_length", "fibre_direction", "activation"});
  in.onlyKeys(material, at, keys, muscle ? "" : "(sigma_max, optimal_fibre_length, fibre_direction and activation "
                                                "belong to the muscle model)");

  spec.youngs_modulus = in.number(in.required(material, "youngs_modulus", at), at + "/youngs_modulus");
  if (!(spec.youngs_modulus > 0.0))
    in.fail(at + "/youngs_modulus", "Young's modulus must be > 0 (Pa), got " + material["youngs_modulus"].dump());
  spec.poisson_ratio = in.number(in.required(material, "poisson_ratio", at), at + "/poisson_ratio");
  if (!(spec.poisson_ratio > -1.0 && spec.poisson_ratio < 0.5))
    in.fail(at + "/poisson_ratio",
            "Poisson's ratio must lie strictly between -1 and 0.5 (0.5 is exactly incompressible, which these "
            "models cannot represent), got " + material["poisson_ratio"].dump());

  if (material.contains("lame_mapping")) {
    spec.mapping = parseLameMapping(in.oneOf(material["lame_mapping"], at + "/lame_mapping", {"raw", "matched"},
                                             "Lame mapping"));
  }
  // The range of the density is checked by Problem::finalize (field /material/density).
  if (material.contains("density")) spec.density = in.number(material["density"], at + "/density");
  // Whether the mesh can bend (a triangle surface in 3D) is checked by Problem::finalize.
  if (material.contains("bending_stiffness"))
    extras.bending_stiffness = in.nonNegative(material["bending_stiffness"], at + "/bending_stiffness");

  out = {{"model", materialModelName(spec.model)},
         {"youngs_modulus", spec.youngs_modulus},
         {"poisson_ratio", spec.poisson_ratio},
         {"lame_mapping", lameMappingName(spec.mapping)},
         {"density", spec.density}};
  if (extras.bending_stiffness > 0.0) out["bending_stiffness"] = extras.bending_stiffness;
  if (muscle) {
    // PXPBD eq. 6-8; the paper gives none of these: defaults in core/materials/material.hpp.
    if (material.contains("sigma_max")) spec.sigma_max = in.nonNegative(material["sigma_max"], at + "/sigma_max");
    if (material.contains("optimal_fibre_length"))
      spec.lambda_ofl = in.positive(material["optimal_fibre_length"], at + "/optimal_fibre_length");
    if (material.contains("fibre_direction")) {
      extras.fibre_direction = in.vec3(material["fibre_direction"], at + "/fibre_direction");
      if (!(extras.fibre_direction.norm() > 0.0)) in.fail(at + "/fibre_direction", "must be a non-zero vector");
      extras.fibre_direction.normalize();
    }
    json activation_out = json::array();
    if (material.contains("activation"))
      extras.activation = parseSchedulePoints(in, material["activation"], at + "/activation", 0.0, 1.0,
                                              "an activation lies in [0, 1]", activation_out);
    out["sigma_max"] = spec.sigma_max;
    out["optimal_fibre_length"] = spec.lambda_ofl;
    out["fibre_direction"] = toJson(extras.fibre_direction);
    out["activation"] = activation_out;
  }
  return spec;
}

// One body: its mesh through the mesh cache, its material and per-element data.
// A body's placement (validation/body_placement.hpp) with the pointer of its "placement".
struct PlacementInput {
  BodyPlacement placement;
  std::string field;
};

Body makeBody(const Reader& in, const std::string& name, const MeshRecipe& recipe, const std::string& mesh_field,
              const MaterialSpec& material, const MaterialExtras& extras, const PlacementInput& placement) {
  Body body;
  body.name = name;
  try {
    // Through the mesh cache (PBDLAB_CACHE_DIR, docs/meshes.md): a repeated run does not re-mesh.
    body.mesh = loadOrMakeMesh(recipe, MeshCache::fromEnvironment()).mesh;
  } catch (const std::invalid_argument& error) {
    in.fail(mesh_field, error.what());
  }
  // After the cache (its entries are the unplaced meshes), before region node sets are selected.
  applyBodyPlacement(in, placement.placement, placement.field, body.mesh);
  body.material = material;
  body.bending_stiffness = extras.bending_stiffness;
  if (material.model == MaterialModel::kMuscle) {
    MaterialPointData data;
    data.fibre_direction = extras.fibre_direction;
    body.element_data.assign(body.mesh.numElements(), data);
    body.activation = piecewiseLinearSchedule(extras.activation);
  }
  return body;
}

std::vector<Collider> parseColliders(const Reader& in, const json& doc, json& out) {
  const std::string at = "/colliders";
  out = json::array();
  std::vector<Collider> colliders;
  if (!doc.contains("colliders")) return colliders;
  const json& list = in.array(doc["colliders"], at);
  for (size_t k = 0; k < list.size(); ++k) {
    const std::string here = child(at, k);
    const json& entry = in.object(list[k], here);
    Collider collider;
    const std::string type = in.oneOf(in.required(entry, "type", here), here + "/type", {"plane", "sphere", "box"},
                                      "collider type");
    json item = {{"type", type}};
    try {
      if (type == "plane") {
        in.onlyKeys(entry, here, {"type", "name", "point", "normal", "stiffness", "contact_tolerance"});
        const Vec3 point = in.vec3(in.required(entry, "point", here), here + "/point");
        const Vec3 normal = in.vec3(in.required(entry, "normal", here), here + "/normal");
        collider.shape = makePlaneCollider(point, normal);
        item["point"] = toJson(point);
        item["normal"] = toJson(std::get<PlaneCollider>(collider.shape).normal);
      } else if (type == "sphere") {
        in.onlyKeys(entry, here, {"type", "name", "center", "radius", "stiffness", "contact_tolerance"});
        const Vec3 center = in.vec3(in.required(entry, "center", here), here + "/center");
        const double radius = in.positive(in.required(entry, "radius", here), here + "/radius");
        collider.shape = makeSphereCollider(center, radius);
        item["center"] = toJson(center);
        item["radius"] = radius;
      } else {
        in.onlyKeys(entry, here, {"type", "name", "center", "half_extents", "stiffness", "contact_tolerance"});
        const Vec3 center = in.vec3(in.required(entry, "center", here), here + "/center");
        const Vec3 half = in.vec3(in.required(entry, "half_extents", here), here + "/half_extents");
        collider.shape = makeBoxCollider(center, half);
        item["center"] = toJson(center);
        item["half_extents"] = toJson(half);
      }
    } catch (const std::invalid_argument& error) {
      in.fail(here, error.what());
    }
    collider.name = entry.contains("name") ? in.nonEmptyString(entry["name"], here + "/name") : type + std::to_string(k);
    if (entry.contains("stiffness")) collider.stiffness = in.positive(entry["stiffness"], here + "/stiffness");
    if (entry.contains("contact_tolerance"))
      collider.contact_tolerance = in.nonNegative(entry["contact_tolerance"], here + "/contact_tolerance");
    item["name"] = collider.name;
    item["stiffness"] = collider.stiffness;
    item["contact_tolerance"] = collider.contact_tolerance;
    out.push_back(item);
    colliders.push_back(collider);
  }
  return colliders;
}

// "collisions": {"k_n": 1e8, "k_t": 0}: vertex-triangle contacts between bodies, created
// each step (core/model/collision_detection.hpp). Absent: no collisions.
CollisionSettings parseCollisions(const Reader& in, const json& doc, json& resolved) {
  CollisionSettings settings;
  if (!doc.contains("collisions")) return settings;
  const std::string at = "/collisions";
  const json& entry = in.object(doc["collisions"], at);
  in.onlyKeys(entry, at, {"k_n", "k_t"});
  settings.enabled = true;
  if (entry.contains("k_n")) settings.k_n = in.nonNegative(entry["k_n"], at + "/k_n");
  if (entry.contains("k_t")) settings.k_t = in.nonNegative(entry["k_t"], at + "/k_t");
  if (settings.k_n + settings.k_t <= 0.0) in.fail(at, "k_n and k_t are both zero: the contacts would push nothing");
  // Written only when given, so the resolved physics (and its hash) of older scenes is unchanged.
  resolved["collisions"] = {{"k_n", settings.k_n}, {"k_t", settings.k_t}};
  return settings;
}

// "grid" (docs/scene-format.md, "grid"; docs/grid.md): read in two parts. The keys, types and
// ranges are checked with the rest of the file, before any mesh is made (readGrid); what needs
// the bodies (the box holds them, the walls fit the grid, every element fits the embedded
// term's block, gridStepRejection) once the problem is finalized (resolveGrid).
constexpr int kMaxGridNodes = 10'000'000;  // as a box mesh's cells: a typo in the spacing is refused
constexpr int kMaxGridMarginCells = 1'000;

struct GridInput {
  json moving_walls_resolved = json::array();
  double spacing = 0.0;
  GridKernel kernel = GridKernel::kTrilinear;
  bool has_box = false;
  Vec3 box_min = Vec3::Zero(), box_max = Vec3::Zero();
  int margin_cells = 2;
  GridWalls walls;
};

const std::vector<std::string>& gridFaceNames() {
  static const std::vector<std::string> names = {"x-min", "x-max", "y-min", "y-max", "z-min", "z-max"};
  return names;
}

MotionStage parseStage(const Reader& in, const json& value, const std::string& at, double run_end, json& out);

// "moving_walls": [{"name", "box": {"min", "max"}, "motion": [stages as a Dirichlet motion's]}]
// (core/model/grid_step_problem.hpp, GridMovingWall).
std::vector<GridMovingWall> readMovingWalls(const Reader& in, const json& list_json, const std::string& at,
                                            double run_end, json& out) {
  const json& list = in.array(list_json, at);
  std::vector<GridMovingWall> walls;
  for (size_t w = 0; w < list.size(); ++w) {
    const std::string here = child(at, w);
    const json& entry = in.object(list[w], here);
    in.onlyKeys(entry, here, {"name", "box", "motion"});
    GridMovingWall wall;
    wall.name = in.string(in.required(entry, "name", here), here + "/name");
    if (wall.name.empty() || wall.name.find('/') != std::string::npos)
      in.fail(here + "/name", "must be non-empty and contain no '/'");
    for (const GridMovingWall& other : walls)
      if (other.name == wall.name) in.fail(here + "/name", "another moving wall is named '" + wall.name + "'");
    const std::string box_at = here + "/box";
    const json& box = in.object(in.required(entry, "box", here), box_at);
    in.onlyKeys(box, box_at, {"min", "max"});
    wall.box_min = in.vec3(in.required(box, "min", box_at), box_at + "/min");
    wall.box_max = in.vec3(in.required(box, "max", box_at), box_at + "/max");
    for (int d = 0; d < 3; ++d)
      if (!(wall.box_min[d] <= wall.box_max[d]))
        in.fail(box_at, std::string("min must not lie above max (component ") + "xyz"[d] + ")");
    const std::string motion_at = here + "/motion";
    const json& motion = in.array(in.required(entry, "motion", here), motion_at);
    json stages_out = json::array();
    for (size_t k = 0; k < motion.size(); ++k) {
      json stage_out;
      const MotionStage stage = parseStage(in, motion[k], child(motion_at, k), run_end, stage_out);
      if (stage.kind == MotionStage::Kind::kRotate && !(stage.axis_direction.norm() > 0.0))
        in.fail(child(motion_at, k) + "/axis_direction", "must not be the zero vector");
      wall.motion.stages.push_back(stage);
      stages_out.push_back(std::move(stage_out));
    }
    out.push_back({{"name", wall.name},
                   {"box", {{"min", toJson(wall.box_min)}, {"max", toJson(wall.box_max)}}},
                   {"motion", stages_out}});
    walls.push_back(std::move(wall));
  }
  return walls;
}

std::optional<GridInput> readGrid(const Reader& in, const json& doc, double run_end) {
  if (!doc.contains("grid")) return std::nullopt;
  const std::string at = "/grid";
  const json& grid = in.object(doc["grid"], at);
  in.onlyKeys(grid, at, {"spacing", "kernel", "box", "margin_cells", "walls", "moving_walls"});
  GridInput input;
  input.spacing = in.positive(in.required(grid, "spacing", at), at + "/spacing");
  if (grid.contains("kernel"))
    input.kernel = in.enumOf<GridKernel>(
        grid["kernel"], at + "/kernel",
        {{"trilinear", GridKernel::kTrilinear}, {"quadratic_bspline", GridKernel::kQuadraticBSpline}}, "grid kernel");
  if (grid.contains("box")) {
    if (grid.contains("margin_cells"))
      in.fail(at + "/margin_cells",
              "applies only without \"box\" (the grid then covers the bodies' initial bounding box with this many "
              "cells beyond it)");
    const std::string box_at = at + "/box";
    const json& box = in.object(grid["box"], box_at);
    in.onlyKeys(box, box_at, {"min", "max"});
    input.has_box = true;
    input.box_min = in.vec3(in.required(box, "min", box_at), box_at + "/min");
    input.box_max = in.vec3(in.required(box, "max", box_at), box_at + "/max");
    for (int d = 0; d < 3; ++d)
      if (!(input.box_min[d] < input.box_max[d]))
        in.fail(box_at, std::string("min must lie below max in every component (component ") + "xyz"[d] + ": " +
                            json(input.box_min[d]).dump() + " and " + json(input.box_max[d]).dump() + ")");
  } else if (grid.contains("margin_cells")) {
    input.margin_cells = in.integer(grid["margin_cells"], at + "/margin_cells", 0, kMaxGridMarginCells);
    if (input.kernel == GridKernel::kQuadraticBSpline && input.margin_cells < 1)
      in.fail(at + "/margin_cells",
              "is 0, but the quadratic B-spline kernel's stencil reaches 1.5 cells from a vertex: at least 1 cell "
              "beyond the bodies is needed");
  }
  if (grid.contains("walls")) {
    const std::string walls_at = at + "/walls";
    const json& walls = in.object(grid["walls"], walls_at);
    in.onlyKeys(walls, walls_at, gridFaceNames(), "(the faces of the grid's box)");
    for (const auto& [face, value] : walls.items()) {
      const std::string here = child(walls_at, face);
      const json& wall_json = in.object(value, here);
      in.onlyKeys(wall_json, here, {"type", "thickness"});
      GridWall& wall = input.walls[face];
      wall.kind = in.enumOf<GridWall::Kind>(
          in.required(wall_json, "type", here), here + "/type",
          {{"sticky", GridWall::Kind::kSticky}, {"slip", GridWall::Kind::kSlip}, {"none", GridWall::Kind::kNone}},
          "grid wall type");
      if (wall_json.contains("thickness"))
        wall.thickness = in.integerAtLeast(wall_json["thickness"], here + "/thickness", 1);
    }
  }
  if (grid.contains("moving_walls"))
    input.walls.moving = readMovingWalls(in, grid["moving_walls"], at + "/moving_walls", run_end,
                                         input.moving_walls_resolved);
  return input;
}

std::string vec3Text(const Vec3& v) { return toJson(v).dump(); }

// The field a gridStepRejection sentence is about (the checks in its order).
std::string gridRejectionField(const Problem& problem) {
  if (problem.time.integrator != Integrator::kBackwardEuler) return "/time/integrator";
  if (!problem.dirichlet.empty()) return "/dirichlet";
  if (problem.isPlaneStrain()) return "/grid";  // the 2D mesh and the grid do not go together
  if (problem.collisions.enabled) return "/collisions";
  return "/grid";
}

GridSpec resolveGrid(const Reader& in, const GridInput& input, const Problem& problem, json& out) {
  const std::string at = "/grid";
  if (const std::string why = gridStepRejection(problem); !why.empty()) in.fail(gridRejectionField(problem), why);
  const Positions start = initialState(problem).x;
  const auto [lo, hi] = boundingBox(start);
  const double h = input.spacing;

  // The grid: the box's, its far face rounded up to a whole number of cells (round-off of a
  // resolved box's own far corner is not a cell), or BackgroundGrid::covering's of the bodies
  // (the same counts, computed here first so that a grid too large is refused, not allocated).
  if (input.has_box)
    for (int d = 0; d < 3; ++d)
      if (lo[d] < input.box_min[d] || hi[d] > input.box_max[d])
        in.fail(at + "/box", "does not contain the bodies: their initial positions span " + vec3Text(lo) + " to " +
                                 vec3Text(hi) + " (component " + "xyz"[d] + ")");
  Vec3 cells;
  for (int d = 0; d < 3; ++d) {
    if (input.has_box) {
      const double ratio = (input.box_max[d] - input.box_min[d]) / h;
      cells[d] = std::max(1.0, std::ceil(ratio - 1e-9 * std::max(1.0, ratio)));
    } else {
      cells[d] = std::max(1.0, std::ceil((hi[d] - lo[d]) / h)) + 2.0 * input.margin_cells;
    }
  }
  const double nodes = (cells[0] + 1) * (cells[1] + 1) * (cells[2] + 1);
  if (!(nodes <= kMaxGridNodes))
    in.fail(at + "/spacing", "gives a grid of " + json(cells[0] + 1).dump() + " x " + json(cells[1] + 1).dump() +
                                 " x " + json(cells[2] + 1).dump() + " nodes, more than " +
                                 std::to_string(kMaxGridNodes) + " (a larger spacing, a smaller box or margin)");
  GridSpec spec{input.has_box ? BackgroundGrid(input.box_min, h, (cells.array() + 1.0).cast<int>().matrix())
                              : BackgroundGrid::covering(lo, hi, h, input.margin_cells),
                input.kernel, input.walls};
  const BackgroundGrid& grid = spec.grid;
  const Eigen::Vector3i& counts = grid.nodeCounts();

  // The embedded term's block of nodes (3 or 4 per axis) must fit the grid.
  const int block = spec.kernel == GridKernel::kTrilinear ? 3 : 4;
  for (int d = 0; d < 3; ++d)
    if (counts[d] < block)
      in.fail(at + (input.has_box ? "/box" : "/margin_cells"),
              std::string("gives ") + std::to_string(counts[d]) + " nodes along " + "xyz"[d] + ", but the " +
                  gridKernelName(spec.kernel) + " kernel's elements need a block of " + std::to_string(block) +
                  " nodes per axis: " + (input.has_box ? "a larger box" : "a larger margin"));
  for (int face = 0; face < 6; ++face) {
    const GridWall& wall = spec.walls.faces[static_cast<size_t>(face)];
    const int layers = counts[face / 2];
    if (wall.kind != GridWall::Kind::kNone && wall.thickness > layers)
      in.fail(at + "/walls/" + GridWalls::faceName(face) + "/thickness",
              "is " + std::to_string(wall.thickness) + " node layers, but the grid has " + std::to_string(layers) +
                  " nodes along " + "xyz"[face / 2]);
  }
  // Every vertex's stencil inside the grid (the quadratic kernel's reaches half a cell past the
  // trilinear one's), then the first step's problem: an element must fit the embedded term's
  // block of nodes (docs/grid.md, "Known issues").
  try {
    computeGridWeights(grid, spec.kernel, start);
  } catch (const std::invalid_argument& error) {
    in.fail(at + "/box", std::string("leaves a vertex's stencil outside the grid (the quadratic B-spline kernel needs "
                                     "every vertex at least half a cell inside the box): ") + error.what());
  }
  try {
    gridStepProblemAtStart(problem, spec);
  } catch (const std::invalid_argument& error) {
    in.fail(at + "/spacing", error.what());
  }

  json walls = json::object();
  for (int face = 0; face < 6; ++face) {
    const GridWall& wall = spec.walls.faces[static_cast<size_t>(face)];
    walls[GridWalls::faceName(face)] = {{"type", gridWallKindName(wall.kind)}, {"thickness", wall.thickness}};
  }
  const Vec3 far = grid.nodePosition(Eigen::Vector3i(counts[0] - 1, counts[1] - 1, counts[2] - 1));
  out = {{"spacing", h},
         {"kernel", spec.kernel == GridKernel::kTrilinear ? "trilinear" : "quadratic_bspline"},
         {"box", {{"min", toJson(grid.origin())}, {"max", toJson(far)}}},
         {"walls", walls}};
  // Written only when given, so older grid scenes keep their resolved physics (and its hash).
  if (!spec.walls.moving.empty()) out["moving_walls"] = input.moving_walls_resolved;
  return spec;
}

// "loads": dead surface tractions and point loads, each with an optional schedule s(t)
// (core/model/loads.hpp). Whether the node sets exist, hold boundary faces and fit the mesh (plane
// strain: no z component; no traction on a cloth) is checked by Problem::finalize with these
// same fields.
std::vector<Load> parseLoads(const Reader& in, const json& doc, json& resolved) {
  const std::string at = "/loads";
  std::vector<Load> loads;
  if (!doc.contains("loads")) return loads;
  const json& list = in.array(doc["loads"], at);
  json out = json::array();
  for (size_t k = 0; k < list.size(); ++k) {
    const std::string here = child(at, k);
    const json& entry = in.object(list[k], here);
    Load load;
    const std::string type = in.oneOf(in.required(entry, "type", here), here + "/type", {"traction", "point"}, "load type");
    const bool traction = type == "traction";
    load.kind = traction ? Load::Kind::kTraction : Load::Kind::kPoint;
    const std::string set_key = traction ? "boundary" : "node_set";
    const std::string value_key = traction ? "traction" : "force";
    in.onlyKeys(entry, here, {"type", set_key, value_key, "total_force", "schedule"},
                traction ? "for a traction load" : "for a point load");
    load.node_set = in.nonEmptyString(in.required(entry, set_key, here), here + "/" + set_key);
    if (entry.contains(value_key) && entry.contains("total_force"))
      in.fail(here + "/total_force", "give either \"" + value_key + "\" or \"total_force\", not both");
    if (!entry.contains(value_key) && !entry.contains("total_force"))
      in.fail(here, "needs \"" + value_key + "\" or \"total_force\"");
    load.is_total = entry.contains("total_force");
    const std::string value_field = load.is_total ? "total_force" : value_key;
    load.value = in.vec3(entry[value_field], here + "/" + value_field);
    json schedule_out = json::array({json::array({0, 1})});  // the default: s = 1 at all times
    if (entry.contains("schedule")) {
      const SchedulePoints points =
          parseSchedulePoints(in, entry["schedule"], here + "/schedule", -std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::infinity(), "", schedule_out);
      if (points.empty()) in.fail(here + "/schedule", "needs at least one [t, s] point (leave it out for s = 1)");
      load.schedule = piecewiseLinearSchedule(points);
    }
    out.push_back({{"type", type}, {set_key, load.node_set}, {value_field, toJson(load.value)}, {"schedule", schedule_out}});
    loads.push_back(std::move(load));
  }
  // Written only when given, so the resolved physics (and its hash) of older scenes is unchanged.
  resolved["loads"] = out;
  return loads;
}

std::vector<NodeSetBinding> parseBindings(const Reader& in, const json& doc, json& out) {
  const std::string at = "/bindings";
  out = json::array();
  std::vector<NodeSetBinding> bindings;
  if (!doc.contains("bindings")) return bindings;
  const json& list = in.array(doc["bindings"], at);
  for (size_t k = 0; k < list.size(); ++k) {
    const std::string here = child(at, k);
    const json& entry = in.object(list[k], here);
    in.onlyKeys(entry, here, {"node_set", "body", "stiffness", "k_n", "k_t", "normal", "offset"});
    NodeSetBinding binding;
    binding.node_set = in.nonEmptyString(in.required(entry, "node_set", here), here + "/node_set");
    binding.body = in.nonEmptyString(in.required(entry, "body", here), here + "/body");
    if (entry.contains("stiffness")) {
      if (entry.contains("k_n") || entry.contains("k_t"))
        in.fail(here + "/stiffness", "give either stiffness (isotropic) or k_n and k_t (anisotropic), not both");
      binding.k_n = binding.k_t = in.positive(entry["stiffness"], here + "/stiffness");
    } else {
      binding.k_n = in.nonNegative(in.required(entry, "k_n", here), here + "/k_n");
      binding.k_t = in.nonNegative(in.required(entry, "k_t", here), here + "/k_t");
      if (binding.k_n + binding.k_t <= 0.0) in.fail(here, "k_n and k_t are both zero: the binding does nothing");
    }
    if (entry.contains("normal")) {
      binding.normal = in.vec3(entry["normal"], here + "/normal");
      if (!(binding.normal.norm() > 0.0)) in.fail(here + "/normal", "must be a non-zero vector");
    }
    if (entry.contains("offset")) binding.offset = in.vec3(entry["offset"], here + "/offset");
    out.push_back({{"node_set", binding.node_set}, {"body", binding.body}, {"k_n", binding.k_n}, {"k_t", binding.k_t},
                   {"normal", toJson(binding.normal)}});
    if (entry.contains("offset")) out.back()["offset"] = toJson(binding.offset);  // only when given: resolved scenes keep their keys
    bindings.push_back(binding);
  }
  return bindings;
}

// "node_sets": [{"name": "plate", "box": {"min": [x, y, z], "max": [x, y, z]}, "body": "b"}]:
// named sets of the nodes whose rest position lies in a closed axis-aligned box (a clamp by
// region, e.g. the flat base a curved mesh stands on). "body" names the body of a scene with
// "bodies" (the set is then "body/name"); a single-body scene has none.
struct RegionNodeSet {
  std::string name;
  std::string body;  // "" for the single-body shorthand
  Vec3 min, max;
  std::string field;  // the entry's JSON pointer, for errors found when the mesh exists
};

std::vector<RegionNodeSet> parseRegionNodeSets(const Reader& in, const json& doc, bool has_bodies, json& out) {
  const std::string at = "/node_sets";
  out = json::array();
  std::vector<RegionNodeSet> sets;
  if (!doc.contains("node_sets")) return sets;
  const json& list = in.array(doc["node_sets"], at);
  for (size_t k = 0; k < list.size(); ++k) {
    const std::string here = child(at, k);
    const json& entry = in.object(list[k], here);
    in.onlyKeys(entry, here, {"name", "box", "body"});
    RegionNodeSet set;
    set.field = here;
    set.name = in.nonEmptyString(in.required(entry, "name", here), here + "/name");
    if (set.name.find('/') != std::string::npos) in.fail(here + "/name", "must not contain '/'");
    if (has_bodies) {
      set.body = in.nonEmptyString(in.required(entry, "body", here), here + "/body");
    } else if (entry.contains("body")) {
      in.fail(here + "/body", "applies to scenes with \"bodies\" only");
    }
    const json& box = in.object(in.required(entry, "box", here), here + "/box");
    in.onlyKeys(box, here + "/box", {"min", "max"});
    set.min = in.vec3(in.required(box, "min", here + "/box"), here + "/box/min");
    set.max = in.vec3(in.required(box, "max", here + "/box"), here + "/box/max");
    for (int d = 0; d < 3; ++d)
      if (!(set.min[d] <= set.max[d]))
        in.fail(here + "/box", "min must not exceed max in any component (component " + std::to_string(d) + ")");
    for (const RegionNodeSet& earlier : sets)
      if (earlier.name == set.name && earlier.body == set.body) in.fail(here + "/name", "repeats the set '" + set.name + "'");
    json set_out = {{"name", set.name}, {"box", {{"min", toJson(set.min)}, {"max", toJson(set.max)}}}};
    if (has_bodies) set_out["body"] = set.body;
    out.push_back(set_out);
    sets.push_back(set);
  }
  return sets;
}

// Adds a region set to its body's mesh: an existing name or an empty selection is an error.
void addRegionNodeSet(const Reader& in, const RegionNodeSet& set, Mesh& mesh) {
  if (mesh.node_sets.count(set.name)) in.fail(set.field + "/name", "'" + set.name + "' is already a node set of the mesh");
  std::vector<int> nodes;
  for (int i = 0; i < mesh.numNodes(); ++i) {
    const Vec3 X = mesh.restPosition(i);
    if ((X.array() >= set.min.array()).all() && (X.array() <= set.max.array()).all()) nodes.push_back(i);
  }
  if (nodes.empty()) in.fail(set.field + "/box", "contains no node of the mesh");
  mesh.node_sets[set.name] = std::move(nodes);
}

// "initial_state": {"linear_map": [[3 numbers] x 3 rows], "fixed_point": [x, y, z]}: the
// state at t = 0 is x0 = p + A (X - p) (the rest shape by default). A must be finite and
// invertible (a singular map would collapse elements to zero volume, where no model is defined).
void parseInitialState(const Reader& in, const json& doc, Problem& problem, json& out) {
  out = {{"linear_map", json::array({json::array({1, 0, 0}), json::array({0, 1, 0}), json::array({0, 0, 1})})},
         {"fixed_point", json::array({0, 0, 0})}};
  if (!doc.contains("initial_state")) return;
  const std::string at = "/initial_state";
  const json& value = in.object(doc["initial_state"], at);
  in.onlyKeys(value, at, {"linear_map", "fixed_point", "velocity", "angular_velocity", "spin_center", "spin"},
              "of initial_state");
  if (value.contains("linear_map")) {
    const json& rows = in.array(value["linear_map"], at + "/linear_map");
    if (rows.size() != 3)
      in.fail(at + "/linear_map", "must have 3 rows of 3 numbers, got " + std::to_string(rows.size()) + " rows");
    for (int r = 0; r < 3; ++r) {
      const std::vector<double> row = in.numbers(rows[r], jsonPointerChild(at + "/linear_map", r), 3);
      for (int c = 0; c < 3; ++c) problem.initial_map(r, c) = row[c];
    }
    const double det = problem.initial_map.determinant();
    if (!(std::abs(det) > 1e-12))
      in.fail(at + "/linear_map", "is singular (det " + std::to_string(det) + "): it would collapse every element");
    out["linear_map"] = rows;
  } else if (value.contains("fixed_point")) {
    in.fail(at + "/fixed_point", "is the fixed point of linear_map, which is not given");
  }
  if (value.contains("fixed_point")) problem.initial_map_fixed_point = in.vec3(value["fixed_point"], at + "/fixed_point");
  out["fixed_point"] = toJson(problem.initial_map_fixed_point);
  // v0 = u + w x (x0 - c): a uniform velocity and a rigid spin about c (Problem).
  if (value.contains("velocity")) problem.initial_velocity = in.vec3(value["velocity"], at + "/velocity");
  if (value.contains("angular_velocity"))
    problem.initial_angular_velocity = in.vec3(value["angular_velocity"], at + "/angular_velocity");
  if (value.contains("spin_center")) {
    if (!value.contains("angular_velocity"))
      in.fail(at + "/spin_center", "is the centre of angular_velocity's spin, which is not given");
    problem.initial_spin_center = in.vec3(value["spin_center"], at + "/spin_center");
  }
  if (value.contains("spin")) {
    if (!value.contains("angular_velocity"))
      in.fail(at + "/spin", "is the form of angular_velocity's spin, which is not given");
    problem.initial_spin_chord =
        in.oneOf(value["spin"], at + "/spin", {"tangent", "chord"}, "spin velocity form") == "chord";
  }
  if (value.contains("velocity") || value.contains("angular_velocity")) {
    if (problem.time.integrator == Integrator::kQuasistatic)
      in.fail(at + (value.contains("velocity") ? "/velocity" : "/angular_velocity"),
              "needs time.integrator 'backward_euler': a quasistatic step has no velocity");
    out["velocity"] = toJson(problem.initial_velocity);
    out["angular_velocity"] = toJson(problem.initial_angular_velocity);
    out["spin_center"] = toJson(problem.initial_spin_center);
    out["spin"] = problem.initial_spin_chord ? "chord" : "tangent";
  }
}

TimeStepping parseTime(const Reader& in, const json& doc, json& out) {
  const std::string at = "/time";
  const json& time = in.object(in.required(doc, "time", ""), at);
  in.onlyKeys(time, at, {"integrator", "dt", "steps", "substeps"});
  TimeStepping stepping;
  if (time.contains("integrator"))
    stepping.integrator = in.enumOf<Integrator>(
        time["integrator"], at + "/integrator",
        {{"quasistatic", Integrator::kQuasistatic}, {"backward_euler", Integrator::kBackwardEuler}}, "integrator");
  // Ranges (dt > 0, steps >= 1) are checked by Problem::finalize with these same fields.
  stepping.dt = in.number(in.required(time, "dt", at), at + "/dt");
  stepping.num_steps = in.integer(in.required(time, "steps", at), at + "/steps");
  if (time.contains("substeps")) stepping.substeps = in.integerAtLeast(time["substeps"], at + "/substeps", 1);
  out = {{"integrator", integratorName(stepping.integrator)}, {"dt", stepping.dt}, {"steps", stepping.num_steps},
         {"substeps", stepping.substeps}};
  return stepping;
}

// "discretization": quadrature degree (0 = the element type's stiffness degree) and mass
// lumping ("equal_share", PXPBD eq. 50, or "hrz").
Discretization parseDiscretization(const Reader& in, const json& doc, json& out) {
  const std::string at = "/discretization";
  Discretization discretization;
  if (doc.contains("discretization")) {
    const json& value = in.object(doc["discretization"], at);
    in.onlyKeys(value, at, {"quadrature_degree", "mass_lumping", "triangles"});
    if (value.contains("triangles"))
      discretization.triangles = in.enumOf<TriangleModel>(value["triangles"], at + "/triangles",
                                                          {{"auto", TriangleModel::kAuto},
                                                           {"plane_strain", TriangleModel::kPlaneStrain},
                                                           {"membrane", TriangleModel::kMembrane}},
                                                          "triangle model");
    if (value.contains("quadrature_degree")) {
      discretization.quadrature_degree = in.integer(value["quadrature_degree"], at + "/quadrature_degree");
      if (discretization.quadrature_degree < 0)
        in.fail(at + "/quadrature_degree", "must be >= 1 (or 0 for the element type's default)");
    }
    if (value.contains("mass_lumping")) {
      try {
        discretization.mass_lumping = parseMassLumping(in.string(value["mass_lumping"], at + "/mass_lumping"));
      } catch (const std::invalid_argument& error) {
        in.fail(at + "/mass_lumping", error.what());
      }
    }
  }
  out = {{"quadrature_degree", discretization.quadrature_degree},
         {"mass_lumping", massLumpingName(discretization.mass_lumping)}};
  // Written only when given, so older scenes keep their resolved physics (and its hash).
  if (discretization.triangles != TriangleModel::kAuto) out["triangles"] = triangleModelName(discretization.triangles);
  return discretization;
}

MotionStage parseStage(const Reader& in, const json& value, const std::string& at, double run_end, json& out) {
  const json& stage_json = in.object(value, at);
  const std::string type = in.string(in.required(stage_json, "type", at), at + "/type");
  MotionStage stage;
  if (type == "fixed") {
    in.onlyKeys(stage_json, at, {"type", "t_start", "t_end"});
    stage.kind = MotionStage::Kind::kFixed;
  } else if (type == "translate") {
    in.onlyKeys(stage_json, at, {"type", "by", "t_start", "t_end"});
    stage.kind = MotionStage::Kind::kTranslate;
    stage.translation = in.vec3(in.required(stage_json, "by", at), at + "/by");
  } else if (type == "rotate") {
    in.onlyKeys(stage_json, at, {"type", "axis_point", "axis_direction", "angle_degrees", "t_start", "t_end"});
    stage.kind = MotionStage::Kind::kRotate;
    stage.axis_point = in.vec3(in.required(stage_json, "axis_point", at), at + "/axis_point");
    stage.axis_direction = in.vec3(in.required(stage_json, "axis_direction", at), at + "/axis_direction");
    // A zero axis_direction is rejected by Problem::finalize (field .../axis_direction).
    stage.angle = in.number(in.required(stage_json, "angle_degrees", at), at + "/angle_degrees") * kPi / 180.0;
  } else {
    in.failUnknownName(at + "/type", type, {"fixed", "translate", "rotate"}, "motion type");
  }
  stage.t_start = stage_json.contains("t_start") ? in.number(stage_json["t_start"], at + "/t_start") : 0.0;
  stage.t_end = stage_json.contains("t_end") ? in.number(stage_json["t_end"], at + "/t_end")
                                             : std::max(run_end, stage.t_start);
  if (stage.t_end < stage.t_start)
    in.fail(at + "/t_end", "must be >= t_start (" + json(stage.t_start).dump() + ")");

  out = {{"type", type}, {"t_start", stage.t_start}, {"t_end", stage.t_end}};
  if (stage.kind == MotionStage::Kind::kTranslate) out["by"] = toJson(stage.translation);
  if (stage.kind == MotionStage::Kind::kRotate) {
    out["axis_point"] = toJson(stage.axis_point);
    out["axis_direction"] = toJson(stage.axis_direction);
    out["angle_degrees"] = stage_json["angle_degrees"].get<double>();
  }
  return stage;
}

std::vector<DirichletCondition> parseDirichlet(const Reader& in, const json& doc, double run_end, json& out) {
  const std::string at = "/dirichlet";
  std::vector<DirichletCondition> conditions;
  out = json::array();
  if (!doc.contains("dirichlet")) return conditions;
  const json& list = doc["dirichlet"];
  if (!list.is_array()) in.fail(at, "must be an array of Dirichlet conditions, got " + describeJson(list));
  for (size_t c = 0; c < list.size(); ++c) {
    const std::string here = child(at, c);
    const json& entry = in.object(list[c], here);
    in.onlyKeys(entry, here, {"node_set", "components", "motion"});
    DirichletCondition condition;
    // Whether the set exists in the mesh is checked by Problem::finalize (field .../node_set).
    condition.node_set = in.string(in.required(entry, "node_set", here), here + "/node_set");

    std::string components = "xyz";
    if (entry.contains("components")) {
      components = in.string(entry["components"], here + "/components");
      if (components.empty()) in.fail(here + "/components", "must name at least one of x, y, z");
      condition.components = {false, false, false};
      for (char c : components) {
        const size_t k = std::string("xyz").find(c);
        if (k == std::string::npos)
          in.fail(here + "/components", "must be a non-empty subset of \"xyz\", got \"" + components + "\"");
        if (condition.components[k])
          in.fail(here + "/components", "names '" + std::string(1, c) + "' twice in \"" + components + "\"");
        condition.components[k] = true;
      }
      components.clear();
      for (int k = 0; k < 3; ++k)
        if (condition.components[k]) components += "xyz"[k];
    }

    json motion_out = json::array();
    if (entry.contains("motion")) {
      const json& motion = entry["motion"];
      if (!motion.is_array()) in.fail(here + "/motion", "must be an array of motion stages, got " + describeJson(motion));
      for (size_t s = 0; s < motion.size(); ++s) {
        json stage_out;
        condition.motion.stages.push_back(parseStage(in, motion[s], child(here + "/motion", s), run_end, stage_out));
        motion_out.push_back(std::move(stage_out));
      }
    }
    out.push_back({{"node_set", condition.node_set}, {"components", components}, {"motion", motion_out}});
    conditions.push_back(std::move(condition));
  }
  return conditions;
}

// `materials`: the scene's materials (one per body), against which the options are checked
// (an XPBD split the model does not offer), before any mesh is made.
SolverSpec parseSolver(const Reader& in, const json& doc, const std::vector<MaterialSpec>& materials, json& out) {
  const std::string at = "/solver";
  SolverSpec spec;
  const json empty = json::object();
  const json& solver = doc.contains("solver") ? in.object(doc["solver"], at) : empty;
  in.onlyKeys(solver, at,
              {"name", "max_iterations", "max_seconds", "budget_scope", "target_relative_residual",
               "absolute_residual_floor", "record_every", "divergence_factor", "options"});
  if (solver.contains("name")) spec.name = in.string(solver["name"], at + "/name");
  if (solver.contains("options")) spec.options = in.object(solver["options"], at + "/options");

  Budget& budget = spec.budget;
  if (solver.contains("max_iterations"))
    budget.max_iterations = in.integerAtLeast(solver["max_iterations"], at + "/max_iterations", 1);
  if (solver.contains("max_seconds") && !solver["max_seconds"].is_null()) {
    budget.max_seconds = in.number(solver["max_seconds"], at + "/max_seconds");
    if (!(budget.max_seconds > 0.0)) in.fail(at + "/max_seconds", "must be > 0 (or null for no limit)");
  }
  if (solver.contains("target_relative_residual"))
    budget.target_relative_residual =
        in.nonNegative(solver["target_relative_residual"], at + "/target_relative_residual");
  if (solver.contains("absolute_residual_floor"))
    budget.absolute_residual_floor = in.nonNegative(solver["absolute_residual_floor"], at + "/absolute_residual_floor");

  if (solver.contains("record_every"))
    budget.record_every = in.integerAtLeast(solver["record_every"], at + "/record_every", 1);
  if (solver.contains("divergence_factor") && !solver["divergence_factor"].is_null()) {
    budget.divergence_factor = in.number(solver["divergence_factor"], at + "/divergence_factor");
    if (!(budget.divergence_factor > 1.0)) in.fail(at + "/divergence_factor", "must be > 1 (or null for no check)");
  } else if (solver.contains("divergence_factor")) {
    budget.divergence_factor = std::numeric_limits<double>::infinity();
  }
  if (solver.contains("budget_scope"))
    budget.scope = in.enumOf<Budget::Scope>(solver["budget_scope"], at + "/budget_scope",
                                            {{"substep", Budget::Scope::kSubstep}, {"frame", Budget::Scope::kFrame}},
                                            "budget scope");

  // Validates the name and the options, then the options against the materials; the runner
  // builds its own instance.
  const std::unique_ptr<Solver> instance = makeSolver(spec.name, spec.options, in.source(), at + "/options");
  for (const MaterialSpec& material : materials) {
    const Solver::OptionConflict conflict = instance->materialConflict(*makeMaterial(material));
    if (!conflict.option.empty()) in.fail(jsonPointerChild(at + "/options", conflict.option), conflict.reason);
  }

  out = {{"name", spec.name},
         {"max_iterations", budget.max_iterations},
         {"max_seconds", std::isfinite(budget.max_seconds) ? json(budget.max_seconds) : json(nullptr)},
         {"target_relative_residual", budget.target_relative_residual},
         {"absolute_residual_floor", budget.absolute_residual_floor},
         {"record_every", budget.record_every},
         {"divergence_factor",
          std::isfinite(budget.divergence_factor) ? json(budget.divergence_factor) : json(nullptr)},
         {"budget_scope", budget.scope == Budget::Scope::kFrame ? "frame" : "substep"},
         {"options", spec.options}};
  return spec;
}

OutputSpec parseOutput(const Reader& in, const json& doc, json& out) {
  const std::string at = "/output";
  OutputSpec spec;
  const json empty = json::object();
  const json& output = doc.contains("output") ? in.object(doc["output"], at) : empty;
  in.onlyKeys(output, at, {"vtu", "vtu_format", "probes"});
  std::string vtu = "final";
  if (output.contains("vtu")) {
    vtu = in.oneOf(output["vtu"], at + "/vtu", {"none", "final", "every_step"});
    spec.vtu = vtu == "none" ? OutputSpec::Frames::kNone
                             : vtu == "final" ? OutputSpec::Frames::kFinal : OutputSpec::Frames::kEveryStep;
  }
  if (output.contains("vtu_format"))
    spec.vtu_format = in.oneOf(output["vtu_format"], at + "/vtu_format", {"binary", "base64", "ascii"});
  json probes = json::object();
  if (output.contains("probes")) {
    const json& value = in.object(output["probes"], at + "/probes");
    for (const auto& [name, point] : value.items()) {
      spec.probes.push_back({name, in.vec3(point, child(at + "/probes", name))});
      probes[name] = toJson(spec.probes.back().point);
    }
  }
  out = {{"vtu", vtu}, {"vtu_format", spec.vtu_format}, {"probes", probes}};
  return spec;
}

}  // namespace

Scene parseScene(const nlohmann::json& document, const std::string& source) {
  const Reader in(source);
  if (!document.is_object()) in.fail("(root)", "a scene must be a JSON object, got " + describeJson(document));
  in.onlyKeys(document, "",
              {"name", "description", "mesh", "material", "bodies", "bindings", "colliders", "collisions", "discretization", "gravity", "loads", "dirichlet",
               "time", "solver", "output", "initial_state", "node_sets", "grid", "placement"});

  Scene scene;
  scene.path = source;
  json resolved = json::object();

  if (document.contains("name")) {
    scene.name = in.string(document["name"], "/name");
    if (scene.name.empty()) in.fail("/name", "must not be empty");
    if (scene.name.find_first_of("/\\") != std::string::npos)
      in.fail("/name", "must not contain '/' or '\\' (it names output files)");
  } else {
    scene.name = std::filesystem::path(source).stem().string();
    if (scene.name.empty()) scene.name = "scene";
  }
  resolved["name"] = scene.name;
  if (document.contains("description"))
    resolved["description"] = in.string(document["description"], "/description");

  // One body (mesh + material at the top) or several ("bodies"), never both.
  std::vector<std::pair<MeshRecipe, std::string>> recipes;  // with the pointer of each mesh
  std::vector<MaterialExtras> extras;
  std::vector<std::string> body_names;
  std::vector<PlacementInput> placements;
  // "placement" is written to the resolved scene (with every default) only when given, so older
  // scenes keep their resolved physics (and its hash).
  const auto readPlacement = [&](const json& object, const std::string& at, json& out) {
    PlacementInput placement{BodyPlacement{}, at + "/placement"};
    if (object.contains("placement"))
      placement.placement = parseBodyPlacement(in, object["placement"], placement.field, out["placement"]);
    placements.push_back(placement);
  };
  if (document.contains("bodies")) {
    for (const char* key : {"mesh", "material", "placement"})
      if (document.contains(key))
        in.fail(std::string("/") + key, "a scene with \"bodies\" gives each body its mesh, material and placement");
    const json& bodies = in.array(document["bodies"], "/bodies");
    if (bodies.empty()) in.fail("/bodies", "needs at least one body");
    resolved["bodies"] = json::array();
    for (size_t b = 0; b < bodies.size(); ++b) {
      const std::string at = child("/bodies", b);
      const json& body = in.object(bodies[b], at);
      in.onlyKeys(body, at, {"name", "mesh", "material", "placement"});
      const std::string name = in.nonEmptyString(in.required(body, "name", at), at + "/name");
      if (name.find('/') != std::string::npos) in.fail(at + "/name", "must not contain '/' (it prefixes node sets)");
      json body_out = {{"name", name}};
      recipes.emplace_back(parseMesh(in, body, at, body_out["mesh"]), at + "/mesh");
      extras.emplace_back();
      scene.problem.bodies.push_back({name, Mesh{}, parseMaterial(in, body, at, body_out["material"], extras.back()), {}, {}});
      body_names.push_back(name);
      readPlacement(body, at, body_out);
      resolved["bodies"].push_back(body_out);
    }
  } else {
    recipes.emplace_back(parseMesh(in, document, "", resolved["mesh"]), "/mesh");
    extras.emplace_back();
    scene.problem.material = parseMaterial(in, document, "", resolved["material"], extras.back());
    readPlacement(document, "", resolved);
  }
  scene.problem.bindings = parseBindings(in, document, resolved["bindings"]);
  scene.problem.colliders = parseColliders(in, document, resolved["colliders"]);
  scene.problem.collisions = parseCollisions(in, document, resolved);
  scene.problem.discretization = parseDiscretization(in, document, resolved["discretization"]);
  scene.problem.gravity = document.contains("gravity") ? in.vec3(document["gravity"], "/gravity") : Vec3::Zero();
  resolved["gravity"] = toJson(scene.problem.gravity);
  scene.problem.loads = parseLoads(in, document, resolved);
  scene.problem.time = parseTime(in, document, resolved["time"]);
  parseInitialState(in, document, scene.problem, resolved["initial_state"]);
  const double run_end = scene.problem.time.dt * scene.problem.time.num_steps;
  scene.problem.dirichlet = parseDirichlet(in, document, run_end, resolved["dirichlet"]);
  std::vector<MaterialSpec> materials;
  if (scene.problem.bodies.empty()) materials.push_back(scene.problem.material);
  for (const Body& body : scene.problem.bodies) materials.push_back(body.material);
  scene.solver = parseSolver(in, document, materials, resolved["solver"]);
  if (scene.solver.budget.scope == Budget::Scope::kFrame &&
      scene.solver.budget.max_iterations < scene.problem.time.substeps)
    in.fail("/solver/max_iterations", "is " + std::to_string(scene.solver.budget.max_iterations) +
                                          " for a frame of " + std::to_string(scene.problem.time.substeps) +
                                          " substeps: a per-frame budget needs at least one iteration per substep");
  scene.output = parseOutput(in, document, resolved["output"]);
  const std::optional<GridInput> grid = readGrid(in, document, run_end);
  const std::vector<RegionNodeSet> region_sets =
      parseRegionNodeSets(in, document, !scene.problem.bodies.empty(), resolved["node_sets"]);

  if (scene.problem.bodies.empty()) {
    Body body = makeBody(in, "", recipes[0].first, recipes[0].second, scene.problem.material, extras[0], placements[0]);
    if (body.element_data.empty() && !body.activation && body.bending_stiffness == 0.0) {
      scene.problem.mesh = std::move(body.mesh);  // the single-body shorthand
    } else {
      scene.problem.bodies.push_back(std::move(body));
    }
  } else {
    for (size_t b = 0; b < scene.problem.bodies.size(); ++b)
      scene.problem.bodies[b] = makeBody(in, body_names[b], recipes[b].first, recipes[b].second,
                                         scene.problem.bodies[b].material, extras[b], placements[b]);
  }
  for (const RegionNodeSet& set : region_sets) {
    if (set.body.empty()) {
      addRegionNodeSet(in, set, scene.problem.bodies.empty() ? scene.problem.mesh : scene.problem.bodies[0].mesh);
      continue;
    }
    const auto body = std::find(body_names.begin(), body_names.end(), set.body);
    if (body == body_names.end()) in.fail(set.field + "/body", "no body is named '" + set.body + "'");
    addRegionNodeSet(in, set, scene.problem.bodies[body - body_names.begin()].mesh);
  }
  scene.problem.finalize(source);
  // Written only when given, so older scenes keep their resolved physics (and its hash).
  if (grid) scene.grid = resolveGrid(in, *grid, scene.problem, resolved["grid"]);
  scene.resolved = std::move(resolved);
  return scene;
}

Problem gridStepProblemAtStart(const Problem& mesh_problem, const GridSpec& grid) {
  const State start = initialState(mesh_problem);
  const auto weights = std::make_shared<const GridWeights>(computeGridWeights(grid.grid, grid.kernel, start.x));
  const std::vector<Mat3> affine(static_cast<size_t>(mesh_problem.numNodes()), Mat3::Zero());
  const GridMomentum momentum = particlesToGrid(*weights, mesh_problem.nodeMasses(), start.v, affine);
  return makeGridStepProblem(mesh_problem, weights, momentum.mass, grid.walls, 0);
}

Scene loadScene(const std::string& path) {
  // Strict parsing: file errors, duplicate keys and numbers too large for a double are
  // reported with the file and the JSON pointer (core/support/json_reader.hpp).
  return parseScene(readJsonFile(path), path);
}

}  // namespace pbdlab
