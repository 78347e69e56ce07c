// AttentionViz's query–key map (attnscope/qk_map.h): the translation and scaling in float64, then
// PCA through the covariance's eigenvectors (cyclic Jacobi: d is at most a few hundred), or exact
// t-SNE (van der Maaten & Hinton 2008).

#include <attnscope/qk_map.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace attnscope::engine {
namespace {

// Eigenvalues (diagonal of a on return) and eigenvectors (columns of v) of the symmetric n × n `a`.
void jacobiEigen(std::vector<double>& a, std::int64_t n, std::vector<double>& v) {
    v.assign(static_cast<std::size_t>(n * n), 0.0);
    for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i * n + i)] = 1.0;
    const auto at = [n](std::int64_t r, std::int64_t c) { return static_cast<std::size_t>(r * n + c); };
    for (int sweep = 0; sweep < 100; ++sweep) {
        double off = 0, diag = 0;
        for (std::int64_t p = 0; p < n; ++p)
            for (std::int64_t q = 0; q < n; ++q) (p == q ? diag : off) += a[at(p, q)] * a[at(p, q)];
        if (off <= 1e-24 * std::max(diag, 1e-300)) return;
        for (std::int64_t p = 0; p < n; ++p)
            for (std::int64_t q = p + 1; q < n; ++q) {
                const double apq = a[at(p, q)];
                if (apq == 0) continue;
                const double theta = (a[at(q, q)] - a[at(p, p)]) / (2 * apq);
                const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
                const double c = 1 / std::sqrt(t * t + 1), s = t * c;
                for (std::int64_t k = 0; k < n; ++k) {  // a ← a·J (columns p, q)
                    const double akp = a[at(k, p)], akq = a[at(k, q)];
                    a[at(k, p)] = c * akp - s * akq;
                    a[at(k, q)] = s * akp + c * akq;
                }
                for (std::int64_t k = 0; k < n; ++k) {  // a ← Jᵀ·a (rows p, q)
                    const double apk = a[at(p, k)], aqk = a[at(q, k)];
                    a[at(p, k)] = c * apk - s * aqk;
                    a[at(q, k)] = s * apk + c * aqk;
                }
                for (std::int64_t k = 0; k < n; ++k) {
                    const double vkp = v[at(k, p)], vkq = v[at(k, q)];
                    v[at(k, p)] = c * vkp - s * vkq;
                    v[at(k, q)] = s * vkp + c * vkq;
                }
            }
    }
}

double meanNorm(const std::vector<double>& x, std::int64_t rows, std::int64_t d) {
    double total = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        double sq = 0;
        for (std::int64_t c = 0; c < d; ++c) sq += x[static_cast<std::size_t>(r * d + c)] * x[static_cast<std::size_t>(r * d + c)];
        total += std::sqrt(sq);
    }
    return rows > 0 ? total / static_cast<double>(rows) : 0.0;
}

}  // namespace

std::vector<double> principalCoordinates(const std::vector<double>& points, std::int64_t rows, std::int64_t cols,
                                         int components, std::vector<double>* explained) {
    std::vector<double> mean(static_cast<std::size_t>(cols), 0.0);
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) mean[static_cast<std::size_t>(c)] += points[static_cast<std::size_t>(r * cols + c)];
    for (double& m : mean) m /= static_cast<double>(std::max<std::int64_t>(rows, 1));
    std::vector<double> cov(static_cast<std::size_t>(cols * cols), 0.0);
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t a = 0; a < cols; ++a) {
            const double xa = points[static_cast<std::size_t>(r * cols + a)] - mean[static_cast<std::size_t>(a)];
            for (std::int64_t b = a; b < cols; ++b)
                cov[static_cast<std::size_t>(a * cols + b)] += xa * (points[static_cast<std::size_t>(r * cols + b)] - mean[static_cast<std::size_t>(b)]);
        }
    for (std::int64_t a = 0; a < cols; ++a)
        for (std::int64_t b = 0; b < a; ++b) cov[static_cast<std::size_t>(a * cols + b)] = cov[static_cast<std::size_t>(b * cols + a)];
    std::vector<double> vectors;
    jacobiEigen(cov, cols, vectors);
    std::vector<std::int64_t> order(static_cast<std::size_t>(cols));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        return cov[static_cast<std::size_t>(a * cols + a)] > cov[static_cast<std::size_t>(b * cols + b)];
    });
    double total = 0;
    for (std::int64_t c = 0; c < cols; ++c) total += std::max(0.0, cov[static_cast<std::size_t>(c * cols + c)]);
    const int kept = static_cast<int>(std::min<std::int64_t>(components, cols));
    std::vector<double> out(static_cast<std::size_t>(rows * components), 0.0);
    if (explained) explained->assign(static_cast<std::size_t>(components), 0.0);
    for (int axis = 0; axis < kept; ++axis) {
        const std::int64_t e = order[static_cast<std::size_t>(axis)];
        // the sign: the largest component positive (so the picture does not flip between runs)
        std::int64_t largest = 0;
        for (std::int64_t c = 1; c < cols; ++c)
            if (std::abs(vectors[static_cast<std::size_t>(c * cols + e)]) > std::abs(vectors[static_cast<std::size_t>(largest * cols + e)])) largest = c;
        const double sign = vectors[static_cast<std::size_t>(largest * cols + e)] < 0 ? -1.0 : 1.0;
        for (std::int64_t r = 0; r < rows; ++r) {
            double x = 0;
            for (std::int64_t c = 0; c < cols; ++c)
                x += (points[static_cast<std::size_t>(r * cols + c)] - mean[static_cast<std::size_t>(c)]) * vectors[static_cast<std::size_t>(c * cols + e)];
            out[static_cast<std::size_t>(r * components + axis)] = sign * x;
        }
        if (explained && total > 0) (*explained)[static_cast<std::size_t>(axis)] = std::max(0.0, cov[static_cast<std::size_t>(e * cols + e)]) / total;
    }
    return out;
}

