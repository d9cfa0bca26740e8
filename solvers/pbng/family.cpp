#include "solvers/pbng/family.hpp"

namespace pbdlab {

std::vector<std::string> pbngFamilySolverNames() { return {}; }

std::unique_ptr<Solver> makePbngFamilySolver(const std::string& name, const nlohmann::json& options,
                                             const JsonReader& in, const std::string& field) {
  (void)name;
  (void)options;
  (void)in;
  (void)field;
  return nullptr;
}

}  // namespace pbdlab
