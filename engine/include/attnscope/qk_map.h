#pragma once
// AttentionViz's query–key map as data: one head's query and key vectors placed in one plane by
// PCA, after AttentionViz's two changes that leave every softmax row unchanged — the keys shifted
// so that the mean key is the mean query (q·(k + c) adds the same q·c to every key of a row), and
// queries and keys rescaled by s and 1/s so that their mean norms agree (q·k unchanged). Reads
// what a result keeps: any variant's Q and K, a model layer's, a picture's.

#include <attnscope/result.h>
#include <attnscope/types.h>

#include <cstdint>
#include <vector>

namespace attnscope::engine {

struct QkMapOptions {
    bool translateKeys = true;  ///< shift the keys so their mean is the queries' mean
    bool scale = true;          ///< queries × s, keys / s, with s² = mean key norm / mean query norm
};

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

/// The map of result `resultIndex`'s `head`. Errors: InvalidArgument (an index outside the result),
/// InvalidInput (a result that kept no Q and K).
Result<QkMap> queryKeyMap(const RunResult& run, std::size_t resultIndex, int head, const QkMapOptions& options = {});

/// The queries and keys after the options' translation and scaling ([n, d], [m, d] in, changed in
/// place), returning s: what the map places (exposed so a test can check every softmax row).
double translateAndScale(std::vector<double>& q, std::vector<double>& k, std::int64_t n, std::int64_t m, std::int64_t d,
                         const QkMapOptions& options);

}  // namespace attnscope::engine
