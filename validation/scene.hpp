#pragma once
// A scene file (JSON) describes one experiment: mesh recipe, material with its Lamé mapping,
// Dirichlet sets and their motion, gravity, integrator, solver with its options and budget,
// and outputs. Every field is validated; an error names the file and the field as a JSON
// pointer (InputError). The format is documented in docs/scene-format.md.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/grid/background_grid.hpp"
#include "core/grid/grid_weights.hpp"
#include "core/model/grid_step_problem.hpp"
#include "core/model/problem.hpp"
#include "core/solver/solver.hpp"

namespace pbdlab {

struct SolverSpec {
  std::string name = "newton";
  nlohmann::json options = nlohmann::json::object();  // checked by makeSolver
  Budget budget;
};

struct OutputSpec {
  enum class Frames { kNone, kFinal, kEveryStep };
  Frames vtu = Frames::kFinal;
  std::string vtu_format = "binary";  // "binary", "base64" or "ascii" (meshes/vtu_writer.hpp VtuFormat)
  // Named rest-frame points whose displacement is written to the summary after every step
  // (e.g. "tip": the centre of the free end).
  struct Probe {
    std::string name;
    Vec3 point;
  };
  std::vector<Probe> probes;
  // The probe named `name`, or null.
  const Probe* probe(const std::string& name) const {
    for (const Probe& p : probes)
      if (p.name == name) return &p;
    return nullptr;
  }
};

// "grid": the scene runs the grid-based scheme (PXPBD §5.5, docs/grid.md): every (sub)step is a
// GridStepper step (core/solver/grid_stepper.hpp) on the nodes of this background grid, the
// meshes embedded in it. Resolved: the box is the grid's own (its origin and far corner).
struct GridSpec {
  BackgroundGrid grid;
  GridKernel kernel = GridKernel::kTrilinear;
  GridWalls walls;
};

struct Scene {
  std::string path;   // the scene file, or "<inline>"
  std::string name;   // "name" field, or the file's stem
  Problem problem;    // finalized
  SolverSpec solver;
  OutputSpec output;
  std::optional<GridSpec> grid;  // absent: mesh steps (advanceOneStep)
  nlohmann::json resolved;  // the scene with every default filled in (goes into the summary)
};

// The grid step's Problem at the start of a run (weights at the initial positions, P2G of the
// initial velocities with C_p = 0): what GridStepper's first step solves, up to its velocities.
// The scene reader builds it once (an element too large for the grid is refused at
// /grid/spacing); the runner asks the solver about it before the run. Throws
// std::invalid_argument as makeGridStepProblem does.
Problem gridStepProblemAtStart(const Problem& mesh_problem, const GridSpec& grid);

// Reads and validates a scene file. Throws InputError(path, field, message).
Scene loadScene(const std::string& path);
// Same for a parsed document; `source` names it in errors.
Scene parseScene(const nlohmann::json& document, const std::string& source);

}  // namespace pbdlab
