// `routing`: Routing Transformer attention (Roy et al. 2021, arXiv 2003.05997) with the semantics
// of lucidrains' KmeansAttention in eval mode (VARIANTS.md §7): spherical k-means with centroids
// shared by queries and keys (routed separately), then either balanced top-w routing (`topw`: each
// cluster takes its w nearest queries and w nearest keys; outputs are scatter-means with
// 1/(count + 1e-5), unrouted queries output 0) or the paper's same-cluster graph (`argmax`).
//
// Cost: k-means O(iterations·n·clusters·d); attention per cluster [w x w] GEMMs,
// O(clusters·w²·d) = O(n^1.5·d) with clusters ≈ w ≈ √n. No n x n matrix.

#include "base/kernels/parallel_heads.h"
#include "base/runtime/worker_threads.h"
#include "base/kernels/blas_gemm.h"
#include "base/kernels/column_similarities.h"
#include "base/kernels/row_argmax.h"
#include "base/kernels/softmax_kernel.h"
#include "base/kernels/top_select.h"
#include "base/runtime/seeded_normal.h"
#include "attention/variants/shared/pattern_variant.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>

namespace attnscope::engine {
namespace {

float* scratch(RunContext& ctx, const std::string& slot, std::int64_t floats) {
    return ctx.pool().scratch(slot, static_cast<std::size_t>(floats));
}

// out = each of `rows` rows of x divided by max(|row|, 1e-12) (torch's F.normalize: the norm
// accumulated in double, then a float), read and written in one pass.
void normalisedRows(const float* x, std::int64_t rows, std::int64_t d, float* out) {
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* row = x + r * d;
        double sq = 0;
        for (std::int64_t c = 0; c < d; ++c) sq += static_cast<double>(row[c]) * row[c];
        const float norm = std::max(static_cast<float>(std::sqrt(sq)), 1e-12f);
        for (std::int64_t c = 0; c < d; ++c) out[r * d + c] = row[c] / norm;
    }
}

constexpr std::uint64_t kInitStream = 0x800000000ull;
constexpr float kMaskedScore = -std::numeric_limits<float>::infinity();
constexpr double kScatterBias = 1e-5;  // lucidrains scatter_mean: sum / (count + 1e-5)
// Routing vectors per k-means block: 256 x clusters similarities stay in L2 for the assignment.
constexpr std::int64_t kKmeansBlockRows = 256;

// Scratch and partial results of one fixed range of clusters (one thread).
struct ClusterPart {
    std::vector<float> gatherQ;   ///< [maxRows, d] the cluster's query rows
    std::vector<float> gatherKV;  ///< [maxCols, d] its key rows, then its value rows
    std::vector<float> scores;    ///< [maxRows, maxCols]
    std::vector<float> rowOut;    ///< [maxRows, d] P V of the cluster
    std::vector<float> acc;       ///< [n, d] summed outputs of a range after the first (the first adds into the head's output)
    std::vector<std::uint8_t> hasEntry, rowEmpty;
    std::int64_t entries = 0;
};

struct ClusterAttention {
    std::vector<std::int64_t> queries;  ///< ascending token indices
    std::vector<std::int64_t> keys;     ///< ascending token indices
    std::vector<float> rowShift, rowSum;  ///< [queries] each row's softmax shift and sum (-inf, 0: nothing admissible)
};

class RoutingAttention final : public Variant {
public:
    bool checksQkvValues() const override { return true; }  // head by head, as it runs them
    bool multipliesWithBlas() const override { return true; }

