// .msh import and export: round trips of every element type, files Gmsh itself wrote (MSH
// 4.1 ASCII and binary, MSH 2.2), physical groups as node sets, Gmsh reading our files, and
// clear errors (naming the file and the line or element) for malformed, truncated, empty,
// unsupported (hex20) and inverted input.
#include <gmsh.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/support/input_error.hpp"
#include "mesh_checks.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "meshes/gmsh_session.hpp"
#include "meshes/msh_io.hpp"

namespace pbdlab {
namespace {

// Runs `f` and returns the InputError it throws (fails the test if it throws nothing else).
template <class F>
InputError inputError(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected an InputError, got: " << e.what();
    return InputError("", "", "");
  }
  ADD_FAILURE() << "expected an InputError, nothing was thrown";
  return InputError("", "", "");
}

std::vector<Mesh> everyElementType() {
  BoxMeshRecipe box;
  box.origin = Vec3(0.1, -0.2, 0.3);
  box.size = Vec3(2.0 / 3.0, 1.0, 0.7);  // coordinates that need 17 digits
  box.cells = {3, 2, 2};
  RectangleRecipe rectangle;
  rectangle.size = {1.0, 1.0 / 3.0};
  rectangle.cells = {3, 2};
  return test::oneMeshOfEveryType(box, rectangle);
}

TEST(Msh, RoundTripOfEveryElementType) {
  test::TempDir dir("msh_round_trip");
  for (const Mesh& mesh : everyElementType()) {
    SCOPED_TRACE(mesh.source);
    const std::string path = dir.file("mesh.msh");
    writeMsh(path, mesh);
    const Mesh back = readMsh(path);
    EXPECT_EQ(back.source, path);
    EXPECT_EQ(back.element_type, mesh.element_type);
    EXPECT_EQ(back.rest_positions, mesh.rest_positions);  // bit for bit
    EXPECT_EQ(back.elements, mesh.elements);
    EXPECT_EQ(back.node_sets, mesh.node_sets);
  }
}

TEST(Msh, GmshReadsOurFiles) {
  test::TempDir dir("msh_gmsh_reads");
  for (const Mesh& mesh : everyElementType()) {
    SCOPED_TRACE(mesh.source);
    const std::string path = dir.file("ours.msh");
    writeMsh(path, mesh);
    GmshSession session;
    gmsh::open(path);
    std::vector<std::size_t> tags, nodes;
    gmsh::model::mesh::getElementsByType(gmshElementType(mesh.element_type), tags, nodes);
    EXPECT_EQ(tags.size(), static_cast<std::size_t>(mesh.numElements()));
    gmsh::vectorpair groups;
    gmsh::model::getPhysicalGroups(groups);
    // Every node set but "all" as points, and the mesh's elements as the group "all".
    EXPECT_EQ(groups.size(), mesh.node_sets.size());
    const int dim = elementDimension(mesh.element_type);
    int all_tag = -1;
    for (const auto& group : groups) {
      std::string name;
      gmsh::model::getPhysicalName(group.first, group.second, name);
      if (name == "all") {
        EXPECT_EQ(group.first, dim);
        all_tag = group.second;
      }
    }
    ASSERT_GT(all_tag, 0) << "no physical group \"all\" for the mesh";
    std::vector<int> entities;
    gmsh::model::getEntitiesForPhysicalGroup(dim, all_tag, entities);
    ASSERT_EQ(entities.size(), 1u);
    std::vector<int> types;
    std::vector<std::vector<std::size_t>> group_elements, group_element_nodes;
    gmsh::model::mesh::getElements(types, group_elements, group_element_nodes, dim, entities[0]);
    ASSERT_EQ(types.size(), 1u);
    EXPECT_EQ(types[0], gmshElementType(mesh.element_type));
    EXPECT_EQ(group_elements[0].size(), static_cast<std::size_t>(mesh.numElements()));
    for (const auto& group : groups) {
      std::string name;
      gmsh::model::getPhysicalName(group.first, group.second, name);
      std::vector<std::size_t> group_nodes;
      std::vector<double> coords;
      gmsh::model::mesh::getNodesForPhysicalGroup(group.first, group.second, group_nodes, coords);
      ASSERT_TRUE(mesh.node_sets.count(name)) << name;
      EXPECT_EQ(group_nodes.size(), mesh.node_sets.at(name).size()) << name;
    }
    gmsh::clear();
  }
}

struct Format {
  double version;
  bool binary;
  std::string file;
};

// A tetrahedral box meshed by Gmsh with two physical groups, written by Gmsh in each format.
void writeWithGmsh(const std::vector<Format>& formats) {
  GmshSession session;
  gmsh::model::add("physical");
  gmsh::model::occ::addBox(0, 0, 0, 1, 2, 3);
  gmsh::model::occ::synchronize();
  gmsh::option::setNumber("Mesh.MeshSizeMax", 0.6);
  gmsh::model::mesh::generate(3);
  gmsh::vectorpair surfaces;
  gmsh::model::getEntities(surfaces, 2);
  int bottom = -1;
  for (const auto& s : surfaces) {
    double x0, y0, z0, x1, y1, z1;
    gmsh::model::getBoundingBox(2, s.second, x0, y0, z0, x1, y1, z1);
    if (z1 < 1e-6) bottom = s.second;
  }
  gmsh::model::setPhysicalName(2, gmsh::model::addPhysicalGroup(2, {bottom}), "floor");
  gmsh::model::setPhysicalName(3, gmsh::model::addPhysicalGroup(3, {1}), "solid");
  gmsh::option::setNumber("Mesh.SaveAll", 0);
  for (const Format& format : formats) {
    gmsh::option::setNumber("Mesh.MshFileVersion", format.version);
    gmsh::option::setNumber("Mesh.Binary", format.binary ? 1 : 0);
    gmsh::write(format.file);
  }
  gmsh::model::remove();
}

TEST(Msh, FilesGmshWroteWithPhysicalGroups) {
  test::TempDir dir("msh_gmsh_wrote");
  const std::vector<Format> formats = {
      {4.1, false, dir.file("ascii41.msh")}, {4.1, true, dir.file("binary41.msh")}, {2.2, false, dir.file("ascii22.msh")}};
  writeWithGmsh(formats);
  std::vector<Mesh> meshes;
  for (const Format& format : formats) {
    SCOPED_TRACE(format.file);
    const Mesh mesh = readMsh(format.file);
    EXPECT_EQ(mesh.element_type, ElementType::kTet4);
    EXPECT_NEAR(test::totalVolume(mesh), 6.0, 1e-10);
    ASSERT_TRUE(mesh.node_sets.count("floor"));
    ASSERT_TRUE(mesh.node_sets.count("solid"));
    EXPECT_EQ(mesh.node_sets.at("floor"), mesh.node_sets.at("z-min"));  // the floor is z = 0
    EXPECT_EQ(mesh.node_sets.at("solid"), mesh.node_sets.at("all"));
    meshes.push_back(mesh);
  }
  // The three formats hold the same mesh (Gmsh writes ASCII coordinates with 16 digits).
  for (std::size_t i = 1; i < meshes.size(); ++i) {
    EXPECT_LT((meshes[i].rest_positions - meshes[0].rest_positions).cwiseAbs().maxCoeff(), 1e-14);
    EXPECT_EQ(meshes[i].elements, meshes[0].elements);
  }
}

// A one-tet MSH 4.1 file with the given element block.
std::string oneElement41(int type, int nodes, const std::string& node_lines, const std::string& element_line) {
  return "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 " + std::to_string(nodes) + " 1 " + std::to_string(nodes) +
         "\n3 1 0 " + std::to_string(nodes) + "\n" + [&] {
           std::string tags;
           for (int i = 1; i <= nodes; ++i) tags += std::to_string(i) + "\n";
           return tags;
         }() + node_lines + "$EndNodes\n$Elements\n1 1 1 1\n3 1 " + std::to_string(type) + " 1\n" + element_line +
         "\n$EndElements\n";
}

TEST(MshErrors, MalformedTruncatedAndEmptyFilesNameTheFileAndLine) {
  test::TempDir dir("msh_errors");
  const std::string good = dir.file("good.msh");
  BoxMeshRecipe recipe;
  recipe.cells = {2, 2, 2};
  writeMsh(good, makeBoxMesh(recipe));
  const std::string text = test::readText(good);

  const std::string truncated = dir.write("truncated.msh", text.substr(0, text.size() * 2 / 3));
  InputError e = inputError([&] { readMsh(truncated); });
  EXPECT_EQ(e.file(), truncated);
  EXPECT_EQ(e.field().rfind("line ", 0), 0u) << e.what();
  EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("element tag"), std::string::npos) << e.what();