namespace {

// Each point's conditional affinities p_{j|i} ∝ exp(−β_i d_ij) with β_i bisected until their
// entropy is log(perplexity); symmetrised into P = (P_{j|i} + P_{i|j}) / 2N.
std::vector<double> tsneAffinities(const std::vector<double>& points, std::int64_t n, std::int64_t cols, double perplexity) {
    std::vector<double> dist(static_cast<std::size_t>(n * n), 0.0);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = i + 1; j < n; ++j) {
            double sq = 0;
            for (std::int64_t c = 0; c < cols; ++c) {
                const double diff = points[static_cast<std::size_t>(i * cols + c)] - points[static_cast<std::size_t>(j * cols + c)];
                sq += diff * diff;
            }
            dist[static_cast<std::size_t>(i * n + j)] = dist[static_cast<std::size_t>(j * n + i)] = sq;
        }
    const double target = std::log(perplexity);
    std::vector<double> p(static_cast<std::size_t>(n * n), 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
        double beta = 1, lo = 0, hi = std::numeric_limits<double>::infinity();
        double* row = p.data() + i * n;
        const double* d = dist.data() + i * n;
        for (int step = 0; step < 100; ++step) {
            // (distances shifted by the row's smallest: the same row, no underflow)
            double nearest = std::numeric_limits<double>::infinity();
            for (std::int64_t j = 0; j < n; ++j)
                if (j != i) nearest = std::min(nearest, d[j]);
            double sum = 0, weighted = 0;
            for (std::int64_t j = 0; j < n; ++j) {
                row[j] = j == i ? 0.0 : std::exp(-beta * (d[j] - nearest));
                sum += row[j];
                weighted += row[j] * (d[j] - nearest);
            }
            const double entropy = std::log(sum) + beta * weighted / sum;
            for (std::int64_t j = 0; j < n; ++j) row[j] /= sum;
            if (std::abs(entropy - target) < 1e-5) break;
            if (entropy > target) {
                lo = beta;
                beta = std::isinf(hi) ? beta * 2 : (beta + hi) / 2;
            } else {
                hi = beta;
                beta = (beta + lo) / 2;
            }
        }
    }
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = i + 1; j < n; ++j) {
            const double v = std::max((p[static_cast<std::size_t>(i * n + j)] + p[static_cast<std::size_t>(j * n + i)]) / (2.0 * n), 1e-12);
            p[static_cast<std::size_t>(i * n + j)] = p[static_cast<std::size_t>(j * n + i)] = v;
        }
    return p;
}

}  // namespace

std::vector<double> tsneCoordinates(const std::vector<double>& points, std::int64_t n, std::int64_t cols,
                                    const QkMapOptions& options, const ProgressFn& progress) {
    const double perplexity = std::clamp(options.perplexity, 1.0, std::max(1.0, static_cast<double>(n - 1) / 3.0));
    const std::vector<double> p = tsneAffinities(points, n, cols, perplexity);
    std::mt19937_64 rng(options.seed);
    std::normal_distribution<double> start(0.0, 1e-2);
    std::vector<double> y(static_cast<std::size_t>(n * 2)), update(y.size(), 0.0), gains(y.size(), 1.0), grad(y.size());
    for (double& v : y) v = start(rng);
    std::vector<double> num(static_cast<std::size_t>(n * n));
    constexpr int kExaggerated = 250;
    constexpr double kRate = 200;
    for (int step = 0; step < options.iterations; ++step) {
        if (progress && step % 50 == 0 && !progress(Progress{"t-SNE", step, options.iterations})) return {};
        const double exaggeration = step < kExaggerated ? 12.0 : 1.0, momentum = step < kExaggerated ? 0.5 : 0.8;
        double total = 0;
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = i + 1; j < n; ++j) {
                const double dx = y[static_cast<std::size_t>(2 * i)] - y[static_cast<std::size_t>(2 * j)];
                const double dy = y[static_cast<std::size_t>(2 * i + 1)] - y[static_cast<std::size_t>(2 * j + 1)];
                const double t = 1.0 / (1.0 + dx * dx + dy * dy);
                num[static_cast<std::size_t>(i * n + j)] = num[static_cast<std::size_t>(j * n + i)] = t;
                total += 2 * t;
            }
        std::fill(grad.begin(), grad.end(), 0.0);
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                if (i == j) continue;
                const double t = num[static_cast<std::size_t>(i * n + j)];
                const double f = 4.0 * (exaggeration * p[static_cast<std::size_t>(i * n + j)] - t / total) * t;
                grad[static_cast<std::size_t>(2 * i)] += f * (y[static_cast<std::size_t>(2 * i)] - y[static_cast<std::size_t>(2 * j)]);
                grad[static_cast<std::size_t>(2 * i + 1)] += f * (y[static_cast<std::size_t>(2 * i + 1)] - y[static_cast<std::size_t>(2 * j + 1)]);
            }
        for (std::size_t c = 0; c < y.size(); ++c) {
            gains[c] = (grad[c] > 0) != (update[c] > 0) ? gains[c] + 0.2 : std::max(0.01, gains[c] * 0.8);
            update[c] = momentum * update[c] - kRate * gains[c] * grad[c];
            y[c] += update[c];
        }
        for (int axis = 0; axis < 2; ++axis) {  // centred
            double mean = 0;
            for (std::int64_t i = 0; i < n; ++i) mean += y[static_cast<std::size_t>(2 * i + axis)] / static_cast<double>(n);
            for (std::int64_t i = 0; i < n; ++i) y[static_cast<std::size_t>(2 * i + axis)] -= mean;
        }
    }
    return y;
}