    double scoredKeysPerQuery(const ProblemShape& s, const ParamValues& params) const override {
        std::int64_t clusters = paramInt(params, "clusters");
        if (clusters <= 0) clusters = std::max<std::int64_t>(1, std::llround(std::sqrt(static_cast<double>(s.n))));
        clusters = std::min(clusters, s.n);
        std::int64_t w = paramInt(params, "window_size");
        if (w <= 0) w = (s.n + clusters - 1) / clusters;
        // its cluster's window of keys, and k-means against every centroid each iteration
        const double iterations = static_cast<double>(paramInt(params, "iterations"));
        return static_cast<double>(std::min(w, s.m)) + iterations * static_cast<double>(clusters);
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        std::int64_t clusters = paramInt(params, "clusters");
        if (clusters <= 0) clusters = std::max<std::int64_t>(1, std::llround(std::sqrt(static_cast<double>(s.n))));
        clusters = std::min(clusters, s.n);
        std::int64_t w = paramInt(params, "window_size");
        if (w <= 0) w = (s.n + clusters - 1) / clusters;
        w = std::min(w, s.n);
        // kept: output, centroids and their history, assignments (I64 [iterations, 2, n]), the
        // clusters' members and row statistics; scratch per head-worker (two counted): the
        // routing vectors [2n, d], the similarities [clusters, 2n], one cluster's scores
        // (balanced size) and gathered rows
        const double rows = static_cast<double>(s.heads * s.n), d = static_cast<double>(s.d), c = static_cast<double>(clusters);
        const double iterations = static_cast<double>(paramInt(params, "iterations"));
        const double kept = rows * (d * 4 + 8 * (2 * iterations + 6)) + static_cast<double>(s.heads) * c * d * 4 * (iterations + 2);
        const double perWorker = static_cast<double>(s.n) * (2 * d * 4 + 2 * c * 4) +
                                 static_cast<double>(w) * (static_cast<double>(w) + 3 * d) * 4;
        const double scratch = 2 * perWorker;
        return static_cast<std::uint64_t>(kept + scratch);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;
};

// The sizes a run uses: clusters (0 = round(sqrt(n)), at most n, with a notice), the window
// (0 = ceil(n / clusters), at most n: lucidrains' wsz = min(window_size, t)).
struct RoutingShape {
    std::int64_t heads = 0, n = 0, d = 0, clusters = 0, iterations = 0, window = 0;
    bool topw = true, causal = false;
    float scale = 1.0f;
};

RoutingShape routingShape(const Qkv& qkv, const ParamValues& params, RunContext& ctx) {
    RoutingShape s;
    s.heads = qkv.heads();
    s.n = qkv.n();
    s.d = qkv.d();
    s.clusters = paramInt(params, "clusters");
    if (s.clusters == 0) s.clusters = std::max<std::int64_t>(1, std::llround(std::sqrt(static_cast<double>(s.n))));
    if (s.clusters > s.n) {
        ctx.warn("clusters = " + std::to_string(s.clusters) + " is more than the " + std::to_string(s.n) +
                 " tokens; using clusters = " + std::to_string(s.n));
        s.clusters = s.n;
    }
    s.iterations = paramInt(params, "iterations");
    s.window = paramInt(params, "window_size");
    if (s.window == 0) s.window = (s.n + s.clusters - 1) / s.clusters;
    s.window = std::min(s.window, s.n);
    s.topw = paramChoice(params, "mode") == "topw";
    s.causal = paramBool(params, "causal");
    s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.d)));
    return s;
}

// What a run keeps: the output, the rows' softmax statistics (per (cluster, member) for topw, per
// query for argmax), the row status and the k-means diagnostics.
struct RoutingKept {
    PlainTensor history, assignments, routed, routedCount, clusterQueries, clusterKeys, status, rowShift, rowSum;
    std::shared_ptr<std::vector<float>> output;

