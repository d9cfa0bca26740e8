#include "core/terms/embedded_term.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/support/thread_settings.hpp"

namespace pbdlab {

namespace {

// A mesh-sized positions vector per thread for the stencil-wise calls: a Gauss-Seidel sweep
// calls addNodeBlock once per node visit, and allocating the whole mesh's positions at each
// would make a sweep quadratic in the mesh size. Only the current stencil's vertices are
// written (and read).
Positions& stencilScratch(int num_points) {
  thread_local Positions scratch;
  if (scratch.size() != 3 * static_cast<Eigen::Index>(num_points)) scratch.setZero(3 * static_cast<Eigen::Index>(num_points));
  return scratch;
}

void checkGridSize(const char* what, const Positions& q, const BackgroundGrid& grid) {
  if (q.size() != 3 * static_cast<Eigen::Index>(grid.numNodes()))
    throw std::invalid_argument(std::string("EmbeddedTerm::") + what + ": " + std::to_string(q.size()) +
                                " values, expected 3 per grid node (" + std::to_string(3LL * grid.numNodes()) + ")");
}

}  // namespace

EmbeddedTerm::EmbeddedTerm(std::shared_ptr<const EnergyTerm> inner, std::shared_ptr<const GridWeights> weights)
    : inner_(std::move(inner)), weights_(std::move(weights)) {
  if (!inner_) throw std::invalid_argument("EmbeddedTerm: no inner term");
  if (!weights_) throw std::invalid_argument("EmbeddedTerm: no grid weights");
  const GridWeights& W = *weights_;
  const BackgroundGrid& grid = W.grid;
  const std::string kernel = gridKernelName(W.kernel);
  if (W.nodes_per_point != gridStencilNodes(W.kernel) || W.node.size() != W.entry(W.numPoints()) ||
      W.weight.size() != W.node.size())
    throw std::invalid_argument("EmbeddedTerm: grid weights with " + std::to_string(W.nodes_per_point) +
                                " nodes per point and " + std::to_string(W.node.size()) + " entries for " +
                                std::to_string(W.numPoints()) + " points do not fit the " + kernel + " kernel (" +
                                std::to_string(gridStencilNodes(W.kernel)) + " nodes per point)");
  const int width = W.kernel == GridKernel::kTrilinear ? 2 : 3;  // kernel nodes per axis
  point_base_.resize(W.numPoints());
  for (int p = 0; p < W.numPoints(); ++p) point_base_[p] = grid.nodeCoordinates(W.node[W.entry(p)]);

  // Each stencil's touched nodes span lo..hi per axis. The block is as wide as the widest span
  // of this step's stencils, at least the kernel's width + 1 (vertices one cell apart touch one
  // node more per axis) and at most kMaxBlockWidth: a stretched element (a twisted bar's, whose
  // vertices lie up to two cells apart) widens every stencil's block for that step instead of
  // being refused. The untouched block nodes cost nothing in Newton's pattern or the node visits
  // (usedNodes); they make the stencil colouring more conservative.
  const int n_stencils = inner_->numStencils();
  const int n = inner_->nodesPerStencil();
  std::vector<Eigen::Vector3i> lows(static_cast<size_t>(n_stencils));
  int widest = width + 1;
  for (int s = 0; s < n_stencils; ++s) {
    const int* nodes = inner_->stencilNodes(s);
    Eigen::Vector3i lo = Eigen::Vector3i::Constant(std::numeric_limits<int>::max());
    Eigen::Vector3i hi = Eigen::Vector3i::Constant(std::numeric_limits<int>::min());
    for (int a = 0; a < n; ++a) {
      const int v = nodes[a];
      if (v < 0 || v >= W.numPoints())
        throw std::invalid_argument("EmbeddedTerm over " + inner_->name() + ": stencil " + std::to_string(s) +
                                    " names node " + std::to_string(v) + ", but the grid weights have " +
                                    std::to_string(W.numPoints()) + " points");
      const size_t first = W.entry(v);
      for (int k = 0; k < W.nodes_per_point; ++k) {
        if (W.weight[first + k] == 0.0) continue;  // untouched: need not be in the block
        const Eigen::Vector3i c =
            point_base_[v] + Eigen::Vector3i(k % width, (k / width) % width, k / (width * width));
        lo = lo.cwiseMin(c);
        hi = hi.cwiseMax(c);
      }
    }
    for (int axis = 0; axis < 3; ++axis) {
      const int span = hi[axis] - lo[axis] + 1;
      widest = std::max(widest, span);
      if (span <= kMaxBlockWidth) continue;
      std::ostringstream out;
      out << "EmbeddedTerm over " << inner_->name() << ": stencil " << s << " touches grid nodes " << lo[axis]
          << ".." << hi[axis] << " on axis " << "xyz"[axis] << " (" << span << " nodes), but a block holds at most "
          << kMaxBlockWidth << " per axis: with the " << kernel << " kernel its vertices must lie within "
          << kMaxBlockWidth - width << " grid cell(s) of each other at the step's start, so the elements must stay "
          << "smaller than " << kMaxBlockWidth - width << " x the grid spacing h = " << grid.spacing()
          << " as they deform. Refine the mesh or coarsen the grid";
      throw std::invalid_argument(out.str());
    }
    lows[static_cast<size_t>(s)] = lo;
  }
  block_width_ = widest;
  block_nodes_ = block_width_ * block_width_ * block_width_;
  const int B = block_width_;
  for (int axis = 0; axis < 3; ++axis)
    if (grid.nodeCounts()[axis] < B)
      throw std::invalid_argument("EmbeddedTerm over " + inner_->name() + ": the grid has " +
                                  std::to_string(grid.nodeCounts()[axis]) + " nodes on axis " + "xyz"[axis] +
                                  ", the " + kernel + " kernel's block needs " + std::to_string(B) +
                                  " (grow the grid's margin)");

  kernel_offset_.resize(W.nodes_per_point);
  for (int k = 0; k < W.nodes_per_point; ++k)
    kernel_offset_[k] = k % width + B * ((k / width) % width + B * (k / (width * width)));

  anchor_.resize(n_stencils);
  stencil_nodes_.resize(static_cast<size_t>(n_stencils) * block_nodes_);
  for (int s = 0; s < n_stencils; ++s) {
    const Eigen::Vector3i& lo = lows[static_cast<size_t>(s)];
    // Moved down at the upper faces so that the block stays in the grid (hi <= n - 1 keeps
    // every touched node inside).
    const Eigen::Vector3i anchor = lo.cwiseMin(grid.nodeCounts() - Eigen::Vector3i::Constant(B));
    anchor_[s] = anchor;
    int* block = stencil_nodes_.data() + static_cast<size_t>(s) * block_nodes_;
    for (int c = 0; c < B; ++c)
      for (int b = 0; b < B; ++b)
        for (int a = 0; a < B; ++a) *block++ = grid.nodeIndex(anchor + Eigen::Vector3i(a, b, c));
  }
}

template <typename Visit>
void EmbeddedTerm::forEachEntry(int s, Visit&& visit) const {
  const GridWeights& W = *weights_;
  const int B = block_width_;
  const int* nodes = inner_->stencilNodes(s);
  for (int a = 0; a < inner_->nodesPerStencil(); ++a) {
    const int v = nodes[a];
    const Eigen::Vector3i o = point_base_[v] - anchor_[s];
    // Flattened offset of the vertex's first kernel node; a component may be -1 when that node
    // has zero weight, but every node of nonzero weight lands inside the block.
    const int base = o[0] + B * (o[1] + B * o[2]);
    const size_t first = W.entry(v);
    for (int k = 0; k < W.nodes_per_point; ++k)
      if (W.weight[first + k] != 0.0) visit(a, base + kernel_offset_[k], W.weight[first + k]);
  }
}

void EmbeddedTerm::gatherEntries(int s, std::vector<Entry>& entries) const {
  entries.clear();
  forEachEntry(s, [&](int vertex, int local, double weight) { entries.push_back({vertex, local, weight}); });
}

int EmbeddedTerm::usedNodes(int s, int* local) const {
  std::uint64_t touched = 0;  // bit b: block node b has a nonzero weight (at most 64 nodes)
  forEachEntry(s, [&](int, int node, double) { touched |= std::uint64_t{1} << node; });
  int m = 0;
  for (int b = 0; b < block_nodes_; ++b)
    if ((touched >> b) & 1u) local[m++] = b;
  return m;
}

std::vector<EmbeddedTerm::Entry> EmbeddedTerm::weightEntries(int s) const {
  std::vector<Entry> entries;
  gatherEntries(s, entries);
  return entries;
}

void EmbeddedTerm::embedStencil(int s, const Positions& q, const std::vector<Entry>& entries, Positions& x) const {
  const int* nodes = inner_->stencilNodes(s);
  const int* block = stencilNodes(s);
  for (int a = 0; a < inner_->nodesPerStencil(); ++a) x.segment<3>(3 * static_cast<Eigen::Index>(nodes[a])).setZero();
  for (const Entry& e : entries)
    x.segment<3>(3 * static_cast<Eigen::Index>(nodes[e.vertex])) +=
        e.weight * q.segment<3>(3 * static_cast<Eigen::Index>(block[e.local]));
}

void EmbeddedTerm::innerStencilTerms(int s, const Positions& q, double t, HessianKind kind, std::vector<Entry>& entries,
                                     double* value, VecX* gx, Eigen::MatrixXd* Hx) const {
  gatherEntries(s, entries);
  Positions& x = stencilScratch(weights_->numPoints());
  embedStencil(s, q, entries, x);
  inner_->stencilTerms(s, x, t, value, gx, Hx, kind);
}

void EmbeddedTerm::stencilTerms(int s, const Positions& q, double t, double* value, VecX* gradient,
                                Eigen::MatrixXd* hessian, HessianKind kind) const {
  checkGridSize("stencilTerms", q, grid());
  std::vector<Entry> entries;
  VecX gx;
  Eigen::MatrixXd Hx;
  innerStencilTerms(s, q, t, kind, entries, value, gradient ? &gx : nullptr, hessian ? &Hx : nullptr);
  const int dofs = 3 * block_nodes_;
  if (gradient) {  // B^T g
    gradient->setZero(dofs);
    for (const Entry& e : entries) gradient->segment<3>(3 * e.local) += e.weight * gx.segment<3>(3 * e.vertex);
  }
  if (hessian) {  // B^T H B
    hessian->setZero(dofs, dofs);
    for (const Entry& e1 : entries)
      for (const Entry& e2 : entries)
        hessian->block<3, 3>(3 * e1.local, 3 * e2.local) +=
            (e1.weight * e2.weight) * Hx.block<3, 3>(3 * e1.vertex, 3 * e2.vertex);
  }
}

double EmbeddedTerm::energy(const Positions& q, double t) const {
  checkGridSize("energy", q, grid());
  return inner_->energy(embed(*weights_, q), t);
}

void EmbeddedTerm::addGradient(const Positions& q, double t, double scale, VecX& g) const {
  checkGridSize("addGradient", q, grid());
  VecX gx = VecX::Zero(3 * static_cast<Eigen::Index>(weights_->numPoints()));
  inner_->addGradient(embed(*weights_, q), t, 1.0, gx);
  g += scale * embedTranspose(*weights_, gx);
}

void EmbeddedTerm::addHessian(const Positions& q, double t, HessianKind kind, double scale, const HessianSlots& slots,
                              double* values) const {
  checkGridSize("addHessian", q, grid());
  const Positions x = embed(*weights_, q);
  const bool lists = slots.usesNodeLists();
  for (const std::vector<int>& color : stencilColoring().groups) {
    const int count = static_cast<int>(color.size());
#pragma omp parallel if (worthThreads(count))
    {
      std::vector<Entry> entries;
      Eigen::MatrixXd Hx;
      Eigen::MatrixXd local;     // B^T H B over the stored nodes' DOFs (lower triangle used)
      int rank[kMaxBlockNodes];  // per block node: its index among the stencil's stored nodes, -1 if none
      for (int b = 0; b < block_nodes_; ++b) rank[b] = b;
#pragma omp for schedule(static)
      for (int k = 0; k < count; ++k) {
        const int s = color[k];
        int m = block_nodes_;
        if (lists) {
          m = slots.numUsedNodes(s);
          if (m == 0) continue;  // no node of it with a free DOF: nothing to compute
          std::fill(rank, rank + block_nodes_, -1);
          for (int r = 0; r < m; ++r) rank[slots.usedNodes(s)[r]] = r;
        }
        gatherEntries(s, entries);
        inner_->stencilTerms(s, x, t, nullptr, nullptr, &Hx, kind);
        // Lower triangle of B^T H B, summed per stencil before the scatter (a node pair gets up
        // to 16 vertex pairs' blocks: one write of the shared value array instead of 16): block
        // (L1, L2) with L1 > L2 whole, L1 == L2 its own lower triangle; the pairs with L1 < L2
        // are the transposes of pairs already added. Ranks keep the block's order.
        local.setZero(3 * m, 3 * m);
        for (const Entry& e1 : entries)
          for (const Entry& e2 : entries) {
            if (e1.local < e2.local) continue;
            const int r1 = rank[e1.local], r2 = rank[e2.local];
            if (r1 < 0 || r2 < 0) continue;  // a node the slots do not store
            const double w = e1.weight * e2.weight;
            for (int j = 0; j < 3; ++j)
              for (int i = e1.local == e2.local ? j : 0; i < 3; ++i)
                local(3 * r1 + i, 3 * r2 + j) += w * Hx(3 * e1.vertex + i, 3 * e2.vertex + j);
          }
        const int* slot = slots.stencilSlots(s);
        for (int c = 0; c < 3 * m; ++c)
          for (int r = c; r < 3 * m; ++r) {
            const int target = slot[lowerTriangleIndex(r, c)];
            if (target >= 0) values[target] += scale * local(r, c);
          }
      }
    }
  }
}

void EmbeddedTerm::addNodeBlock(int s, int local, const Positions& q, double t, HessianKind kind, Vec3& gradient,
                                Mat3& block) const {
  std::vector<Entry> entries;
  VecX gx;
  Eigen::MatrixXd Hx;
  innerStencilTerms(s, q, t, kind, entries, nullptr, &gx, &Hx);
  for (const Entry& e1 : entries) {
    if (e1.local != local) continue;
    gradient += e1.weight * gx.segment<3>(3 * e1.vertex);
    for (const Entry& e2 : entries)
      if (e2.local == local) block += (e1.weight * e2.weight) * Hx.block<3, 3>(3 * e1.vertex, 3 * e2.vertex);
  }
}

}  // namespace pbdlab