double translateAndScale(std::vector<double>& q, std::vector<double>& k, std::int64_t n, std::int64_t m, std::int64_t d,
                         const QkMapOptions& options) {
    if (options.translateKeys && n > 0 && m > 0) {
        for (std::int64_t c = 0; c < d; ++c) {
            double meanQ = 0, meanK = 0;
            for (std::int64_t i = 0; i < n; ++i) meanQ += q[static_cast<std::size_t>(i * d + c)];
            for (std::int64_t j = 0; j < m; ++j) meanK += k[static_cast<std::size_t>(j * d + c)];
            const double shift = meanQ / static_cast<double>(n) - meanK / static_cast<double>(m);
            for (std::int64_t j = 0; j < m; ++j) k[static_cast<std::size_t>(j * d + c)] += shift;
        }
    }
    double s = 1;
    if (options.scale) {
        const double nq = meanNorm(q, n, d), nk = meanNorm(k, m, d);
        if (nq > 0 && nk > 0) s = std::sqrt(nk / nq);
        for (double& x : q) x *= s;
        for (double& x : k) x /= s;
    }
    return s;
}

Result<QkMap> queryKeyMap(const RunResult& run, std::size_t index, int head, const QkMapOptions& options, const ProgressFn& progress) {
    if (index >= run.results.size())
        return makeError(ErrorCode::InvalidArgument, "qkmap: result " + std::to_string(index) + " is outside the file's " +
                                                         std::to_string(run.results.size()) + " results");
    if (run.q.empty() || run.k.empty() || run.q.shape.size() != 3 || run.k.shape.size() != 3)
        return makeError(ErrorCode::InvalidInput, "qkmap: the result kept no Q and K (a file written without them)");
    const std::int64_t heads = run.q.shape[0], n = run.q.shape[1], m = run.k.shape[1], d = run.q.shape[2];
    if (head < 0 || head >= heads)
        return makeError(ErrorCode::InvalidArgument, "qkmap: head " + std::to_string(head) + " is outside [0, " + std::to_string(heads - 1) + "]");
    std::vector<double> q(run.q.data.get() + head * n * d, run.q.data.get() + (head + 1) * n * d);
    std::vector<double> k(run.k.data.get() + head * m * d, run.k.data.get() + (head + 1) * m * d);
    QkMap map;
    map.scale = translateAndScale(q, k, n, m, d, options);
    std::vector<double> points = q;
    points.insert(points.end(), k.begin(), k.end());
    std::vector<double> xy;
    if (options.method != QkMapOptions::Method::Pca) {
        const bool tsne = options.method == QkMapOptions::Method::Tsne;
        const std::string name = tsne ? "t-SNE" : "UMAP";
        if (n + m > kMaxTsnePoints)
            return makeError(ErrorCode::InvalidArgument, "qkmap: " + name + " places at most " + std::to_string(kMaxTsnePoints) +
                                                             " points (queries and keys), the head has " + std::to_string(n + m) +
                                                             ": use PCA or a shorter input");
        xy = tsne ? tsneCoordinates(points, n + m, d, options, progress) : umapCoordinates(points, n + m, d, options, progress);
        if (xy.empty()) return makeError(ErrorCode::Cancelled, "qkmap: " + name + " cancelled");
    } else {
        std::vector<double> explained;
        xy = principalCoordinates(points, n + m, d, 2, &explained);
        map.explained[0] = explained[0];
        map.explained[1] = explained[1];
    }
    for (std::int64_t p = 0; p < n + m; ++p)
        map.points.push_back(QkMapPoint{p >= n, p < n ? p : p - n, static_cast<float>(xy[static_cast<std::size_t>(p * 2)]),
                                        static_cast<float>(xy[static_cast<std::size_t>(p * 2 + 1)])});
    return map;
}

}  // namespace attnscope::engine