  std::string bad_number = text;
  bad_number.replace(bad_number.find("$Nodes\n") + 7, 1, "x");
  const std::string malformed = dir.write("malformed.msh", bad_number);
  e = inputError([&] { readMsh(malformed); });
  EXPECT_EQ(e.file(), malformed);
  EXPECT_EQ(e.field(), "line " + std::to_string(1 + std::count(text.begin(), text.begin() + text.find("$Nodes\n") + 7, '\n')));

  const std::string empty = dir.write("empty.msh", "");
  e = inputError([&] { readMsh(empty); });
  EXPECT_EQ(e.field(), "(file)");
  EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos);

  const std::string garbage = dir.write("garbage.msh", "solid bunny\nfacet normal 0 0 1\n");
  e = inputError([&] { readMsh(garbage); });
  EXPECT_EQ(e.field(), "line 1");
  EXPECT_NE(std::string(e.what()).find("$MeshFormat"), std::string::npos);

  e = inputError([&] { readMsh(dir.file("missing.msh")); });
  EXPECT_EQ(e.field(), "(file)");
  EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);

  const std::string old = dir.write("v40.msh", "$MeshFormat\n4 0 8\n$EndMeshFormat\n");
  e = inputError([&] { readMsh(old); });
  EXPECT_NE(std::string(e.what()).find("not supported"), std::string::npos);

  std::string no_end = text;
  no_end.erase(no_end.find("$EndElements"));
  e = inputError([&] { readMsh(dir.write("no_end.msh", no_end)); });
  EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
}

