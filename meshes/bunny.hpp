#pragma once
// A small closed "bunny-like" triangle surface made in code (no downloaded model): an
// icosphere whose radius is a smooth function of direction (an elongated body, a head, two
// long ears and a tail). The surface is star-shaped about its centre, so it is closed,
// 2-manifold and free of self-intersections by construction. meshes/data/bunny.stl is this
// surface at subdivision 3 (regenerate: docs/meshes.md).
#include <string>

#include "core/fem/mesh.hpp"

namespace pbdlab {

// The surface as a tri3 mesh in 3D (triangles counter-clockwise seen from outside), fitted in
// the box [0, 1] x [0, 0.75] x [0, 1] (x forward, z up). `subdivisions` (0 .. 6) refines the
// icosahedron: 20 * 4^s triangles. Throws std::invalid_argument for a bad level.
Mesh makeBunnySurface(int subdivisions = 3);

// ASCII STL of a tri3 mesh ("solid <name>"), 9 significant digits, written atomically.
// Throws std::invalid_argument for another element type, std::runtime_error on I/O failure.
void writeStl(const std::string& path, const Mesh& surface, const std::string& name = "pbdlab");
// The STL text that writeStl writes.
std::string stlText(const Mesh& surface, const std::string& name = "pbdlab");

}  // namespace pbdlab
