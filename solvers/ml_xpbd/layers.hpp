#pragma once
// The rigid layers of multi-layer XPBD (Mercier-Aubin & Kry 2024, §3.3; issue 26).
//  - strain rate per element, eq. 20, as |E(x^t) - E(x^{t-1})|_F^2 / h^2 (the squared norm
//    orders elements like |E-dot|; the MATLAB's mexEdiffNorm2D uses the same square);
//  - element orderings: ascending strain rate (stable), random (seeded), stripes by centroid,
//    descending stretch eigenvalue (ours: per element, see orderByStretch; stable);
//  - layers: for each rigid percentage p_l, the first floor(p_l N_e / 100) elements of the order
//    minus forced-elastic ones (elements touching a Dirichlet node keep their slot in the count
//    but are never rigid, as in the authors' code);
//  - rigid bodies of each layer: the connected components of its rigid elements through shared
//    vertices (one shared vertex merges, §3.3.2), by the incremental union-find of Algorithm 1
//    built fine -> coarse with a snapshot per layer. Algorithm 1 line 10 as printed
//    (u[e] <- s) loses a merge when an element touches two existing sets; here every touched set
//    is united with the new element (union by size, path compression).
// Independent of the solver: inputs are deformation gradients (or Green strains), element
// stiffness matrices and masses (or their stretch eigenvalues), the connectivity and the
// Dirichlet nodes. docs: /work/shared/papers/specs/multi-layer-xpbd.md §4.
#include <cstdint>
#include <vector>

#include "core/fem/mesh.hpp"
#include "core/support/types.hpp"

