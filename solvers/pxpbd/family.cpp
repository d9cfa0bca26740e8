#include "solvers/pxpbd/family.hpp"

namespace pbdlab {

std::vector<std::string> pxpbdFamilySolverNames() { return {}; }

std::unique_ptr<Solver> makePxpbdFamilySolver(const std::string& name, const nlohmann::json& options,
                                            const JsonReader& in, const std::string& field) {
  (void)name;
  (void)options;
  (void)in;
  (void)field;
  return nullptr;
}

}  // namespace pbdlab
