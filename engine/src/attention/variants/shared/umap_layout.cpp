// UMAP (McInnes, Healy & Melville 2018) as umap-learn computes it with its defaults, for the
// query–key map (attnscope/qk_map.h): exact neighbours (the map has at most a few thousand points),
// the fuzzy simplicial set, the curve parameters a and b, and the epoch-scheduled SGD with negative
// sampling. One choice differs: the start is the PCA layout scaled to ±10 (umap-learn's init="pca")
// instead of the spectral one, whose eigenproblem is O(N³) here.

#include <attnscope/qk_map.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace attnscope::engine {
namespace {

/// Each point's `k` nearest points (itself first, at distance 0), by Euclidean distance: indices and
/// distances [rows × k].
void nearestNeighbours(const std::vector<double>& points, std::int64_t rows, std::int64_t cols, std::int64_t k,
                       std::vector<std::int64_t>& index, std::vector<double>& distance) {
    index.assign(static_cast<std::size_t>(rows * k), 0);
    distance.assign(static_cast<std::size_t>(rows * k), 0.0);
    std::vector<std::pair<double, std::int64_t>> row(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i) {
        const double* a = points.data() + i * cols;
        for (std::int64_t j = 0; j < rows; ++j) {
            const double* b = points.data() + j * cols;
            double squared = 0;
            for (std::int64_t c = 0; c < cols; ++c) squared += (a[c] - b[c]) * (a[c] - b[c]);
            row[static_cast<std::size_t>(j)] = {j == i ? -1.0 : std::sqrt(squared), j};  // itself first
        }
        std::partial_sort(row.begin(), row.begin() + k, row.end());
        for (std::int64_t t = 0; t < k; ++t) {
            index[static_cast<std::size_t>(i * k + t)] = row[static_cast<std::size_t>(t)].second;
            distance[static_cast<std::size_t>(i * k + t)] = std::max(0.0, row[static_cast<std::size_t>(t)].first);
        }
    }
}

/// An edge of the symmetric fuzzy graph and its SGD schedule.
struct Edge {
    std::int64_t head = 0, tail = 0;
    double epochsPerSample = 0, nextSample = 0, epochsPerNegative = 0, nextNegative = 0;
};

/// The symmetric graph's edges (both directions), weights a + b − a·b of the two directed
/// memberships, those under max / epochs dropped (as umap-learn does), each scheduled every
/// epochs · max / w epochs.
std::vector<Edge> fuzzyEdges(const std::vector<std::int64_t>& index, const std::vector<double>& distance, std::int64_t rows,
                             std::int64_t k, int epochs) {
    std::vector<double> directed(static_cast<std::size_t>(rows * rows), 0.0);
    std::vector<double> row(static_cast<std::size_t>(k)), memberships;
    for (std::int64_t i = 0; i < rows; ++i) {
        std::copy(distance.begin() + i * k, distance.begin() + (i + 1) * k, row.begin());
        umapMemberships(row, k, memberships);
        for (std::int64_t t = 1; t < k; ++t)
            directed[static_cast<std::size_t>(i * rows + index[static_cast<std::size_t>(i * k + t)])] = memberships[static_cast<std::size_t>(t - 1)];
    }
    std::vector<Edge> edges;
    std::vector<double> weights;
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < rows; ++j) {
            const double a = directed[static_cast<std::size_t>(i * rows + j)], b = directed[static_cast<std::size_t>(j * rows + i)];
            const double w = a + b - a * b;
            if (i != j && w > 0) {
                edges.push_back(Edge{i, j});
                weights.push_back(w);
            }
        }
    const double top = weights.empty() ? 1.0 : *std::max_element(weights.begin(), weights.end());
    std::vector<Edge> kept;
    for (std::size_t e = 0; e < edges.size(); ++e) {
        if (weights[e] < top / epochs) continue;
        Edge edge = edges[e];
        edge.epochsPerSample = top / weights[e];  // = epochs / (epochs · w / max)
        edge.nextSample = edge.epochsPerSample;
        edge.epochsPerNegative = edge.epochsPerSample / 5.0;
        edge.nextNegative = edge.epochsPerNegative;
        kept.push_back(edge);
    }
    return kept;
}

