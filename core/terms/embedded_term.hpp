#pragma once
// An energy term of a mesh written in the grid unknowns of the grid-based scheme (PXPBD §5.5,
// after Jiang et al. 2015; DESIGN.md "The shared model"): the mesh follows x = W q, W the
// grid weights of its vertices taken at the step's start positions (core/grid/grid_weights.hpp),
// so for an inner term E_x over mesh nodes
//   E_q(q) = E_x(W q),  grad E_q = W^T grad E_x,  Hess E_q = W^T Hess E_x W,
// exact within a step: W does not depend on q. The unknowns are 3 per grid node, in the grid's
// node numbering, all grid nodes.
//
// Stencils. Inner stencil s (an element) becomes one stencil of a block of grid nodes that
// holds every node its vertices touch (nonzero weight): 3x3x3 nodes for the trilinear kernel,
// 4x4x4 for the quadratic B-spline, anchored at the smallest touched node per axis (moved down
// at the grid's upper faces so the block stays inside); one width for every stencil of the
// term, widened to 4x4x4 for the trilinear kernel when a stretched element's vertices lie up to
// two cells apart (kMaxBlockWidth: usedNodes' 64-node mask). The Hessian assembly stores lower
// triangles by local index pairs (reference/hessian_assembly.cpp), so a node repeated in a
// stencil would get its cross block's diagonal once instead of twice: hence a block of distinct
// nodes, not the vertices' stencils one after another. Block nodes no vertex touches get zero
// gradient and Hessian rows; usedNodes names the touched ones, so Newton's pattern and the node
// visits skip the rest. An inner stencil whose touched nodes span more than kMaxBlockWidth on an
// axis is refused at construction.
//
// Hessian kinds pass through to the inner term: B^T H B is a congruence, so the projected and
// approximate kinds (PSD per inner stencil) stay PSD.
//
// B is kept as its nonzero entries (vertex, block node, weight), so no block-sized dense
// buffer is formed in the sums and nothing needs a template on the kernel (a fixed-size
// 192 x 192 block Hessian would also exceed Eigen's 128 KB stack limit). Built once per step
// with that step's W: the inner term's stencils must not change afterwards, and its
// stencilTerms is called from several threads (as every term's kernels are by addHessian).
#include <memory>
#include <string>
#include <vector>

#include "core/grid/grid_weights.hpp"
#include "core/terms/energy_term.hpp"

namespace pbdlab {

class EmbeddedTerm final : public EnergyTerm {
 public:
  static constexpr int kMaxBlockWidth = 4;  // nodes per axis of the widest block (4^3 = 64)

  // `inner`'s stencil nodes index the points of `weights` (the mesh's vertices). Throws
  // std::invalid_argument for a null argument, a stencil node that is not a point of the
  // weights, a grid with fewer nodes on an axis than the block needs, or a stencil that does
  // not fit in one block (naming the stencil, the axis and the span).
  EmbeddedTerm(std::shared_ptr<const EnergyTerm> inner, std::shared_ptr<const GridWeights> weights);

  std::string name() const override { return "embedded " + inner_->name(); }
  int numStencils() const override { return inner_->numStencils(); }
  int nodesPerStencil() const override { return block_nodes_; }
  const int* stencilNodes(int s) const override {
    return stencil_nodes_.data() + static_cast<size_t>(s) * static_cast<size_t>(block_nodes_);
  }

  const EnergyTerm& inner() const { return *inner_; }
  const GridWeights& weights() const { return *weights_; }
  const BackgroundGrid& grid() const { return weights_->grid; }
  int blockWidth() const { return block_width_; }  // nodes per axis of a block: 3 or 4
  int blockNodes() const { return block_nodes_; }  // 27 or 64
  static constexpr int kMaxBlockNodes = 64;

  // q: 3 per grid node. Forms x_a = sum_k w_ak q_k for the inner stencil's vertices in a
  // per-thread mesh-sized scratch (only those vertices are written: the inner stencil reads
  // only its own), then maps the inner terms to the block's 3 * blockNodes() DOFs.
  void stencilTerms(int s, const Positions& q, double t, double* value, VecX* gradient, Eigen::MatrixXd* hessian,
                    HessianKind kind = HessianKind::kTrue) const override;

  // Whole-term sums embed x = W q once and use the inner term's own sums (its fixed-size,
  // threaded kernels) instead of embedding per stencil.
  double energy(const Positions& q, double t) const override;
  void addGradient(const Positions& q, double t, double scale, VecX& g) const override;
  // The block nodes some vertex of the element touches (a nonzero weight in B): the rows of
  // every other block node are zero. A tet inside one cell uses 8 of 27 (trilinear).
  int usedNodes(int s, int* local) const override;
  // Scatters the lower triangle of B^T H B straight into the slots, colour by colour (stencils
  // of one colour share no grid node), in either layout of HessianSlots; a stencil whose slots
  // keep no node is not computed.
  void addHessian(const Positions& q, double t, HessianKind kind, double scale, const HessianSlots& slots,
                  double* values) const override;
  // Block node `local`: sum_a B_a,local g_a and sum_ab B_a,local B_b,local H_ab from the inner
  // stencil's gradient and Hessian, without the block's full congruence.
  void addNodeBlock(int s, int local, const Positions& q, double t, HessianKind kind, Vec3& gradient,
                    Mat3& block) const override;

  // One nonzero of stencil s's weight matrix B: x_{vertex} += weight * q_{block node local}.
  struct Entry {
    int vertex;  // local index in the inner stencil
    int local;   // index in the block (stencilNodes(s)[local])
    double weight;
  };
  // B of stencil s, vertex by vertex (nonzero weights only). Tests, set-up code.
  std::vector<Entry> weightEntries(int s) const;

 private:
  // visit(vertex, local, weight) for every nonzero of stencil s's B (no allocation).
  template <typename Visit>
  void forEachEntry(int s, Visit&& visit) const;
  void gatherEntries(int s, std::vector<Entry>& entries) const;
  // x_a = sum_k w_ak q_k for the inner stencil's vertices, written into x (mesh-sized).
  void embedStencil(int s, const Positions& q, const std::vector<Entry>& entries, Positions& x) const;
  // B's entries of stencil s and the inner stencil's terms at x = W q (its vertices embedded in
  // the per-thread scratch).
  void innerStencilTerms(int s, const Positions& q, double t, HessianKind kind, std::vector<Entry>& entries,
                         double* value, VecX* gx, Eigen::MatrixXd* Hx) const;

  std::shared_ptr<const EnergyTerm> inner_;
  std::shared_ptr<const GridWeights> weights_;
  int block_width_ = 0;
  int block_nodes_ = 0;
  std::vector<int> stencil_nodes_;           // per stencil: its block's grid nodes, x fastest
  std::vector<Eigen::Vector3i> anchor_;      // per stencil: the block's lowest node (i, j, k)
  std::vector<Eigen::Vector3i> point_base_;  // per point: its kernel stencil's first node (i, j, k)
  std::vector<int> kernel_offset_;           // per kernel node: its (da, db, dc) flattened in a block
};

}  // namespace pbdlab
