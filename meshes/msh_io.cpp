#include "meshes/msh_io.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/support/atomic_file.hpp"
#include "core/support/input_error.hpp"
#include "core/support/input_file.hpp"
#include "meshes/node_sets.hpp"
#include "meshes/text_cursor.hpp"

namespace pbdlab {

namespace {

// Gmsh's element types (Gmsh reference manual, "MSH file format"): nodes and dimension.
struct GmshTypeInfo {
  int type;
  int nodes;
  int dim;
  const char* name;
};

constexpr GmshTypeInfo kGmshTypes[] = {
    {1, 2, 1, "2-node line"},          {2, 3, 2, "3-node triangle"},        {3, 4, 2, "4-node quadrangle"},
    {4, 4, 3, "4-node tetrahedron"},   {5, 8, 3, "8-node hexahedron"},      {6, 6, 3, "6-node prism"},
    {7, 5, 3, "5-node pyramid"},       {8, 3, 1, "3-node line"},            {9, 6, 2, "6-node triangle"},
    {10, 9, 2, "9-node quadrangle"},   {11, 10, 3, "10-node tetrahedron"},  {12, 27, 3, "27-node hexahedron"},
    {13, 18, 3, "18-node prism"},      {14, 14, 3, "14-node pyramid"},      {15, 1, 0, "point"},
    {16, 8, 2, "8-node quadrangle"},   {17, 20, 3, "20-node hexahedron"},   {18, 15, 3, "15-node prism"},
    {19, 13, 3, "13-node pyramid"},    {20, 9, 2, "9-node triangle"},       {21, 10, 2, "10-node triangle"},
    {22, 12, 2, "12-node triangle"},   {23, 15, 2, "15-node triangle"},     {24, 15, 2, "15-node triangle"},
    {25, 21, 2, "21-node triangle"},   {26, 4, 1, "4-node line"},           {27, 5, 1, "5-node line"},
    {28, 6, 1, "6-node line"},         {29, 20, 3, "20-node tetrahedron"},  {30, 35, 3, "35-node tetrahedron"},
    {31, 56, 3, "56-node tetrahedron"}, {92, 64, 3, "64-node hexahedron"},  {93, 125, 3, "125-node hexahedron"},
};

const GmshTypeInfo* gmshType(long long type) {
  for (const GmshTypeInfo& t : kGmshTypes)
    if (t.type == type) return &t;
  return nullptr;
}

std::string typeLabel(int type) {
  const GmshTypeInfo* t = gmshType(type);
  return "Gmsh element type " + std::to_string(type) + (t ? std::string(" (") + t->name + ")" : std::string());
}

struct ElementBlock {
  int type = 0;
  int dim = 0;
  std::vector<int> physical;          // physical group tags of the block's elements
  std::vector<std::uint64_t> tags;    // element tags
  std::vector<std::uint64_t> nodes;   // node tags, nodesOf(type) per element
};

struct RawMsh {
  std::vector<std::uint64_t> node_tags;
  std::vector<double> coords;  // 3 per node
  std::vector<ElementBlock> blocks;
  std::map<std::pair<int, int>, std::string> physical_names;  // (dim, tag) -> name
  std::map<std::pair<int, int>, std::vector<int>> entity_physicals;  // (dim, entity) -> tags
};

// Node tag -> row in RawMsh::node_tags: a dense table when the tags are compact, a hash
// table otherwise.
class TagIndex {
 public:
  explicit TagIndex(const std::vector<std::uint64_t>& tags) {
    std::uint64_t max_tag = 0;
    for (std::uint64_t t : tags) max_tag = std::max(max_tag, t);
    dense_ = max_tag <= 8 * static_cast<std::uint64_t>(tags.size()) + 1024;
    if (dense_) table_.assign(max_tag + 1, -1);
    for (std::size_t i = 0; i < tags.size(); ++i) {
      if (dense_) table_[tags[i]] = static_cast<std::int64_t>(i);
      else hash_[tags[i]] = static_cast<std::int64_t>(i);
    }
  }
  // -1 if absent.
  std::int64_t find(std::uint64_t tag) const {
    if (dense_) return tag < table_.size() ? table_[tag] : -1;
    const auto it = hash_.find(tag);
    return it == hash_.end() ? -1 : it->second;
  }

