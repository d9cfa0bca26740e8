#include "validation/body_placement.hpp"

#include <cmath>
#include <vector>

#include "core/support/short_number.hpp"

namespace pbdlab {

namespace {

using nlohmann::json;

json placementJson(const Vec3& v) { return json::array({v[0], v[1], v[2]}); }

// cos and sin of an angle in degrees, exact at multiples of 90.
void cosSinDegrees(double degrees, double& c, double& s) {
  const double quarter = degrees / 90.0;
  if (quarter == std::round(quarter) && std::abs(quarter) < 1e15) {
    const long k = static_cast<long>(std::llround(quarter)) % 4;
    const long q = k < 0 ? k + 4 : k;
    static const double kCos[4] = {1.0, 0.0, -1.0, 0.0}, kSin[4] = {0.0, 1.0, 0.0, -1.0};
    c = kCos[q];
    s = kSin[q];
    return;
  }
  const double radians = degrees * (3.14159265358979323846 / 180.0);
  c = std::cos(radians);
  s = std::sin(radians);
}

}  // namespace

Mat3 BodyPlacement::rotation() const {
  double c[3], s[3];
  for (int d = 0; d < 3; ++d) cosSinDegrees(rotation_deg[d], c[d], s[d]);
  Mat3 rx, ry, rz;
  rx << 1, 0, 0, 0, c[0], -s[0], 0, s[0], c[0];
  ry << c[1], 0, s[1], 0, 1, 0, -s[1], 0, c[1];
  rz << c[2], -s[2], 0, s[2], c[2], 0, 0, 0, 1;
  return rz * ry * rx;
}

Vec3 BodyPlacement::apply(const Vec3& X) const { return pivot + scale * (rotation() * (X - pivot)) + translation; }

bool BodyPlacement::isIdentity() const {
  return scale == 1.0 && rotation_deg.isZero(0.0) && translation.isZero(0.0);
}

BodyPlacement parseBodyPlacement(const JsonReader& in, const json& value, const std::string& at, json& out) {
  const json& object = in.object(value, at);
  in.onlyKeys(object, at, {"scale", "rotation_deg", "translation", "pivot"}, "of a placement");
  BodyPlacement placement;
  if (object.contains("scale")) placement.scale = in.positive(object["scale"], at + "/scale");
  if (object.contains("rotation_deg")) placement.rotation_deg = in.vec3(object["rotation_deg"], at + "/rotation_deg");
  if (object.contains("translation")) placement.translation = in.vec3(object["translation"], at + "/translation");
  if (object.contains("pivot")) placement.pivot = in.vec3(object["pivot"], at + "/pivot");
  for (int d = 0; d < 3; ++d)
    if (std::abs(placement.rotation_deg[d]) > 1e6)
      in.fail(jsonPointerChild(at + "/rotation_deg", static_cast<std::size_t>(d)),
              "must lie within +-1e6 degrees, got " + shortNumber(placement.rotation_deg[d]));
  out = {{"scale", placement.scale},
         {"rotation_deg", placementJson(placement.rotation_deg)},
         {"translation", placementJson(placement.translation)},
         {"pivot", placementJson(placement.pivot)}};
  return placement;
}

void applyBodyPlacement(const JsonReader& in, const BodyPlacement& placement, const std::string& at, Mesh& mesh) {
  if (isTwoDimensional(mesh)) {
    const char* why = "a 2D mesh (plane strain, z = 0) must stay in z = 0";
    for (int d = 0; d < 2; ++d)
      if (placement.rotation_deg[d] != 0.0)
        in.fail(jsonPointerChild(at + "/rotation_deg", static_cast<std::size_t>(d)),
                std::string(why) + ": it may turn about z only");
    if (placement.translation.z() != 0.0) in.fail(at + "/translation/2", std::string(why) + ": no z translation");
    if (placement.pivot.z() != 0.0) in.fail(at + "/pivot/2", std::string(why) + ": the pivot lies in z = 0");
  }
  if (placement.isIdentity()) return;
  const Mat3 R = placement.rotation();
  for (int n = 0; n < mesh.numNodes(); ++n) {
    const Vec3 X = mesh.restPosition(n);
    mesh.rest_positions.row(n) = (placement.pivot + placement.scale * (R * (X - placement.pivot)) + placement.translation).transpose();
  }
}

}  // namespace pbdlab
