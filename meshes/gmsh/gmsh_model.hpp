#pragma once
// Internal helpers for the generators that drive the Gmsh SDK (not part of the public API):
// a model that is removed again at scope exit, option values restored at scope exit, a wrapper
// that turns whatever Gmsh throws into std::runtime_error, and reading one element type of
// the current model into a Mesh. Use them only inside a GmshSession.
#include <string>
#include <utility>
#include <vector>

#include "core/fem/mesh.hpp"

namespace pbdlab::gmsh_model {

// Runs `f` and rethrows anything Gmsh throws (Gmsh 4.8 throws std::string, int or
// std::exception) as std::runtime_error("<what>: Gmsh failed in <step>: <message>").
void call(const std::string& what, const std::string& step, void (*f)(void*), void* data);
template <class F>
void call(const std::string& what, const std::string& step, F&& f) {
  call(what, step, [](void* p) { (*static_cast<F*>(p))(); }, static_cast<void*>(&f));
}

// gmsh::model::add on construction, gmsh::model::remove on destruction (errors ignored).
class ScopedModel {
 public:
  explicit ScopedModel(const std::string& name);
  ~ScopedModel();
  ScopedModel(const ScopedModel&) = delete;
  ScopedModel& operator=(const ScopedModel&) = delete;
};

// Sets numeric Gmsh options and restores their previous values on destruction, so a nested
// session (GmshSession shares the outer state) gets its options back.
class ScopedOptions {
 public:
  ScopedOptions() = default;
  ~ScopedOptions();
  void set(const std::string& name, double value);
  ScopedOptions(const ScopedOptions&) = delete;
  ScopedOptions& operator=(const ScopedOptions&) = delete;

 private:
  std::vector<std::pair<std::string, double>> saved_;
};

// The elements of Gmsh type gmshElementType(type) in the current model (all entities) with
// the nodes they use, renumbered 0.. in ascending Gmsh tag order (tags may have gaps; nodes no
// element of this type uses are dropped). Throws std::runtime_error if there are none.
Mesh readElements(ElementType type, const std::string& source);

}  // namespace pbdlab::gmsh_model