namespace pbdlab::ml_xpbd {

// Green strain E = (F^T F - I) / 2.
Mat3 greenStrain(const Mat3& deformation_gradient);

// Eq. 20 squared: |E_now - E_previous|_F^2 / h^2.
double strainRate(const Mat3& green_strain_now, const Mat3& green_strain_previous, double h);

// Per element from Green strains. An empty `previous` (the first step, no x^{t-1}) gives 0
// for every element, so the stable sort keeps index order.
std::vector<double> strainRatesFromGreenStrains(const std::vector<Mat3>& now, const std::vector<Mat3>& previous,
                                                double h);
// The same from deformation gradients F(x^t), F(x^{t-1}).
std::vector<double> strainRatesFromDeformationGradients(const std::vector<Mat3>& now,
                                                        const std::vector<Mat3>& previous, double h);

// --- orderings: a permutation of the elements, first = rigidified first ---

// Ascending strain rate; ties keep index order (std::stable_sort).
std::vector<int> orderByStrainRate(const std::vector<double>& strain_rates);
// A uniformly random permutation from std::mt19937(seed) (same seed, same order everywhere:
// the shuffle is written here, not std::shuffle, whose algorithm the standard leaves open).
std::vector<int> orderRandomly(int num_elements, std::uint32_t seed);

// Bands of width `band_width` along coordinate `axis` of the element centroids, counted from
// the smallest centroid coordinate: elements in the even bands (0, 2, 4, ...) come first, each
// group in index order. Used with two layers [p, 0], p = 100 * stripeFraction (Fig. 5).
// The authors' cantilever (cantilever_xpbdLayerOrder.m) labels "vertical stripes" bands of
// y of width 0.25 and "horizontal stripes" bands of x of width 0.5.
struct StripePattern {
  int axis = 0;
  double band_width = 1.0;
};
StripePattern verticalStripesOfTheCantilever();    // axis y, width 0.25
StripePattern horizontalStripesOfTheCantilever();  // axis x, width 0.5
bool isInStripe(const StripePattern& stripes, double coordinate, double min_coordinate);
std::vector<int> orderByStripes(const std::vector<Vec3>& centroids, const StripePattern& stripes);
// The share of elements in the stripes (in [0, 1]).
double stripeFraction(const std::vector<Vec3>& centroids, const StripePattern& stripes);

// The "stretch-based" ordering of §4.1 (Fig. 5), in our reading, not the authors' code: per
// element e at x^t, the largest eigenvalue of M_e^-1/2 K_e M_e^-1/2 (K_e: the element's StVK
// Hessian on its free in-plane DOFs, 6 in 2D plane strain, 12 for tet4; M_e: its nodes' lumped
// masses per DOF), i.e. the squared highest angular frequency of the element alone. The
// authors' MATLAB takes all eigenvalues of the global diag(1/m) K, indexes them by the
// element's vertex numbers and sums them: eigenvalue k belongs to no vertex k, so that is not
// reproduced (docs/multi-layer-xpbd.md). The solver computes K_e (elementStretchEigenvalues,
// ml_xpbd_solver.hpp); here only the eigenvalue and the sort.
//
// Largest eigenvalue of M^-1/2 K M^-1/2 for a symmetric K and positive per-DOF masses
// (Eigen's SelfAdjointEigenSolver on the fixed-size matrix).
double largestMassNormalizedEigenvalue(const Eigen::Matrix<double, 6, 6>& stiffness,
                                       const Eigen::Matrix<double, 6, 1>& dof_masses);
double largestMassNormalizedEigenvalue(const Mat12& stiffness, const Vec12& dof_masses);
// Descending eigenvalue (as the authors sort: the stiffest, most stretched elements rigid
// first); ties keep index order (std::stable_sort).
std::vector<int> orderByStretch(const std::vector<double>& stretch_eigenvalues);

// Centroid of every element (mean of its nodes) at the positions x (flat [x0 y0 z0 ...]).
std::vector<Vec3> elementCentroids(const Connectivity& elements, const Positions& x);

// 1 for every element with a node in `dirichlet_nodes`: never rigid (its node is prescribed).
std::vector<char> elementsTouchingNodes(const Connectivity& elements, int num_nodes,
                                        const std::vector<int>& dirichlet_nodes);

// --- layers ---

struct RigidGroup {
  std::vector<int> elements;  // in insertion order
  std::vector<int> vertices;  // ascending, unique
  // Indices into `vertices` of the ones that also belong to an elastic element of the layer:
  // the vertices the rigid-elastic coupling (eq. 13-19) acts on.
  std::vector<int> boundary_vertices;
};

struct LayerSnapshot {
  double rigid_percentage = 0.0;
  int slots = 0;                  // floor(p N_e / 100): elements of the order taken
  int rigid_elements = 0;         // slots minus forced-elastic ones
  std::vector<RigidGroup> bodies;
  std::vector<int> element_body;  // per element: its body in `bodies`, or -1 (elastic)
};

// Seconds spent ordering and in the union-find (Table 1 reports their share of a step).
struct LayerBuildTimes {
  double ordering_seconds = 0.0;
  double union_find_seconds = 0.0;
};

struct LayerHierarchy {
  // Coarse -> fine (the solver's order, Alg. 2): descending unique percentages.
  std::vector<LayerSnapshot> layers;
  std::vector<int> order;  // the element order used
  LayerBuildTimes times;
};

// Sorted unique percentages, descending (coarse first). Throws std::invalid_argument for a
// percentage outside [0, 100] or an empty list.
std::vector<double> coarseToFinePercentages(const std::vector<double>& rigid_percentages);

// floor(p N / 100), robust to round-off in p (p = 33.3333... of 3 elements gives 1).
int layerSlots(double rigid_percentage, int num_elements);

// Algorithm 1 (with a real union) on an element order. `forced_elastic` is empty or one flag
// per element. Layers come out coarse -> fine; `times.ordering_seconds` stays 0.
LayerHierarchy buildLayerHierarchy(const Connectivity& elements, int num_nodes, const std::vector<int>& order,
                                   const std::vector<double>& rigid_percentages,
                                   const std::vector<char>& forced_elastic);

enum class ElementOrdering { kStrainRate, kRandom, kStripes, kStretch };

struct LayerRequest {
  ElementOrdering ordering = ElementOrdering::kStrainRate;
  std::vector<double> rigid_percentages{0.0};
  std::vector<double> strain_rates;  // kStrainRate: one per element
  std::uint32_t seed = 0;            // kRandom
  std::vector<Vec3> centroids;       // kStripes: one per element
  StripePattern stripes;             // kStripes
  std::vector<double> stretch_eigenvalues;  // kStretch: one per element
  std::vector<char> forced_elastic;  // empty or one per element
};

// Orders (timed) and builds the layers (timed).
LayerHierarchy buildLayers(const Connectivity& elements, int num_nodes, const LayerRequest& request);

}  // namespace pbdlab::ml_xpbd