    RoutingKept(const RoutingShape& s, RunContext& ctx) {
        const std::int64_t heads = s.heads, n = s.n;
        history = ctx.pool().zeros(DType::F32, {heads, s.iterations + 1, s.clusters, s.d});
        assignments = ctx.pool().zeros(DType::I64, {heads, s.iterations, 2, n});
        routed = ctx.pool().zeros(DType::I64, {heads, 2, n});
        routedCount = ctx.pool().zeros(DType::I64, {heads, n});
        if (s.topw) {
            clusterQueries = ctx.pool().zeros(DType::I64, {heads, s.clusters, s.window});
            clusterKeys = ctx.pool().zeros(DType::I64, {heads, s.clusters, s.window});
        }
        status = ctx.pool().zeros(DType::U8, {heads, n});
        output = ctx.pool().resultBuffer("routing.output", static_cast<std::size_t>(heads * n * s.d));
        std::fill(output->begin(), output->end(), 0.0f);
        const std::vector<std::int64_t> statShape =
            s.topw ? std::vector<std::int64_t>{heads, s.clusters, s.window} : std::vector<std::int64_t>{heads, n};
        rowShift = ctx.pool().zeros(DType::F32, statShape);
        rowSum = ctx.pool().zeros(DType::F32, statShape);
        std::fill(rowShift.f32.begin(), rowShift.f32.end(), -std::numeric_limits<float>::infinity());
    }
};

// One head's spherical k-means on x = [q̂; k̂] ([2n, d], normalised rows): initial centroids are
// `clusters` distinct routing vectors (a partial Fisher-Yates shuffle of 0..2n-1 from the seed, as
// lucidrains' randperm(2n)[:clusters]); each step assigns every vector to its most similar
// centroid and sets the centroid to the normalised sum of its members, an empty cluster keeping
// its centroid (lucidrains kmeans_iter). Similarities are computed a block of vectors at a time and
// assigned while in cache. Fills the head's history and assignments; returns the final centroids.
std::vector<float> kmeansHead(std::int64_t h, const float* xp, const RoutingShape& s, std::uint64_t seed, RoutingKept& kept,
                              float* simBlock, double& flops) {
    const std::int64_t n = s.n, d = s.d, clusters = s.clusters;
    std::vector<std::int64_t> perm(static_cast<std::size_t>(2 * n));
    std::iota(perm.begin(), perm.end(), 0);
    SeededNormal gen(mixSeed(seed, kInitStream + static_cast<std::uint64_t>(h)));
    for (std::int64_t t = 0; t < clusters; ++t) {
        const auto pick = t + static_cast<std::int64_t>(gen.nextU64() % static_cast<std::uint64_t>(2 * n - t));
        std::swap(perm[static_cast<std::size_t>(t)], perm[static_cast<std::size_t>(pick)]);
    }
    std::vector<float> mu(static_cast<std::size_t>(clusters * d));
    for (std::int64_t c = 0; c < clusters; ++c)
        std::memcpy(mu.data() + c * d, xp + perm[static_cast<std::size_t>(c)] * d, static_cast<std::size_t>(d) * sizeof(float));
    float* hist = kept.history.f32.data() + h * (s.iterations + 1) * clusters * d;
    std::memcpy(hist, mu.data(), static_cast<std::size_t>(clusters * d) * sizeof(float));
    std::vector<float> sums(static_cast<std::size_t>(clusters * d));
    std::vector<std::int64_t> sizes(static_cast<std::size_t>(clusters));
    for (std::int64_t it = 0; it < s.iterations; ++it) {
        std::fill(sums.begin(), sums.end(), 0.0f);
        std::fill(sizes.begin(), sizes.end(), 0);
        std::int64_t* assign = kept.assignments.i64.data() + (h * s.iterations + it) * 2 * n;
        for (std::int64_t r0 = 0; r0 < 2 * n; r0 += kKmeansBlockRows) {
            const std::int64_t rows = std::min(kKmeansBlockRows, 2 * n - r0);
            gemmRowMajor(true, rows, clusters, d, xp + r0 * d, d, mu.data(), d, simBlock, clusters);
            for (std::int64_t r = 0; r < rows; ++r) {
                const std::int64_t c = firstMaxIndex(simBlock + r * clusters, clusters);
                assign[r0 + r] = c;
                ++sizes[static_cast<std::size_t>(c)];
                float* sum = sums.data() + c * d;
                const float* v = xp + (r0 + r) * d;
                for (std::int64_t e = 0; e < d; ++e) sum[e] += v[e];
            }
        }
        for (std::int64_t c = 0; c < clusters; ++c) {
            if (sizes[static_cast<std::size_t>(c)] == 0) continue;
            const float* sum = sums.data() + c * d;
            double norm = 0;
            for (std::int64_t e = 0; e < d; ++e) norm += static_cast<double>(sum[e]) * sum[e];
            const auto inv = static_cast<float>(1.0 / std::max(std::sqrt(norm), 1e-12));
            for (std::int64_t e = 0; e < d; ++e) mu[static_cast<std::size_t>(c * d + e)] = sum[e] * inv;
        }
        std::memcpy(hist + (it + 1) * clusters * d, mu.data(), static_cast<std::size_t>(clusters * d) * sizeof(float));
        flops += 2.0 * 2 * n * clusters * d;
    }
    return mu;
}