 private:
  bool dense_ = true;
  std::vector<std::int64_t> table_;
  std::unordered_map<std::uint64_t, std::int64_t> hash_;
};

void readPhysicalNames(TextCursor& in, RawMsh& msh) {
  const std::uint64_t n = in.count("the number of physical names");
  for (std::uint64_t i = 0; i < n; ++i) {
    const int dim = static_cast<int>(in.integer("a physical group's dimension"));
    const int tag = static_cast<int>(in.integer("a physical group's tag"));
    msh.physical_names[{dim, tag}] = in.quoted("a physical group's name");
  }
  in.expect("$EndPhysicalNames");
}

void readEntities41(TextCursor& in, RawMsh& msh, bool binary) {
  in.binary = binary;
  std::uint64_t counts[4];
  for (std::uint64_t& c : counts) c = in.count("the number of entities");
  for (int dim = 0; dim < 4; ++dim) {
    for (std::uint64_t i = 0; i < counts[dim]; ++i) {
      const int tag = static_cast<int>(in.integer("an entity tag"));
      for (int k = 0; k < (dim == 0 ? 3 : 6); ++k) in.real("an entity's coordinates");
      const std::uint64_t n_physical = in.count("the number of physical tags");
      std::vector<int>& physical = msh.entity_physicals[{dim, tag}];
      for (std::uint64_t p = 0; p < n_physical; ++p) physical.push_back(static_cast<int>(in.integer("a physical tag")));
      if (dim > 0) {
        const std::uint64_t n_bounding = in.count("the number of bounding entities");
        for (std::uint64_t b = 0; b < n_bounding; ++b) in.integer("a bounding entity tag");
      }
    }
  }
  in.binary = false;
  in.skipNewline();
  in.expect("$EndEntities");
}

void readNodes41(TextCursor& in, RawMsh& msh, bool binary) {
  in.binary = binary;
  const std::uint64_t blocks = in.count("the number of node blocks");
  const std::uint64_t total = in.count("the number of nodes");
  in.count("the minimum node tag");
  in.count("the maximum node tag");
  // A node takes a tag and 3 coordinates: 8 bytes at least in ASCII ("1 0 0 0" and separators),
  // 32 in binary.
  const std::size_t fit = in.fitting(total, binary ? 32 : 8);
  msh.node_tags.reserve(fit);
  msh.coords.reserve(3 * fit);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const int dim = static_cast<int>(in.integer("a node block's entity dimension"));
    in.integer("a node block's entity tag");
    const long long parametric = in.integer("a node block's parametric flag");
    const std::uint64_t n = in.count("the number of nodes in a block");
    if (n > total - msh.node_tags.size()) in.fail("the node blocks hold more nodes than the declared " + std::to_string(total));
    if (dim < 0 || dim > 3) in.fail("a node block's entity dimension must be 0 to 3, got " + std::to_string(dim));
    const std::size_t first = msh.node_tags.size();
    for (std::uint64_t i = 0; i < n; ++i) msh.node_tags.push_back(in.count("a node tag"));
    for (std::uint64_t i = 0; i < n; ++i) {
      for (int d = 0; d < 3; ++d) msh.coords.push_back(in.real("node " + std::to_string(msh.node_tags[first + i]) + "'s coordinate"));
      if (parametric) {
        for (int d = 0; d < dim; ++d) in.real("a parametric coordinate");
      }
    }
  }
  if (msh.node_tags.size() != total) {
    in.fail("$Nodes declares " + std::to_string(total) + " nodes but its blocks hold " + std::to_string(msh.node_tags.size()));
  }
  in.binary = false;
  in.skipNewline();
  in.expect("$EndNodes");
}

void readElements41(TextCursor& in, RawMsh& msh, bool binary) {
  in.binary = binary;
  const std::uint64_t blocks = in.count("the number of element blocks");
  const std::uint64_t total = in.count("the number of elements");
  in.count("the minimum element tag");
  in.count("the maximum element tag");
  std::uint64_t read = 0;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    ElementBlock block;
    block.dim = static_cast<int>(in.integer("an element block's entity dimension"));
    const int entity = static_cast<int>(in.integer("an element block's entity tag"));
    block.type = static_cast<int>(in.integer("an element type"));
    const std::uint64_t n = in.count("the number of elements in a block");
    const GmshTypeInfo* info = gmshType(block.type);
    if (!info) in.fail("unknown " + typeLabel(block.type));
    if (block.dim != info->dim) {
      in.fail("an element block of entity dimension " + std::to_string(block.dim) + " holds " + typeLabel(block.type) +
              " elements (dimension " + std::to_string(info->dim) + ")");
    }
    if (n > total - read) in.fail("the element blocks hold more elements than the declared " + std::to_string(total));
    // An element takes a tag and its nodes: 2 bytes each at least in ASCII, 8 in binary.
    const std::size_t fit = in.fitting(n, static_cast<std::size_t>(1 + info->nodes) * (binary ? 8 : 2));
    const auto physical = msh.entity_physicals.find({block.dim, entity});
    if (physical != msh.entity_physicals.end()) block.physical = physical->second;
    block.tags.reserve(fit);
    block.nodes.reserve(fit * static_cast<std::size_t>(info->nodes));
    for (std::uint64_t i = 0; i < n; ++i) {
      block.tags.push_back(in.count("an element tag (element " + std::to_string(read + i + 1) + " of " +
                                    std::to_string(total) + ")"));
      for (int k = 0; k < info->nodes; ++k) {
        block.nodes.push_back(in.count("node " + std::to_string(k + 1) + " of element tag " +
                                       std::to_string(block.tags.back()) + " (element " + std::to_string(read + i + 1) +
                                       " of " + std::to_string(total) + ")"));
      }
    }
    read += n;
    msh.blocks.push_back(std::move(block));
  }
  if (read != total) {
    in.fail("$Elements declares " + std::to_string(total) + " elements but its blocks hold " + std::to_string(read));
  }
  in.binary = false;
  in.skipNewline();
  in.expect("$EndElements");
}