TEST(MshErrors, UnsupportedElementTypeIsNamedWithItsTag) {
  test::TempDir dir("msh_hex20");
  // One 20-node hexahedron (Gmsh type 17) on [-1,1]^3.
  GmshSession session;
  std::string name;
  int dim, order, n, primary;
  std::vector<double> local;
  gmsh::model::mesh::getElementProperties(17, name, dim, order, n, local, primary);
  std::string node_lines, element_line = "7";
  for (int i = 0; i < n; ++i) {
    node_lines += std::to_string(local[3 * i]) + " " + std::to_string(local[3 * i + 1]) + " " + std::to_string(local[3 * i + 2]) + "\n";
    element_line += " " + std::to_string(i + 1);
  }
  const std::string path = dir.write("hex20.msh", oneElement41(17, n, node_lines, element_line));
  const InputError e = inputError([&] { readMsh(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.field(), "element tag 7");
  EXPECT_NE(std::string(e.what()).find("Gmsh element type 17 (20-node hexahedron) is not supported"), std::string::npos)
      << e.what();
}

TEST(MshErrors, InvertedElementIsNamedWithItsTag) {
  test::TempDir dir("msh_inverted");
  const std::string nodes = "0 0 0\n1 0 0\n0 1 0\n0 0 1\n";
  EXPECT_NO_THROW(readMsh(dir.write("ok.msh", oneElement41(4, 4, nodes, "42 1 2 3 4"))));
  const std::string path = dir.write("inverted.msh", oneElement41(4, 4, nodes, "42 1 3 2 4"));
  const InputError e = inputError([&] { readMsh(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.field(), "element 0 (Gmsh element tag 42)");
  EXPECT_NE(std::string(e.what()).find("inverted"), std::string::npos) << e.what();

  const std::string missing_node = dir.write("missing_node.msh", oneElement41(4, 4, nodes, "42 1 2 3 9"));
  const InputError m = inputError([&] { readMsh(missing_node); });
  EXPECT_EQ(m.field(), "element tag 42");
  EXPECT_NE(std::string(m.what()).find("node tag 9"), std::string::npos) << m.what();
}

TEST(MshErrors, MixedElementTypesAreRejected) {
  test::TempDir dir("msh_mixed");
  const std::string text =
      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n6\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 0 1\n6 0 1 1\n"
      "$EndNodes\n$Elements\n2\n1 4 2 0 1 1 2 3 4\n2 6 2 0 1 1 2 3 4 5 6\n$EndElements\n";
  const std::string path = dir.write("mixed.msh", text);
  const InputError e = inputError([&] { readMsh(path); });
  EXPECT_EQ(e.field(), "element tag 2");
  EXPECT_NE(std::string(e.what()).find("one element type"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace pbdlab