// The clusters' query and key lists. topw: each cluster's w most similar queries and keys (simT:
// [clusters, 2n]); ties go to the lower index (torch.topk leaves them implementation-defined).
// argmax: every query and key in its nearest cluster. `inner`: the selections on the kernels'
// threads (otherwise on this one, which already runs one head per thread).
std::vector<ClusterAttention> clusterMembers(std::int64_t h, const RoutingShape& s, const float* simT,
                                             const std::vector<std::int32_t>& nearest, RoutingKept& kept, bool inner) {
    const std::int64_t n = s.n, clusters = s.clusters, window = s.window;
    std::vector<ClusterAttention> groups(static_cast<std::size_t>(clusters));
    if (!s.topw) {
        for (std::int64_t t = 0; t < n; ++t) {
            groups[static_cast<std::size_t>(nearest[static_cast<std::size_t>(t)])].queries.push_back(t);
            groups[static_cast<std::size_t>(nearest[static_cast<std::size_t>(n + t)])].keys.push_back(t);
        }
        return groups;
    }
    const int threads = inner ? kernelThreads() : 1;
    std::vector<std::vector<float>> scratchOf(static_cast<std::size_t>(threads));
    std::vector<std::vector<std::int64_t>> indexScratchOf(static_cast<std::size_t>(threads));
    const auto select = [&](std::int64_t task, int worker) {
        std::vector<float>& scratch = scratchOf[static_cast<std::size_t>(worker)];
        std::vector<std::int64_t>& indexScratch = indexScratchOf[static_cast<std::size_t>(worker)];
        const std::int64_t c = task / 2, side = task % 2;
        const float* sim = simT + c * 2 * n + side * n;
        // The w-th largest similarity is the threshold; everything at or above it, in index
        // order, and the ties at it beyond the w places dropped from the end.
        const float threshold = wthLargest(sim, n, window, scratch, indexScratch);
        std::vector<std::int64_t> chosen;
        chosen.reserve(static_cast<std::size_t>(window) + 16);
        indicesAtLeast(sim, n, threshold, chosen);
        auto excess = static_cast<std::int64_t>(chosen.size()) - window;
        for (auto it = chosen.end(); excess > 0;) {
            --it;
            if (sim[*it] == threshold) {
                it = chosen.erase(it);
                --excess;
            }
        }
        std::copy(chosen.begin(), chosen.end(),
                  (side == 0 ? kept.clusterQueries : kept.clusterKeys).i64.begin() + (h * clusters + c) * window);
        (side == 0 ? groups[static_cast<std::size_t>(c)].queries : groups[static_cast<std::size_t>(c)].keys) = std::move(chosen);
    };
    if (inner) {
        forEachItem(2 * clusters, select);
    } else {
        for (std::int64_t task = 0; task < 2 * clusters; ++task) select(task, 0);
    }
    return groups;
}