void readNodes22(TextCursor& in, RawMsh& msh) {
  const std::uint64_t total = in.count("the number of nodes");
  const std::size_t fit = in.fitting(total, 8);
  msh.node_tags.reserve(fit);
  msh.coords.reserve(3 * fit);
  for (std::uint64_t i = 0; i < total; ++i) {
    msh.node_tags.push_back(in.count("a node tag (node " + std::to_string(i + 1) + " of " + std::to_string(total) + ")"));
    for (int d = 0; d < 3; ++d) msh.coords.push_back(in.real("node " + std::to_string(msh.node_tags.back()) + "'s coordinate"));
  }
  in.expect("$EndNodes");
}

void readElements22(TextCursor& in, RawMsh& msh) {
  const std::uint64_t total = in.count("the number of elements");
  for (std::uint64_t i = 0; i < total; ++i) {
    const std::string ordinal = " (element " + std::to_string(i + 1) + " of " + std::to_string(total) + ")";
    const std::uint64_t tag = in.count("an element tag" + ordinal);
    const int type = static_cast<int>(in.integer("the type of element tag " + std::to_string(tag)));
    const GmshTypeInfo* info = gmshType(type);
    if (!info) in.fail("element tag " + std::to_string(tag) + ": unknown " + typeLabel(type));
    const std::uint64_t n_tags = in.count("the number of tags of element tag " + std::to_string(tag));
    int physical = 0;
    for (std::uint64_t k = 0; k < n_tags; ++k) {
      const long long t = in.integer("a tag of element tag " + std::to_string(tag));
      if (k == 0) physical = static_cast<int>(t);
    }
    // Consecutive elements of one type and physical group share a block.
    if (msh.blocks.empty() || msh.blocks.back().type != type ||
        msh.blocks.back().physical != (physical != 0 ? std::vector<int>{physical} : std::vector<int>{})) {
      ElementBlock block;
      block.type = type;
      block.dim = info->dim;
      if (physical != 0) block.physical = {physical};
      msh.blocks.push_back(std::move(block));
    }
    ElementBlock& block = msh.blocks.back();
    block.tags.push_back(tag);
    for (int k = 0; k < info->nodes; ++k)
      block.nodes.push_back(in.count("node " + std::to_string(k + 1) + " of element tag " + std::to_string(tag)));
  }
  in.expect("$EndElements");
}

