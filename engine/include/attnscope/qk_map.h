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
    /// PCA (exact, instant), or exact t-SNE (van der Maaten & Hinton 2008: O(N²) a step, at most
    /// kMaxTsnePoints points, seeded).
    enum class Method { Pca, Tsne } method = Method::Pca;
    double perplexity = 30;  ///< t-SNE: the neighbours each point's Gaussian counts (clamped to (N − 1) / 3)
    int iterations = 1000;   ///< t-SNE: gradient steps (the first 250 with early exaggeration 12)
    std::uint64_t seed = 0;  ///< t-SNE: the starting layout's draws
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

/// The map of result `resultIndex`'s `head`. Errors: InvalidArgument (an index outside the result,
/// t-SNE on more than kMaxTsnePoints points), InvalidInput (a result that kept no Q and K),
/// Cancelled (t-SNE stopped by `progress`).
Result<QkMap> queryKeyMap(const RunResult& run, std::size_t resultIndex, int head, const QkMapOptions& options = {},
                          const ProgressFn& progress = {});

/// The queries and keys after the options' translation and scaling ([n, d], [m, d] in, changed in
/// place), returning s: what the map places (exposed so a test can check every softmax row).
double translateAndScale(std::vector<double>& q, std::vector<double>& k, std::int64_t n, std::int64_t m, std::int64_t d,
                         const QkMapOptions& options);

}  // namespace attnscope::engine
