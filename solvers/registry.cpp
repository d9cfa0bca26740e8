#include "solvers/registry.hpp"

#include <cmath>

#include "core/input_error.hpp"
#include "reference/explicit_relaxation.hpp"
#include "reference/newton.hpp"

namespace pbdlab {

std::vector<std::string> solverNames() { return {"newton", "explicit_relaxation"}; }

namespace {

std::unique_ptr<Solver> makeNewton(const nlohmann::json& options, const std::string& source,
                                   const std::string& field) {
  NewtonOptions newton;
  for (const auto& [key, value] : options.items()) {
    const std::string at = field + "/" + key;
    if (key == "line_search") {
      if (!value.is_boolean()) throw InputError(source, at, "must be true or false");
      newton.line_search = value.get<bool>();
    } else if (key == "max_line_search_steps") {
      if (!value.is_number_integer() || value.get<int>() < 0) throw InputError(source, at, "must be an integer >= 0");
      newton.max_line_search_steps = value.get<int>();
    } else if (key == "hessian") {
      const std::string h = value.is_string() ? value.get<std::string>() : "";
      if (h == "auto") newton.hessian = NewtonOptions::Hessian::kAuto;
      else if (h == "projected") newton.hessian = NewtonOptions::Hessian::kProjected;
      else if (h == "true") newton.hessian = NewtonOptions::Hessian::kTrue;
      else throw InputError(source, at, "must be \"auto\", \"projected\" or \"true\"");
    } else {
      throw InputError(source, at,
                       "unknown option of solver 'newton' (known: line_search, max_line_search_steps, hessian)");
    }
  }
  return std::make_unique<NewtonSolver>(newton);
}

std::unique_ptr<Solver> makeExplicitRelaxation(const nlohmann::json& options, const std::string& source,
                                               const std::string& field) {
  ExplicitRelaxationOptions relaxation;
  for (const auto& [key, value] : options.items()) {
    const std::string at = field + "/" + key;
    auto positive = [&]() {
      if (!value.is_number() || !(value.get<double>() > 0.0) || !std::isfinite(value.get<double>()))
        throw InputError(source, at, "must be a finite number > 0");
      return value.get<double>();
    };
    if (key == "dt") relaxation.dt = positive();
    else if (key == "damping") relaxation.damping = positive();
    else if (key == "substeps") {
      if (!value.is_number_integer() || value.get<int>() < 1) throw InputError(source, at, "must be an integer >= 1");
      relaxation.substeps = value.get<int>();
    } else {
      throw InputError(source, at, "unknown option of solver 'explicit_relaxation' (known: dt, damping, substeps)");
    }
  }
  return std::make_unique<ExplicitRelaxationSolver>(relaxation);
}

}  // namespace

std::unique_ptr<Solver> makeSolver(const std::string& name, const nlohmann::json& options,
                                   const std::string& source, const std::string& field) {
  if (!options.is_object()) throw InputError(source, field, "must be a JSON object");
  if (name == "newton") return makeNewton(options, source, field);
  if (name == "explicit_relaxation") return makeExplicitRelaxation(options, source, field);
  std::string known;
  for (const std::string& n : solverNames()) known += (known.empty() ? "" : ", ") + n;
  throw InputError(source, "/solver/name", "unknown solver '" + name + "' (known: " + known + ")");
}

}  // namespace pbdlab
