#pragma once
// AttentionViz's query–key map as data: one head's query and key vectors placed in one plane by
// PCA (or t-SNE when asked), after AttentionViz's two changes that leave every softmax row unchanged — the keys shifted
// so that the mean key is the mean query (q·(k + c) adds the same q·c to every key of a row), and
// queries and keys rescaled by s and 1/s so that their mean norms agree (q·k unchanged). Reads
// what a result keeps: any variant's Q and K, a model layer's, a picture's.

#include <attnscope/progress.h>
#include <attnscope/result.h>
#include <attnscope/types.h>

#include <cstdint>
#include <vector>

namespace attnscope::engine {

struct QkMapOptions {
    bool translateKeys = true;  ///< shift the keys so their mean is the queries' mean
    bool scale = true;          ///< queries × s, keys / s, with s² = mean key norm / mean query norm
    /// PCA (exact, instant), exact t-SNE (van der Maaten & Hinton 2008: O(N²) a step, at most
    /// kMaxTsnePoints points, seeded), or UMAP (McInnes, Healy & Melville 2018, umap-learn's
    /// defaults: exact neighbours, at most kMaxTsnePoints points, seeded).
    enum class Method { Pca, Tsne, Umap } method = Method::Pca;
    double perplexity = 30;  ///< t-SNE: the neighbours each point's Gaussian counts (clamped to (N − 1) / 3)
    int iterations = 1000;   ///< t-SNE: gradient steps (the first 250 with early exaggeration 12)
    std::uint64_t seed = 0;  ///< t-SNE and UMAP: the starting layout's or the sampling's draws
    int neighbors = 15;      ///< UMAP: n_neighbors (the point itself included, as umap-learn counts)
    double minDist = 0.1;    ///< UMAP: min_dist (spread 1)
    int epochs = 500;        ///< UMAP: n_epochs
};

/// The most points (queries + keys) exact t-SNE places: its N × N affinities in float64.
constexpr std::int64_t kMaxTsnePoints = 4096;

struct QkMapPoint {
    bool isKey = false;
    std::int64_t index = 0;  ///< the query's or key's position
    float x = 0, y = 0;
};

struct QkMap {
    std::vector<QkMapPoint> points;  ///< the n queries, then the m keys
    double explained[2] = {0, 0};    ///< each axis' share of the points' variance
    double scale = 1;                ///< s (1 without scaling)
};

/// PCA of `rows` points of `cols` dimensions (row-major): each point's coordinates on the first
/// `components` principal axes (centred), [rows × components], and each axis' share of the
/// variance. Axes are the covariance's eigenvectors (Jacobi rotations in float64), each signed so
/// that its largest component is positive.
std::vector<double> principalCoordinates(const std::vector<double>& points, std::int64_t rows, std::int64_t cols,
                                         int components, std::vector<double>* explained = nullptr);

/// Exact t-SNE of `rows` points of `cols` dimensions into the plane ([rows × 2], centred): Gaussian
/// affinities at the options' perplexity (each point's precision found by bisection), Student-t
/// similarities in the plane, gradient descent with momentum (0.5, then 0.8 after 250 steps),
/// adaptive gains and early exaggeration 12 for 250 steps, learning rate 200, a seeded start of
/// N(0, 10⁻⁴). `progress` (called every 50 steps) may cancel: the result is then empty.
std::vector<double> tsneCoordinates(const std::vector<double>& points, std::int64_t rows, std::int64_t cols,
                                    const QkMapOptions& options, const ProgressFn& progress = {});

/// UMAP's curve 1 / (1 + a·x^(2b)) fitted by least squares to 1 for x < minDist and
/// exp(−(x − minDist) / spread) beyond, on 300 points of [0, 3·spread] (umap-learn's find_ab_params).
void umapCurve(double minDist, double spread, double& a, double& b);

/// UMAP's fuzzy neighbour graph, one point's row: for neighbour distances d_1 ≤ … (the point itself
/// left out), ρ = d_1 and σ such that Σ exp(−max(0, d_j − ρ) / σ) = log2(k) (bisection, as umap-learn's
/// smooth_knn_dist); returns σ and writes the memberships exp(−max(0, d_j − ρ) / σ).
double umapMemberships(const std::vector<double>& distances, std::int64_t neighbors, std::vector<double>& memberships);

/// UMAP of `rows` points of `cols` dimensions into the plane ([rows × 2], centred): exact k nearest
/// neighbours, the fuzzy graph (memberships symmetrised by a + b − a·b), a PCA start scaled to ±10,
/// then umap-learn's optimize_layout_euclidean (`epochs` epochs, rate 1 falling to 0, 5 negative
/// samples per positive one, gradients clipped at 4). `progress` (every 25 epochs) may cancel: the
/// result is then empty.
std::vector<double> umapCoordinates(const std::vector<double>& points, std::int64_t rows, std::int64_t cols,
                                    const QkMapOptions& options, const ProgressFn& progress = {});

/// The map of result `resultIndex`'s `head`. Errors: InvalidArgument (an index outside the result,
/// t-SNE or UMAP on more than kMaxTsnePoints points), InvalidInput (a result that kept no Q and K),
/// Cancelled (t-SNE or UMAP stopped by `progress`).
Result<QkMap> queryKeyMap(const RunResult& run, std::size_t resultIndex, int head, const QkMapOptions& options = {},
                          const ProgressFn& progress = {});

/// The queries and keys after the options' translation and scaling ([n, d], [m, d] in, changed in
/// place), returning s: what the map places (exposed so a test can check every softmax row).
double translateAndScale(std::vector<double>& q, std::vector<double>& k, std::int64_t n, std::int64_t m, std::int64_t d,
                         const QkMapOptions& options);

}  // namespace attnscope::engine