double clipGradient(double g) { return std::clamp(g, -4.0, 4.0); }

}  // namespace

void umapCurve(double minDist, double spread, double& a, double& b) {
    constexpr int kSamples = 300;
    std::vector<double> x(kSamples), y(kSamples);
    for (int i = 0; i < kSamples; ++i) {
        x[static_cast<std::size_t>(i)] = 3.0 * spread * i / (kSamples - 1);
        y[static_cast<std::size_t>(i)] = x[static_cast<std::size_t>(i)] < minDist ? 1.0 : std::exp(-(x[static_cast<std::size_t>(i)] - minDist) / spread);
    }
    // Levenberg–Marquardt on the squared residuals (scipy's curve_fit), from a = b = 1.
    a = 1.0;
    b = 1.0;
    const auto cost = [&](double pa, double pb) {
        double sum = 0;
        for (int i = 0; i < kSamples; ++i) {
            const double xi = x[static_cast<std::size_t>(i)];
            const double f = 1.0 / (1.0 + pa * std::pow(xi, 2 * pb));
            sum += (f - y[static_cast<std::size_t>(i)]) * (f - y[static_cast<std::size_t>(i)]);
        }
        return sum;
    };
    double lambda = 1e-3;
    for (int step = 0; step < 500; ++step) {
        double jtj[2][2] = {{0, 0}, {0, 0}}, jtr[2] = {0, 0};
        for (int i = 0; i < kSamples; ++i) {
            const double xi = x[static_cast<std::size_t>(i)];
            if (xi <= 0) continue;  // f = 1 there whatever a and b are
            const double p = std::pow(xi, 2 * b), f = 1.0 / (1.0 + a * p), r = f - y[static_cast<std::size_t>(i)];
            const double da = -p * f * f, db = -a * p * 2.0 * std::log(xi) * f * f;
            jtj[0][0] += da * da;
            jtj[0][1] += da * db;
            jtj[1][1] += db * db;
            jtr[0] += da * r;
            jtr[1] += db * r;
        }
        const double m00 = jtj[0][0] * (1 + lambda), m11 = jtj[1][1] * (1 + lambda), m01 = jtj[0][1];
        const double det = m00 * m11 - m01 * m01;
        if (det == 0) break;
        const double stepA = -(m11 * jtr[0] - m01 * jtr[1]) / det, stepB = -(m00 * jtr[1] - m01 * jtr[0]) / det;
        if (cost(a + stepA, b + stepB) < cost(a, b)) {
            a += stepA;
            b += stepB;
            lambda *= 0.3;
            if (std::abs(stepA) < 1e-12 && std::abs(stepB) < 1e-12) break;
        } else {
            lambda *= 10;
            if (lambda > 1e12) break;
        }
    }
}

double umapMemberships(const std::vector<double>& distances, std::int64_t neighbors, std::vector<double>& memberships) {
    // distances[0] is the point itself; rho is the nearest other point's distance (local connectivity 1)
    constexpr double kTolerance = 1e-5, kMinScale = 1e-3;
    const std::int64_t k = std::min<std::int64_t>(neighbors, static_cast<std::int64_t>(distances.size()));
    const double target = std::log2(static_cast<double>(k));
    double rho = 0;
    for (std::int64_t j = 1; j < k; ++j)
        if (distances[static_cast<std::size_t>(j)] > 0) {
            rho = distances[static_cast<std::size_t>(j)];
            break;
        }
    const auto total = [&](double sigma) {
        double sum = 0;
        for (std::int64_t j = 1; j < k; ++j) {
            const double d = distances[static_cast<std::size_t>(j)] - rho;
            sum += d > 0 ? std::exp(-d / sigma) : 1.0;
        }
        return sum;
    };
    double lo = 0, hi = INFINITY, sigma = 1;
    for (int step = 0; step < 64; ++step) {
        const double sum = total(sigma);
        if (std::abs(sum - target) < kTolerance) break;
        if (sum > target) {
            hi = sigma;
            sigma = (lo + hi) / 2;
        } else {
            lo = sigma;
            sigma = std::isinf(hi) ? sigma * 2 : (lo + hi) / 2;
        }
    }
    double mean = 0;
    for (std::int64_t j = 0; j < k; ++j) mean += distances[static_cast<std::size_t>(j)] / static_cast<double>(k);
    sigma = std::max(sigma, kMinScale * mean);
    memberships.assign(static_cast<std::size_t>(std::max<std::int64_t>(k - 1, 0)), 0.0);
    for (std::int64_t j = 1; j < k; ++j) {
        const double d = distances[static_cast<std::size_t>(j)] - rho;
        memberships[static_cast<std::size_t>(j - 1)] = d > 0 ? std::exp(-d / sigma) : 1.0;
    }
    return sigma;
}