// One head's attention inside its clusters: scores = Q_c K_c^T / sqrt(d), masks, row softmax,
// out += P V_c, one cluster at a time so that its gathered rows and its scores (w x w) stay in
// cache between the two products and the softmax. Clusters are split over the parts (one thread
// each) in fixed ranges; each range adds into its own output rows, summed in range order afterwards.
struct HeadAttention {
    std::vector<std::uint8_t> hasEntry;  ///< [n] a query got at least one admissible key
    std::int64_t entries = 0;
};

HeadAttention attendClusters(std::int64_t h, const Qkv& qkv, const RoutingShape& s, std::vector<ClusterAttention>& groups,
                             float* outH, std::vector<ClusterPart>& partState) {
    const std::int64_t n = s.n, d = s.d, clusters = s.clusters;
    const std::vector<std::uint8_t>& pad = qkv.keyPadding;
    const auto padded = [&](std::int64_t t) { return !pad.empty() && pad[static_cast<std::size_t>(t)] != 0; };
    const float* qp = qkv.qHead(h);
    const float* kp = qkv.kHead(h);
    const float* vp = qkv.vHead(h);
    std::int64_t maxRows = 1, maxCols = 1;
    for (const ClusterAttention& g : groups) {
        maxRows = std::max(maxRows, static_cast<std::int64_t>(g.queries.size()));
        maxCols = std::max(maxCols, static_cast<std::int64_t>(g.keys.size()));
    }
    const auto parts = static_cast<std::int64_t>(partState.size());
    for (std::int64_t part = 0; part < parts; ++part) {
        ClusterPart& ps = partState[static_cast<std::size_t>(part)];
        ps.gatherQ.resize(static_cast<std::size_t>(maxRows * d));
        ps.gatherKV.resize(static_cast<std::size_t>(maxCols * d));
        ps.scores.resize(static_cast<std::size_t>(maxRows * maxCols));
        ps.rowOut.resize(static_cast<std::size_t>(maxRows * d));
        if (part > 0) ps.acc.assign(static_cast<std::size_t>(n * d), 0.0f);
        ps.hasEntry.assign(static_cast<std::size_t>(n), 0);
        ps.rowEmpty.assign(static_cast<std::size_t>(maxRows), 0);
        ps.entries = 0;
    }
    const auto gatherRows = [d](const float* base, const std::vector<std::int64_t>& rows, float* dst) {
        for (std::size_t r = 0; r < rows.size(); ++r)
            std::memcpy(dst + static_cast<std::int64_t>(r) * d, base + rows[r] * d, static_cast<std::size_t>(d) * sizeof(float));
    };
    const auto runCluster = [&](ClusterPart& ps, float* sums, ClusterAttention& g) {
        const auto rows = static_cast<std::int64_t>(g.queries.size());
        const auto cols = static_cast<std::int64_t>(g.keys.size());
        if (rows == 0 || cols == 0) return;
        gatherRows(qp, g.queries, ps.gatherQ.data());
        gatherRows(kp, g.keys, ps.gatherKV.data());
        float* sp = ps.scores.data();
        gemmRowMajor(true, rows, cols, d, ps.gatherQ.data(), d, ps.gatherKV.data(), d, sp, cols);
        if (s.causal || !pad.empty())
            for (std::int64_t r = 0; r < rows; ++r) {
                const std::int64_t i = g.queries[static_cast<std::size_t>(r)];
                float* row = sp + r * cols;
                for (std::int64_t e = 0; e < cols; ++e) {
                    const std::int64_t j = g.keys[static_cast<std::size_t>(e)];
                    if (padded(j) || (s.causal && j > i)) row[e] = kMaskedScore;
                }
                if (padded(i)) std::fill(row, row + cols, kMaskedScore);
            }
        std::fill(ps.rowEmpty.begin(), ps.rowEmpty.begin() + rows, 0);
        g.rowShift.assign(static_cast<std::size_t>(rows), -std::numeric_limits<float>::infinity());
        g.rowSum.assign(static_cast<std::size_t>(rows), 0.0f);
        softmaxRowsInPlace(sp, rows, cols, cols, s.scale, ps.rowEmpty.data(), g.rowShift.data(), g.rowSum.data());
        gatherRows(vp, g.keys, ps.gatherKV.data());
        gemmRowMajor(false, rows, d, cols, sp, cols, ps.gatherKV.data(), d, ps.rowOut.data(), d);
        for (std::int64_t r = 0; r < rows; ++r) {
            if (ps.rowEmpty[static_cast<std::size_t>(r)]) continue;
            const std::int64_t i = g.queries[static_cast<std::size_t>(r)];
            ps.hasEntry[static_cast<std::size_t>(i)] = 1;
            float* o = sums + i * d;
            const float* src = ps.rowOut.data() + r * d;
            for (std::int64_t e = 0; e < d; ++e) o[e] += src[e];
        }
        ps.entries += rows * cols;
    };
    const auto runRange = [&](int part) {
        ClusterPart& ps = partState[static_cast<std::size_t>(part)];
        float* sums = part == 0 ? outH : ps.acc.data();  // the first range adds into the head's output
        for (std::int64_t c = part * clusters / parts; c < (part + 1) * clusters / parts; ++c)
            runCluster(ps, sums, groups[static_cast<std::size_t>(c)]);
    };
    if (parts > 1) {
        SingleThreadedBlas singleBlas;
        runOnWorkers(static_cast<int>(parts), runRange);
    } else {
        runRange(0);
    }
    HeadAttention out;
    out.hasEntry.assign(static_cast<std::size_t>(n), 0);
    for (std::int64_t part = 0; part < parts; ++part) {
        const ClusterPart& ps = partState[static_cast<std::size_t>(part)];
        if (part > 0)
            for (std::int64_t e = 0; e < n * d; ++e) outH[e] += ps.acc[static_cast<std::size_t>(e)];
        for (std::int64_t i = 0; i < n; ++i) out.hasEntry[static_cast<std::size_t>(i)] |= ps.hasEntry[static_cast<std::size_t>(i)];
        out.entries += ps.entries;
    }
    return out;
}

