#pragma once
// Values of a nodal field (e.g. the displacement x - X) at arbitrary rest-frame points, by
// locating the element that contains each point and evaluating its shape functions there.
// Used for tip displacements and for comparing solutions on different meshes. The inverse
// map X -> r is found by Newton's method on X(r) = sum_a N_a(r) X_a, so curved and
// non-affine (e.g. distorted hexahedral) elements are handled. Every element type is: a
// triangle mesh (2D plane strain in z = 0, or a cloth surface in 3D) contains the points that
// lie on one of its triangles, within kSurfaceDistance of the triangle's size off its plane.
#include <memory>
#include <vector>

#include "core/fem/mesh.hpp"

namespace pbdlab {

class FieldSampler {
 public:
  // How far off a triangle's plane, relative to its size, a point may lie and still be on it.
  static constexpr double kSurfaceDistance = 1e-6;

  // Builds a uniform bucket grid over the elements' bounding boxes (rest frame).
  explicit FieldSampler(const Mesh& mesh);

  struct Location {
    int element = -1;  // -1: the point lies outside the mesh
    Vec3 reference = Vec3::Zero();
  };
  // The element containing X (within `tolerance` in reference coordinates) and X's reference
  // coordinates in it.
  Location locate(const Vec3& X, double tolerance = 1e-9) const;

  // sum_a N_a(r) u_a for a nodal field u stored as [u0x u0y u0z u1x ...]. Throws
  // std::out_of_range if X is outside the mesh.
  Vec3 sample(const VecX& nodal_field, const Vec3& X) const;

 private:
  const Mesh* mesh_;
  Vec3 origin_;
  Vec3 cell_size_;
  std::array<int, 3> cells_{1, 1, 1};
  std::vector<size_t> bucket_start_;  // CSR over the buckets: elements of bucket b are
  std::vector<int> bucket_elements_;  // bucket_elements_[bucket_start_[b], bucket_start_[b + 1])
  int bucketIndex(const Vec3& X) const;
};

// The same over several element blocks that share one node numbering: a Problem whose bodies
// have different element types keeps one Mesh per type (Problem::elementBlocks()), each with
// every node of the problem and the elements of its type. A point is looked up in the blocks
// in order; the first block containing it answers. One block behaves as FieldSampler.
class BlockFieldSampler {
 public:
  explicit BlockFieldSampler(std::vector<std::shared_ptr<const Mesh>> blocks);

  struct Location {
    int block = -1;  // -1: the point lies outside every block
    FieldSampler::Location at;
  };
  Location locate(const Vec3& X, double tolerance = 1e-9) const;
  // Throws std::out_of_range if X is outside every block.
  Vec3 sample(const VecX& nodal_field, const Vec3& X) const;

 private:
  std::vector<std::shared_ptr<const Mesh>> blocks_;  // kept alive: the samplers point into them
  std::vector<FieldSampler> samplers_;
};

}  // namespace pbdlab
