#include "meshes/vtu_writer.hpp"

#include <iomanip>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/atomic_file.hpp"

namespace pbdlab {

namespace {

int vtkCellType(ElementType type) {
  switch (type) {
    case ElementType::kTet4:
      return 10;  // VTK_TETRA
  }
  throw std::invalid_argument("writeVtu: element type without a VTK cell type");
}

std::string xmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

void checkFields(const std::string& path, const std::vector<VtuField>& fields, int count,
                 const char* where, std::set<std::string>& names) {
  for (const VtuField& f : fields) {
    const std::string what = "writeVtu('" + path + "'): " + where + " field '" + f.name + "': ";
    if (f.name.empty()) throw std::invalid_argument(what + "empty name");
    if (f.components != 1 && f.components != 3) {
      throw std::invalid_argument(what + "components must be 1 or 3, got " +
                                  std::to_string(f.components));
    }
    const std::size_t expected = static_cast<std::size_t>(count) * f.components;
    if (f.values.size() != expected) {
      throw std::invalid_argument(what + std::to_string(f.values.size()) + " values, expected " +
                                  std::to_string(expected) + " (" + std::to_string(count) +
                                  " x " + std::to_string(f.components) + ")");
    }
    if (!names.insert(f.name).second) throw std::invalid_argument(what + "duplicate name");
  }
}

void writeArray(std::ostringstream& out, const std::string& name, int components,
                const double* values, std::size_t n) {
  out << "        <DataArray type=\"Float64\" Name=\"" << xmlEscape(name)
      << "\" NumberOfComponents=\"" << components << "\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n; i += components) {
    out << "         ";
    for (int c = 0; c < components; ++c) out << ' ' << values[i + c];
    out << '\n';
  }
  out << "        </DataArray>\n";
}

}  // namespace

void writeVtu(const std::string& path, const Mesh& mesh, const Positions& x,
              const std::vector<VtuField>& point_fields,
              const std::vector<VtuField>& cell_fields) {
  const int n_nodes = mesh.numNodes();
  const int n_cells = mesh.numElements();
  if (x.size() != 3 * static_cast<Eigen::Index>(n_nodes)) {
    throw std::invalid_argument("writeVtu('" + path + "'): positions have " +
                                std::to_string(x.size()) + " values, expected " +
                                std::to_string(3 * static_cast<long>(n_nodes)));
  }
  std::set<std::string> point_names{"displacement"}, cell_names;
  checkFields(path, point_fields, n_nodes, "point", point_names);
  checkFields(path, cell_fields, n_cells, "cell", cell_names);
  const int vtk_type = vtkCellType(mesh.element_type);
  const int per_cell = static_cast<int>(mesh.elements.cols());

  std::ostringstream out;
  out << std::setprecision(std::numeric_limits<double>::max_digits10);
  out << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
         "header_type=\"UInt64\">\n"
      << "  <UnstructuredGrid>\n"
      << "    <Piece NumberOfPoints=\"" << n_nodes << "\" NumberOfCells=\"" << n_cells << "\">\n";

  out << "      <PointData Vectors=\"displacement\">\n";
  const Positions rest = mesh.restPositionsFlat();
  const Positions displacement = x - rest;
  writeArray(out, "displacement", 3, displacement.data(), static_cast<std::size_t>(displacement.size()));
  for (const VtuField& f : point_fields) writeArray(out, f.name, f.components, f.values.data(), f.values.size());
  out << "      </PointData>\n";

  out << "      <CellData>\n";
  for (const VtuField& f : cell_fields) writeArray(out, f.name, f.components, f.values.data(), f.values.size());
  out << "      </CellData>\n";

  out << "      <Points>\n";
  writeArray(out, "Points", 3, x.data(), static_cast<std::size_t>(x.size()));
  out << "      </Points>\n";

  out << "      <Cells>\n"
      << "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n";
  for (int e = 0; e < n_cells; ++e) {
    out << "         ";
    for (int k = 0; k < per_cell; ++k) out << ' ' << mesh.elements(e, k);
    out << '\n';
  }
  out << "        </DataArray>\n"
      << "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n";
  for (int e = 0; e < n_cells; ++e) out << "          " << static_cast<long long>(e + 1) * per_cell << '\n';
  out << "        </DataArray>\n"
      << "        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n";
  for (int e = 0; e < n_cells; ++e) out << "          " << vtk_type << '\n';
  out << "        </DataArray>\n"
      << "      </Cells>\n"
      << "    </Piece>\n"
      << "  </UnstructuredGrid>\n"
      << "</VTKFile>\n";

  writeFileAtomically(path, out.str());
}

}  // namespace pbdlab