// Scatter-mean (topw: sum / (count + 1e-5)) and the row status (2 padded query, 1 nothing
// admissible: unrouted, or every routed row masked); the clusters' row statistics kept.
std::int64_t finishHead(std::int64_t h, const RoutingShape& s, const Qkv& qkv, const std::vector<ClusterAttention>& groups,
                        const HeadAttention& attended, float* outH, RoutingKept& kept) {
    const std::int64_t n = s.n, d = s.d;
    const std::int64_t* count = kept.routedCount.i64.data() + h * n;
    std::int64_t emptyRows = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const double divisor = s.topw ? static_cast<double>(count[i]) + kScatterBias : 1.0;
        const auto inv = static_cast<float>(1.0 / divisor);
        for (std::int64_t e = 0; e < d; ++e) outH[i * d + e] *= inv;
        if (!qkv.keyPadding.empty() && qkv.keyPadding[static_cast<std::size_t>(i)]) {
            kept.status.u8[static_cast<std::size_t>(h * n + i)] = 2;
        } else if (!attended.hasEntry[static_cast<std::size_t>(i)]) {
            kept.status.u8[static_cast<std::size_t>(h * n + i)] = 1;
            ++emptyRows;
        }
    }
    for (std::int64_t c = 0; c < s.clusters; ++c) {
        const ClusterAttention& g = groups[static_cast<std::size_t>(c)];
        for (std::size_t r = 0; r < g.rowShift.size(); ++r) {
            const std::size_t at = s.topw ? static_cast<std::size_t>((h * s.clusters + c) * s.window) + r
                                          : static_cast<std::size_t>(h * n + g.queries[r]);
            kept.rowShift.f32[at] = g.rowShift[r];
            kept.rowSum.f32[at] = g.rowSum[r];
        }
    }
    return emptyRows;
}

