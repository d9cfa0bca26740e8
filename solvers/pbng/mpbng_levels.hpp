#pragma once
// MPBNG's level hierarchy (PBNG TOG §8.2, Fig. 4): the solver's own problem, never the user's
// (DESIGN.md: the Problem and its yardstick stay the original single body).
//
// Level 0 is the user's body; levels 1 .. L-1 are coarser meshes of the same domain (about 4x
// fewer vertices each). The levels "equally divide the stiffness and mass density": every
// level is a body with E/L, rho/L (and k_b/L for a cloth), so level 0 alone is the original
// body with its whole equation divided by L (backward Euler: M/L (x - x~) + dt^2 (grad PE/L -
// m g/L)): the same solution. Each vertex of level k is bound to its rest point on level k+1
// by an isotropic weak constraint (eq. 18-19, w_a = 1, w_b = the coarse element's shape
// functions there), stiffness k_c.
//
// Choices (docs/pbng.md, "MPBNG"): k_c = binding_factor times the mean diagonal of level 0's
// elastic blocks at rest (trace / 3 of eq. 32-34's approximate block of the original body's
// terms, divided by L), so one factor reads the same for a cloth (N/m) and a solid; a coarse
// vertex inside the bounding box of a prescribed node set of level 0 (its rest positions: a
// held corner's point, a clamped face's rectangle) gets the same prescribed motion
// (clamp_coarse; off: only level 0 is prescribed, the coarse levels hang on the bindings).
#include <string>
#include <vector>

#include "core/fem/mesh.hpp"
#include "core/model/problem.hpp"

namespace pbdlab {

// A flat structured triangle grid in a coordinate plane (the rectangle recipe's cloth or 2D
// mesh): its nodes are a lattice of (nx + 1) x (ny + 1) distinct coordinates in the plane's two
// axes. Returns "" and the coarser levels (every other lattice line, `levels - 1` times; two
// triangles a cell, diagonals alternating, oriented like the first triangle of `fine`), or the
// reason it cannot (not tri3, not flat in a coordinate plane, not a lattice, a side's cell
// count not divisible by 2^(levels-1)).
std::string coarsenStructuredGrid(const Mesh& fine, int levels, std::vector<Mesh>& coarse);

struct MpbngLevelOptions {
  double binding_factor = 1.0;  // k_c / (the mean rest diagonal of level 0's elastic blocks)
  bool clamp_coarse = true;     // coarse vertices in the box of a prescribed set of level 0 are prescribed
};

struct MpbngLevels {
  Problem problem;                // bodies "level0" (the user's) .. "level{L-1}", the bindings
  std::vector<int> first_node;    // level k's nodes: [first_node[k], first_node[k + 1])
  int binding_term = -1;          // index in problem.terms() of the bindings' term (-1: one level)
  double binding_stiffness = 0.0;  // k_c at kappa = 1
  double mean_elastic_block = 0.0;  // the reference k_c is a multiple of (level 0, at rest)
  // Where each coarse vertex's rest position lies in level 0 (to start the coarse levels from
  // the fine one): coarse vertex c = first_node[1] + j interpolates level 0's nodes
  // restriction_nodes[j * width + a] with weights restriction_weights[j * width + a].
  int restriction_width = 0;
  std::vector<int> restriction_nodes;
  std::vector<double> restriction_weights;

  int numLevels() const { return static_cast<int>(first_node.size()) - 1; }
  int numFineNodes() const { return first_node[1]; }
  // Sets every coarse vertex's entries of `field` (x or v over the levels' DOFs) to level 0's
  // field interpolated at its rest position.
  void restrictToCoarse(VecX& field) const;
  // The levels' share of a force on level 0 (`force`: the user's DOFs): force / L on level 0,
  // and on each coarse level the previous level's share moved along the bindings' weights
  // (f_c += w_b f_v for a vertex v bound with weights w_b: the transpose of the bindings'
  // interpolation, so each level carries the whole force / L with its moments at rest).
  VecX distributeForce(const VecX& force) const;
};

// Why MPBNG cannot build levels over `original` ("" if it can): several bodies, collisions
// between bodies, weak constraints of the scene.
std::string mpbngProblemRejection(const Problem& original);

// Builds the levels over the finalized single-body `original` from the coarse meshes (finest
// first; each must cover level 0's rest domain: every vertex of a level lies in the next).
// Throws std::invalid_argument naming the level and the vertex that does not.
MpbngLevels buildMpbngLevels(const Problem& original, const std::vector<Mesh>& coarse, const MpbngLevelOptions& options);

}  // namespace pbdlab
