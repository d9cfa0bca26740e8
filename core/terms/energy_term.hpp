#pragma once
// A term of the potential energy: a sum over stencils, each a short list of nodes (an element
// of a body, two interpolated points of a weak constraint, a hinge of two triangles, ...)
// with its value, gradient and Hessian (DESIGN.md "Energy terms"; STYLE.md 11). The
// yardstick, the Newton Hessian (pattern and values), the colorings and every position-based
// solver iterate the same terms, so no energy is written twice.
//
// Terms compute in the global node numbering of the Problem (positions stacked
// [x0 y0 z0 x1 ...]); time enters through `t` (e.g. a muscle activation that changes during
// the run).
#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

#include "core/support/types.hpp"
#include "core/terms/hessian_slots.hpp"
#include "core/topology/coloring.hpp"

namespace pbdlab {

enum class HessianKind {
  kTrue,         // the exact Hessian (may be indefinite)
  kProjected,    // positive semi-definite: the material tangent's negative eigenvalues
                 // clamped (core/materials/tangent_projection.hpp), or the term's documented projection
  kApproximate,  // the term's cheap SPD approximation: PBNG eq. 32-34 for elastic terms
                 // (2 mu I + lambda cof F (x) cof F with the Lamé parameters of (E, nu)), eq. 37
                 // for bending; exact where the term is quadratic (weak constraints)
  kApproximateModelParameters,  // the same, with each elastic model's own mu and lambda in eq. 32
                                // (Material::approximateTangent's kModel); other terms as kApproximate
};
std::string hessianKindName(HessianKind kind);
bool isApproximate(HessianKind kind);  // kApproximate or kApproximateModelParameters

class EnergyTerm {
 public:
  virtual ~EnergyTerm() = default;
  virtual std::string name() const = 0;

  // --- stencils ---
  virtual int numStencils() const = 0;
  virtual int nodesPerStencil() const = 0;
  virtual const int* stencilNodes(int s) const = 0;  // nodesPerStencil() global node indices
  // Stencils of one color share no node: a loop over one color may scatter in parallel.
  // Computed once per topology.
  const Coloring& stencilColoring() const;
  // The local nodes of stencil s whose gradient entries and Hessian rows and columns can be
  // nonzero at some x (structurally used), ascending, written to `local` (room for
  // nodesPerStencil()); returns their count. Default: every node. An embedded term's block
  // nodes that none of the element's vertices touch are not used (EmbeddedTerm). Newton's
  // Hessian pattern (reference/hessian_assembly.cpp) holds the pairs of used nodes only, and
  // node-visiting Gauss-Seidel (PBNG, VBD) visits a stencil from its used nodes only.
  virtual int usedNodes(int s, int* local) const;

  // --- one stencil (tests, set-up code; allocates) ---
  // value, gradient (3 k) and Hessian (3 k x 3 k) of stencil s; any output may be null.
  virtual void stencilTerms(int s, const Positions& x, double t, double* value, VecX* gradient,
                            Eigen::MatrixXd* hessian, HessianKind kind = HessianKind::kTrue) const = 0;

  // --- sums over all stencils (overridden with fixed-size kernels by hot terms) ---
  virtual double energy(const Positions& x, double t) const;
  // g += scale * dE/dx
  virtual void addGradient(const Positions& x, double t, double scale, VecX& g) const;
  // values[slot] += scale * H(p, q) for every stencil's lower-triangle entries, in either of
  // HessianSlots' layouts (hessian_slots.hpp), skipping slots -1.
  virtual void addHessian(const Positions& x, double t, HessianKind kind, double scale, const HessianSlots& slots,
                          double* values) const;
  // For Gauss-Seidel solvers: the gradient row (3) and the 3x3 diagonal block of the node at
  // local position `local` of stencil s (g += ..., H += ...).
  virtual void addNodeBlock(int s, int local, const Positions& x, double t, HessianKind kind, Vec3& gradient,
                            Mat3& block) const;

 protected:
  // Terms call this when their stencils change (new contacts): the coloring is rebuilt lazily.
  void stencilsChanged() { coloring_.reset(); }

 private:
  mutable std::shared_ptr<const Coloring> coloring_;
};

// Node -> (stencil, local) over the used nodes of `term`'s stencils only (CSR, as
// core/topology's nodeAdjacency, which lists every node of every stencil).
NodeAdjacency usedNodeAdjacency(int num_nodes, const EnergyTerm& term);

}  // namespace pbdlab
