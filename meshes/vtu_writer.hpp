#pragma once
// VTK unstructured grid (.vtu, XML, ASCII) output for ParaView.
#include <string>
#include <utility>
#include <vector>

#include "core/mesh.hpp"

namespace pbdlab {

struct VtuField {
  std::string name;
  int components = 1;         // 1 (scalar) or 3 (vector)
  std::vector<double> values; // size = count * components
};

// Writes the mesh at deformed positions x (flat, 3 per node), with per-node fields (a
// "displacement" field x - X is always added) and per-element fields. Writes to a temporary
// file in the same folder and renames it, so no half-written file is ever left behind.
// Throws std::runtime_error naming the path on failure.
void writeVtu(const std::string& path, const Mesh& mesh, const Positions& x,
              const std::vector<VtuField>& point_fields = {},
              const std::vector<VtuField>& cell_fields = {});

}  // namespace pbdlab