RawMsh parse(const std::string& path, const std::string& text) {
  TextCursor in(path, text);
  if (in.atEnd()) throw InputError(path, "(file)", "the file is empty, not a Gmsh .msh file");
  in.expect("$MeshFormat");
  const std::string version = in.token("the MSH version");
  const long long file_type = in.integer("the file type (0 ASCII, 1 binary)");
  const long long data_size = in.integer("the data size");
  const bool v41 = version == "4.1";
  const bool v22 = version.rfind("2.", 0) == 0;
  if (!v41 && !v22) {
    in.fail("MSH version " + version + " is not supported (supported: 4.1 ASCII or binary, 2.2 ASCII; re-save with Gmsh)");
  }
  if (file_type != 0 && file_type != 1) in.fail("the file type must be 0 (ASCII) or 1 (binary), got " + std::to_string(file_type));
  const bool binary = file_type == 1;
  if (binary && !v41) in.fail("binary MSH " + version + " is not supported (supported: 4.1 ASCII or binary, 2.2 ASCII)");
  if (binary) {
    if (data_size != 8) in.fail("binary files with data size " + std::to_string(data_size) + " are not supported (8 only)");
    in.skipNewline();
    in.binary = true;
    if (in.integer("the endianness check (1)") != 1) in.fail("the binary file has another byte order than this machine");
    in.binary = false;
    in.skipNewline();
  }
  in.expect("$EndMeshFormat");

  RawMsh msh;
  bool nodes = false, elements = false;
  while (!in.atEnd()) {
    const std::string section = in.token("a section");
    if (section.size() < 2 || section[0] != '$') in.fail("expected a section such as $Nodes, got '" + section + "'");
    const std::string name = section.substr(1);
    if (name == "PhysicalNames") {
      readPhysicalNames(in, msh);
    } else if (name == "Entities" && v41) {
      in.skipNewline();
      readEntities41(in, msh, binary);
    } else if (name == "Nodes") {
      if (nodes) in.fail("a second $Nodes section");
      if (v41) {
        in.skipNewline();
        readNodes41(in, msh, binary);
      } else {
        readNodes22(in, msh);
      }
      nodes = true;
    } else if (name == "Elements") {
      if (elements) in.fail("a second $Elements section");
      if (v41) {
        in.skipNewline();
        readElements41(in, msh, binary);
      } else {
        readElements22(in, msh);
      }
      elements = true;
    } else {
      in.skipSection(name);  // $Periodic, $NodeData, ...: not needed
    }
  }
  if (!nodes) throw InputError(path, "$Nodes", "the file has no $Nodes section");
  if (!elements) throw InputError(path, "$Elements", "the file has no $Elements section");
  return msh;
}

std::string elementTagField(std::uint64_t tag) { return "element tag " + std::to_string(tag); }

}  // namespace

Mesh readMsh(const std::string& path) { return readMshText(readInputFile(path), path); }

