#include "core/fem/element_type.hpp"

#include <stdexcept>

namespace pbdlab {

namespace {

struct ElementTypeInfo {
  ElementType type;
  const char* name;
  int nodes;
  int corners;
  int dimension;
  int order;
  int gmsh_type;
};

constexpr ElementTypeInfo kInfo[] = {
    {ElementType::kTet4, "tet4", 4, 4, 3, 1, 4},         {ElementType::kTet10, "tet10", 10, 4, 3, 2, 11},
    {ElementType::kTet20, "tet20", 20, 4, 3, 3, 29},     {ElementType::kHex8, "hex8", 8, 8, 3, 1, 5},
    {ElementType::kPrism6, "prism6", 6, 6, 3, 1, 6},     {ElementType::kPyramid5, "pyramid5", 5, 5, 3, 1, 7},
    {ElementType::kTri3, "tri3", 3, 3, 2, 1, 2},
};

const ElementTypeInfo& info(ElementType type) {
  for (const ElementTypeInfo& entry : kInfo)
    if (entry.type == type) return entry;
  throw std::invalid_argument("unknown element type");
}

}  // namespace

int nodesPerElement(ElementType type) { return info(type).nodes; }
int elementDimension(ElementType type) { return info(type).dimension; }
int elementOrder(ElementType type) { return info(type).order; }
int cornerNodesPerElement(ElementType type) { return info(type).corners; }
std::string elementTypeName(ElementType type) { return info(type).name; }
int gmshElementType(ElementType type) { return info(type).gmsh_type; }

std::vector<ElementType> allElementTypes() {
  std::vector<ElementType> types;
  for (const ElementTypeInfo& entry : kInfo) types.push_back(entry.type);
  return types;
}

ElementType parseElementType(const std::string& name) {
  std::string known;
  for (const ElementTypeInfo& entry : kInfo) {
    if (name == entry.name) return entry.type;
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  throw std::invalid_argument("unknown element type '" + name + "' (known: " + known + ")");
}

ElementType fromGmshElementType(int gmsh_type) {
  for (const ElementTypeInfo& entry : kInfo)
    if (entry.gmsh_type == gmsh_type) return entry.type;
  throw std::invalid_argument("Gmsh element type " + std::to_string(gmsh_type) +
                              " is not supported by pbdlab (supported: 4 tet4, 11 tet10, 29 tet20, 5 hex8, "
                              "6 prism6, 7 pyramid5, 2 tri3)");
}

}  // namespace pbdlab