void keepRoutingDiagnostics(const RoutingShape& s, RoutingKept& kept, AttentionResult& result, RunContext& ctx) {
    PlainTensor centroids = ctx.pool().zeros(DType::F32, {s.heads, s.clusters, s.d});
    for (std::int64_t h = 0; h < s.heads; ++h)
        std::copy_n(kept.history.f32.begin() + (h * (s.iterations + 1) + s.iterations) * s.clusters * s.d, s.clusters * s.d,
                    centroids.f32.begin() + h * s.clusters * s.d);
    result.diagnostics["centroids"] = std::move(centroids);
    result.diagnostics["centroid_history"] = std::move(kept.history);
    result.diagnostics["assignments"] = std::move(kept.assignments);
    result.diagnostics["nearest"] = std::move(kept.routed);
    result.diagnostics["routed_count"] = std::move(kept.routedCount);
    if (s.topw) {
        result.diagnostics["cluster_queries"] = std::move(kept.clusterQueries);
        result.diagnostics["cluster_keys"] = std::move(kept.clusterKeys);
    }
}

// Per head-worker: a head's routing vectors, similarities and the scratch of its clusters' attention.
struct HeadWorkspace {
    float* x = nullptr;         ///< [2n, d] the routing vectors [q̂; k̂]
    float* simBlock = nullptr;  ///< [block, clusters] k-means similarities
    float* simT = nullptr;      ///< [clusters, 2n] similarities to the final centroids
    std::vector<float> columnBest;
    std::vector<std::int32_t> nearest;
    std::vector<ClusterPart> parts;
};

// What one head's run adds to the counters; seconds are the thread's own.
struct HeadTally {
    double flops = 0, kmeansSeconds = 0, attentionSeconds = 0;
    std::int64_t entries = 0, emptyRows = 0;
};

double secondsSince(std::chrono::steady_clock::time_point& start) {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - start).count();
    start = now;
    return seconds;
}

// One head from its routing vectors to its output rows. `inner`: the head's steps on the kernels'
// threads (fewer heads than threads); otherwise the whole head on this thread.
HeadTally routeHead(std::int64_t h, const Qkv& qkv, const RoutingShape& s, std::uint64_t seed, HeadWorkspace& ws,
                    RoutingKept& kept, bool inner) {
    HeadTally tally;
    auto start = std::chrono::steady_clock::now();
    normalisedRows(qkv.qHead(h), s.n, s.d, ws.x);
    normalisedRows(qkv.kHead(h), s.n, s.d, ws.x + s.n * s.d);
    const std::vector<float> mu = kmeansHead(h, ws.x, s, seed, kept, ws.simBlock, tally.flops);
    // simT: one row per cluster as the top-w selection reads them; nearest: the first most
    // similar centroid per vector. Not BLAS: equal vectors must get equal similarities for ties
    // to go to the lower index.
    (inner ? columnSimilarities : columnSimilaritiesOnThisThread)(mu.data(), s.clusters, ws.x, 2 * s.n, s.d, ws.simT);
    tally.flops += 2.0 * 2 * s.n * s.clusters * s.d;
    firstMaxRowPerColumn(ws.simT, s.clusters, 2 * s.n, 2 * s.n, ws.columnBest, ws.nearest);
    std::copy(ws.nearest.begin(), ws.nearest.end(), kept.routed.i64.begin() + h * 2 * s.n);
    tally.kmeansSeconds = secondsSince(start);

    std::vector<ClusterAttention> groups = clusterMembers(h, s, ws.simT, ws.nearest, kept, inner);
    std::int64_t* count = kept.routedCount.i64.data() + h * s.n;
    for (const ClusterAttention& g : groups)
        for (std::int64_t i : g.queries) ++count[i];
    float* outH = kept.output->data() + h * s.n * s.d;
    const HeadAttention attended = attendClusters(h, qkv, s, groups, outH, ws.parts);
    tally.entries = attended.entries;
    tally.flops += 4.0 * static_cast<double>(attended.entries) * static_cast<double>(s.d);
    tally.emptyRows = finishHead(h, s, qkv, groups, attended, outH, kept);
    tally.attentionSeconds = secondsSince(start);
    return tally;
}