Mesh readMshText(const std::string& text, const std::string& path) {
  const RawMsh msh = parse(path, text);

  int dim = -1;
  for (const ElementBlock& b : msh.blocks)
    if (!b.tags.empty()) dim = std::max(dim, b.dim);
  if (dim < 2) throw InputError(path, "$Elements", "the file has no 2D or 3D elements");

  // The elements of the highest dimension: one supported type.
  const ElementBlock* first = nullptr;
  ElementType type = ElementType::kTet4;
  std::size_t n_elements = 0;
  for (const ElementBlock& b : msh.blocks) {
    if (b.dim != dim || b.tags.empty()) continue;
    ElementType block_type;
    try {
      block_type = fromGmshElementType(b.type);
    } catch (const std::invalid_argument&) {
      throw InputError(path, elementTagField(b.tags.front()),
                       typeLabel(b.type) + " is not supported by pbdlab (supported: 4 tet4, 11 tet10, 29 tet20, "
                                           "5 hex8, 6 prism6, 7 pyramid5, 2 tri3)");
    }
    if (!first) {
      first = &b;
      type = block_type;
    } else if (block_type != type) {
      throw InputError(path, elementTagField(b.tags.front()),
                       typeLabel(b.type) + " differs from " + typeLabel(first->type) + " of element tag " +
                           std::to_string(first->tags.front()) + ": a pbdlab mesh holds one element type");
    }
    n_elements += b.tags.size();
  }
  if (n_elements > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw InputError(path, "$Elements", "too many elements");
  }

  // Nodes the elements use, renumbered in ascending tag order.
  const TagIndex rows(msh.node_tags);
  const int per_element = nodesPerElement(type);
  std::vector<char> used(msh.node_tags.size(), 0);
  for (const ElementBlock& b : msh.blocks) {
    if (b.dim != dim) continue;
    for (std::size_t i = 0; i < b.nodes.size(); ++i) {
      const std::int64_t row = rows.find(b.nodes[i]);
      if (row < 0) {
        throw InputError(path, elementTagField(b.tags[i / static_cast<std::size_t>(per_element)]),
                         "node tag " + std::to_string(b.nodes[i]) + " is not in $Nodes");
      }
      used[static_cast<std::size_t>(row)] = 1;
    }
  }
  std::vector<std::size_t> order;
  for (std::size_t r = 0; r < used.size(); ++r)
    if (used[r]) order.push_back(r);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return msh.node_tags[a] < msh.node_tags[b]; });
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (msh.node_tags[order[i]] == msh.node_tags[order[i - 1]]) {
      throw InputError(path, "$Nodes", "node tag " + std::to_string(msh.node_tags[order[i]]) + " appears twice");
    }
  }
  std::vector<int> index_of_row(msh.node_tags.size(), -1);
  Mesh mesh;
  mesh.source = path;
  mesh.element_type = type;
  mesh.rest_positions.resize(static_cast<Eigen::Index>(order.size()), 3);
  for (std::size_t i = 0; i < order.size(); ++i) {
    index_of_row[order[i]] = static_cast<int>(i);
    for (int d = 0; d < 3; ++d) mesh.rest_positions(static_cast<Eigen::Index>(i), d) = msh.coords[3 * order[i] + d];
  }
  mesh.elements.resize(static_cast<Eigen::Index>(n_elements), per_element);
  std::vector<std::uint64_t> element_tags;
  element_tags.reserve(n_elements);
  for (const ElementBlock& b : msh.blocks) {
    if (b.dim != dim) continue;
    for (std::size_t i = 0; i < b.tags.size(); ++i) {
      const Eigen::Index e = static_cast<Eigen::Index>(element_tags.size());
      for (int k = 0; k < per_element; ++k)
        mesh.elements(e, k) = index_of_row[static_cast<std::size_t>(rows.find(b.nodes[i * per_element + k]))];
      element_tags.push_back(b.tags[i]);
    }
  }

  // Node sets: bounding box, all, then the physical groups.
  addFaceNodeSets(mesh);
  std::map<std::pair<int, int>, std::set<int>> groups;
  for (const auto& [key, physical] : msh.entity_physicals)
    for (int tag : physical) groups[{key.first, tag}];  // declared groups exist even when empty
  for (const ElementBlock& b : msh.blocks) {
    for (int tag : b.physical) {
      std::set<int>& members = groups[{b.dim, tag}];
      for (std::uint64_t node : b.nodes) {
        const std::int64_t row = rows.find(node);
        if (row >= 0 && index_of_row[static_cast<std::size_t>(row)] >= 0) members.insert(index_of_row[static_cast<std::size_t>(row)]);
      }
    }
  }
  for (const auto& [key, members] : groups) {
    const auto named = msh.physical_names.find(key);
    const std::string name = named != msh.physical_names.end()
                                 ? named->second
                                 : "physical_" + std::to_string(key.first) + "_" + std::to_string(key.second);
    std::vector<int>& set = mesh.node_sets[name];
    set.assign(members.begin(), members.end());
  }

  try {
    validateMesh(mesh);
  } catch (const InputError& error) {
    // validateMesh names "element <i>"; add the element's tag in the file.
    std::string field = error.field();
    const std::string prefix = "element ";
    if (field.rfind(prefix, 0) == 0) {
      const long long i = std::atoll(field.c_str() + prefix.size());
      if (i >= 0 && static_cast<std::size_t>(i) < element_tags.size())
        field += " (Gmsh element tag " + std::to_string(element_tags[static_cast<std::size_t>(i)]) + ")";
    }
    const std::string what = error.what();
    const std::string head = error.file() + ": " + error.field() + ": ";
    throw InputError(path, field, what.rfind(head, 0) == 0 ? what.substr(head.size()) : what);
  }
  return mesh;
}