std::vector<double> umapCoordinates(const std::vector<double>& points, std::int64_t rows, std::int64_t cols,
                                    const QkMapOptions& options, const ProgressFn& progress) {
    if (rows < 3) return std::vector<double>(static_cast<std::size_t>(rows * 2), 0.0);
    const std::int64_t k = std::clamp<std::int64_t>(options.neighbors, 2, rows);
    const int epochs = std::max(1, options.epochs);
    std::vector<std::int64_t> index;
    std::vector<double> distance;
    nearestNeighbours(points, rows, cols, k, index, distance);
    std::vector<Edge> edges = fuzzyEdges(index, distance, rows, k, epochs);
    double a = 0, b = 0;
    umapCurve(options.minDist, 1.0, a, b);

    // the start: PCA scaled so the largest coordinate is 10, plus a little seeded noise
    std::mt19937_64 rng(options.seed);
    std::vector<double> y = principalCoordinates(points, rows, cols, 2);
    double largest = 0;
    for (double v : y) largest = std::max(largest, std::abs(v));
    std::normal_distribution<double> noise(0.0, 1e-4);
    for (double& v : y) v = (largest > 0 ? v * 10.0 / largest : 0.0) + noise(rng);

    std::uniform_int_distribution<std::int64_t> anyPoint(0, rows - 1);
    for (int epoch = 0; epoch < epochs; ++epoch) {
        if (progress && epoch % 25 == 0 && !progress(Progress{"UMAP", epoch, epochs})) return {};
        // (umap-learn lowers the rate after each epoch: epochs 0 and 1 both run at 1)
        const double alpha = 1.0 - static_cast<double>(std::max(epoch - 1, 0)) / epochs;
        for (Edge& edge : edges) {
            if (edge.nextSample > epoch) continue;
            double* current = y.data() + edge.head * 2;
            double* other = y.data() + edge.tail * 2;
            double squared = (current[0] - other[0]) * (current[0] - other[0]) + (current[1] - other[1]) * (current[1] - other[1]);
            const double attract = squared > 0 ? -2.0 * a * b * std::pow(squared, b - 1.0) / (a * std::pow(squared, b) + 1.0) : 0.0;
            for (int c = 0; c < 2; ++c) {
                const double g = clipGradient(attract * (current[c] - other[c]));
                current[c] += g * alpha;
                other[c] -= g * alpha;
            }
            edge.nextSample += edge.epochsPerSample;
            const auto negatives = static_cast<int>((epoch - edge.nextNegative) / edge.epochsPerNegative);
            for (int s = 0; s < negatives; ++s) {
                const std::int64_t far = anyPoint(rng);
                if (far == edge.head) continue;
                const double* away = y.data() + far * 2;
                squared = (current[0] - away[0]) * (current[0] - away[0]) + (current[1] - away[1]) * (current[1] - away[1]);
                const double repel = squared > 0 ? 2.0 * b / ((0.001 + squared) * (a * std::pow(squared, b) + 1.0)) : 0.0;
                for (int c = 0; c < 2; ++c) current[c] += (repel > 0 ? clipGradient(repel * (current[c] - away[c])) : 0.0) * alpha;
            }
            edge.nextNegative += negatives * edge.epochsPerNegative;
        }
    }
    for (int axis = 0; axis < 2; ++axis) {  // centred
        double mean = 0;
        for (std::int64_t i = 0; i < rows; ++i) mean += y[static_cast<std::size_t>(2 * i + axis)] / static_cast<double>(rows);
        for (std::int64_t i = 0; i < rows; ++i) y[static_cast<std::size_t>(2 * i + axis)] -= mean;
    }
    return y;
}

}  // namespace attnscope::engine