AttentionResult RoutingAttention::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    requireSelfAttention(info().id, qkv);
    const RoutingShape s = routingShape(qkv, params, ctx);
    AttentionResult result = startResult(info().id, params, qkv);
    result.params["clusters"] = s.clusters;  // the values actually used, so the file recomputes
    result.params["window_size"] = s.window;
    RoutingKept kept(s, ctx);

    // A head per worker, each from its routing vectors to its output; with fewer heads than
    // threads, one head at a time with its steps on the threads. The pool's buffers are taken
    // here, on this thread (pooled: fresh per-head buffers cost more in page faults than the
    // products that fill them).
    const int workers = headWorkers(s.heads);
    const bool inner = workers == 1 && kernelThreads() > 1;
    std::vector<HeadWorkspace> spaces(static_cast<std::size_t>(workers));
    for (int w = 0; w < workers; ++w) {
        HeadWorkspace& ws = spaces[static_cast<std::size_t>(w)];
        const std::string tag = "routing.w" + std::to_string(w);
        ws.x = scratch(ctx, tag + ".x", 2 * s.n * s.d);
        ws.simBlock = scratch(ctx, tag + ".sim_block", std::min(kKmeansBlockRows, 2 * s.n) * s.clusters);
        ws.simT = scratch(ctx, tag + ".sim_t", s.clusters * 2 * s.n);
        ws.parts.resize(inner ? static_cast<std::size_t>(std::min<std::int64_t>(kernelThreads(), s.clusters)) : 1);
    }
    std::vector<HeadTally> tallies(static_cast<std::size_t>(s.heads));
    forEachHead(s.heads, "attention", ctx, [&](std::int64_t h, int worker) {
        tallies[static_cast<std::size_t>(h)] = routeHead(h, qkv, s, ctx.seed, spaces[static_cast<std::size_t>(worker)], kept, inner);
    });
    // (stages: the threads' seconds over the workers, each stage's share of the wall time)
    double flops = 0, kmeansSeconds = 0, attentionSeconds = 0;
    std::int64_t entriesComputed = 0, emptyRows = 0;
    for (const HeadTally& t : tallies) {
        flops += t.flops;
        kmeansSeconds += t.kmeansSeconds / workers;
        attentionSeconds += t.attentionSeconds / workers;
        entriesComputed += t.entries;
        emptyRows += t.emptyRows;
    }

    result.output = SharedTensorF32{{s.heads, s.n, s.d}, kept.output};
    result.stats["row_max"] = std::move(kept.rowShift);
    result.stats["row_sum"] = std::move(kept.rowSum);
    result.emptyRowCount = emptyRows;
    keepRowStatus(std::move(kept.status), result, ctx);
    keepRoutingDiagnostics(s, kept, result, ctx);

    auto& counters = ctx.counters();
    counters.stages.push_back(StageTime{"kmeans", kmeansSeconds});
    counters.stages.push_back(StageTime{"attention", attentionSeconds});
    counters.seconds += kmeansSeconds + attentionSeconds;
    counters.flops = flops;
    counters.entriesComputed = entriesComputed;
    ctx.noteBytes(kept.output->size() * sizeof(float) +
                  static_cast<std::uint64_t>(entriesComputed) * 4 / std::max<std::int64_t>(1, s.heads));
    result.counters = counters;
    return result;
}

}  // namespace

namespace variants::routing {
std::unique_ptr<Variant> kernel() { return std::make_unique<RoutingAttention>(); }
}  // namespace variants::routing

}  // namespace attnscope::engine