std::string mshText(const Mesh& mesh) {
  const int type = gmshElementType(mesh.element_type);
  const int dim = elementDimension(mesh.element_type);
  const int n = mesh.numNodes();
  const int m = mesh.numElements();
  std::vector<std::pair<std::string, const std::vector<int>*>> sets;
  for (const auto& [name, nodes] : mesh.node_sets)
    if (name != "all") sets.emplace_back(name, &nodes);

  std::ostringstream out;
  out << std::setprecision(std::numeric_limits<double>::max_digits10);
  out << "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";
  // The mesh's own entity is the physical group `dim` 1 named "all" (readers such as meshio and
  // Gmsh's "Save all" off keep only elements in a physical group; readMsh turns it back into
  // the node set "all", every node).
  out << "$PhysicalNames\n" << sets.size() + 1 << '\n';
  for (std::size_t i = 0; i < sets.size(); ++i) {
    if (sets[i].first.find('"') != std::string::npos) {
      throw std::invalid_argument("mshText: node set name '" + sets[i].first + "' contains a double quote");
    }
    out << "0 " << i + 1 << " \"" << sets[i].first << "\"\n";
  }
  out << dim << " 1 \"all\"\n";
  out << "$EndPhysicalNames\n";
  Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();
  if (n > 0) {
    lo = mesh.rest_positions.colwise().minCoeff().transpose();
    hi = mesh.rest_positions.colwise().maxCoeff().transpose();
  }
  // Entities: one point per node set (its physical group), one entity of the mesh's dimension
  // (physical group 1, "all").
  out << "$Entities\n" << sets.size() << " 0 " << (dim == 2 ? 1 : 0) << ' ' << (dim == 3 ? 1 : 0) << '\n';
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const Vec3 p = sets[i].second->empty() ? lo : mesh.restPosition(sets[i].second->front());
    out << i + 1 << ' ' << p.x() << ' ' << p.y() << ' ' << p.z() << " 1 " << i + 1 << '\n';
  }
  out << "1 " << lo.x() << ' ' << lo.y() << ' ' << lo.z() << ' ' << hi.x() << ' ' << hi.y() << ' ' << hi.z() << " 1 1 0\n";
  out << "$EndEntities\n";

  out << "$Nodes\n1 " << n << " 1 " << n << '\n' << dim << " 1 0 " << n << '\n';
  for (int i = 0; i < n; ++i) out << i + 1 << '\n';
  for (int i = 0; i < n; ++i) out << mesh.rest_positions(i, 0) << ' ' << mesh.rest_positions(i, 1) << ' ' << mesh.rest_positions(i, 2) << '\n';
  out << "$EndNodes\n";

  std::size_t total = static_cast<std::size_t>(m);
  for (const auto& set : sets) total += set.second->size();
  out << "$Elements\n" << 1 + sets.size() << ' ' << total << " 1 " << total << '\n';
  out << dim << " 1 " << type << ' ' << m << '\n';
  for (int e = 0; e < m; ++e) {
    out << e + 1;
    for (int k = 0; k < mesh.elements.cols(); ++k) out << ' ' << mesh.elements(e, k) + 1;
    out << '\n';
  }
  std::size_t tag = static_cast<std::size_t>(m);
  for (std::size_t i = 0; i < sets.size(); ++i) {
    out << "0 " << i + 1 << " 15 " << sets[i].second->size() << '\n';
    for (int node : *sets[i].second) out << ++tag << ' ' << node + 1 << '\n';
  }
  out << "$EndElements\n";
  return out.str();
}

void writeMsh(const std::string& path, const Mesh& mesh) { writeFileAtomically(path, mshText(mesh)); }

}  // namespace pbdlab
