#pragma once
// A body's placement in a scene ("placement" of a body, docs/scene-format.md "bodies"): a
// similarity applied to the rest positions of the body's mesh after it is made (or read from
// the mesh cache, which is therefore unchanged), before the scene's region node sets are
// selected. With p the pivot, s the scale, R the rotation and t the translation,
//
//   X' = p + s R (X - p) + t,   R = Rz(rz) Ry(ry) Rx(rx)
//
// (rotations about the fixed axes x, then y, then z through p, right-handed, in degrees). The
// defaults (s 1, no rotation, p and t 0) leave the mesh as it is. s > 0 and R a rotation keep
// every element's orientation. The mesh's own node sets keep their nodes (so "x-min" of a
// turned box is the face that was x-min before it turned); region node sets ("node_sets" boxes)
// are selected on the placed rest positions.
#include <nlohmann/json.hpp>
#include <string>

#include "core/fem/mesh.hpp"
#include "core/support/json_reader.hpp"

namespace pbdlab {

struct BodyPlacement {
  double scale = 1.0;
  Vec3 rotation_deg = Vec3::Zero();  // (rx, ry, rz)
  Vec3 translation = Vec3::Zero();
  Vec3 pivot = Vec3::Zero();
  // R = Rz Ry Rx. The sines and cosines of multiples of 90 degrees are exact (0, 1, -1), so a
  // quarter turn permutes coordinates exactly.
  Mat3 rotation() const;
  Vec3 apply(const Vec3& X) const;
  bool isIdentity() const;
};

// Reads the "placement" object at JSON pointer `at` (every key checked: scale > 0, three finite
// numbers for the vectors, unknown keys refused) and writes it with every default to `out`.
BodyPlacement parseBodyPlacement(const JsonReader& in, const nlohmann::json& value, const std::string& at,
                                 nlohmann::json& out);

// Places the rest positions of `mesh`. A 2D mesh (tri3 in z = 0, plane strain) must stay in
// z = 0: only a rotation about z, no z translation, a pivot in z = 0 (else InputError at the
// offending field under `at`).
void applyBodyPlacement(const JsonReader& in, const BodyPlacement& placement, const std::string& at, Mesh& mesh);

}  // namespace pbdlab
