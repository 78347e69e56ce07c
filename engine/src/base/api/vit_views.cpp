#include <attnscope/vit_views.h>

#include "base/api/attention_flow.h"
#include "base/api/engine_error.h"

#include <algorithm>
#include <numeric>

namespace attnscope::engine {
namespace {

std::int64_t tokensOf(const std::vector<PlainTensor>& layers) {
    if (layers.empty()) throw EngineError(ErrorCode::InvalidArgument, "no layers' attention to roll out");
    const auto& shape = layers.front().shape;
    if (shape.size() != 3 || shape[1] != shape[2])
        throw EngineError(ErrorCode::InvalidArgument, "attention must be [heads, n, n] per layer");
    for (const auto& a : layers)
        if (a.shape != shape || a.f32.size() != static_cast<std::size_t>(shape[0] * shape[1] * shape[2]))
            throw EngineError(ErrorCode::InvalidArgument, "every layer's attention must have the same [heads, n, n] shape");
    return shape[1];
}

// The heads of one layer fused entrywise into [n, n].
std::vector<double> fuseHeads(const PlainTensor& a, HeadFusion fusion) {
    const std::int64_t heads = a.shape[0], nn = a.shape[1] * a.shape[2];
    std::vector<double> out(static_cast<std::size_t>(nn));
    for (std::int64_t e = 0; e < nn; ++e) {
        double v = a.f32[static_cast<std::size_t>(e)];
        for (std::int64_t h = 1; h < heads; ++h) {
            const double x = a.f32[static_cast<std::size_t>(h * nn + e)];
            v = fusion == HeadFusion::Mean ? v + x : fusion == HeadFusion::Max ? std::max(v, x) : std::min(v, x);
        }
        out[static_cast<std::size_t>(e)] = fusion == HeadFusion::Mean ? v / static_cast<double>(heads) : v;
    }
    return out;
}

// vit-explain: the ⌊n² · ratio⌋ smallest entries (ties by position) are chosen, then (0, 0) is
// spared, so the [CLS] token's own weight always stays.
void discardSmallest(std::vector<double>& fused, double ratio) {
    const auto count = static_cast<std::size_t>(static_cast<double>(fused.size()) * ratio);
    if (count == 0) return;
    std::vector<std::size_t> order(fused.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return fused[a] < fused[b]; });
    for (std::size_t i = 0; i < count; ++i)
        if (order[i] != 0) fused[order[i]] = 0.0;
}

// Ã = (A + I) / 2, each row divided by its sum (a row of zeros keeps only the residual).
void mixResidual(std::vector<double>& a, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
        double* row = a.data() + i * n;
        row[i] += 1.0;
        double sum = 0;
        for (std::int64_t j = 0; j < n; ++j) sum += row[j] * 0.5;
        for (std::int64_t j = 0; j < n; ++j) row[j] = row[j] * 0.5 / sum;
    }
}

}  // namespace

const char* headFusionName(HeadFusion fusion) {
    return fusion == HeadFusion::Mean ? "mean" : fusion == HeadFusion::Max ? "max" : "min";
}

std::optional<HeadFusion> headFusionFromName(const std::string& name) {
    if (name == "mean") return HeadFusion::Mean;
    if (name == "max") return HeadFusion::Max;
    if (name == "min") return HeadFusion::Min;
    return std::nullopt;
}

std::vector<double> attentionRollout(const std::vector<PlainTensor>& layers, HeadFusion fusion, double discardRatio) {
    const std::int64_t n = tokensOf(layers);
    if (!(discardRatio >= 0.0 && discardRatio < 1.0))
        throw EngineError(ErrorCode::InvalidArgument, "discard ratio must be in [0, 1), got " + std::to_string(discardRatio));
    std::vector<double> result(static_cast<std::size_t>(n * n), 0.0), next(result.size());
    for (std::int64_t i = 0; i < n; ++i) result[static_cast<std::size_t>(i * n + i)] = 1.0;
    for (const PlainTensor& layer : layers) {
        std::vector<double> a = fuseHeads(layer, fusion);
        discardSmallest(a, discardRatio);
        mixResidual(a, n);
        // result ← Ã · result
        std::fill(next.begin(), next.end(), 0.0);
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t k = 0; k < n; ++k) {
                const double w = a[static_cast<std::size_t>(i * n + k)];
                if (w == 0.0) continue;
                const double* src = result.data() + k * n;
                double* dst = next.data() + i * n;
                for (std::int64_t j = 0; j < n; ++j) dst[j] += w * src[j];
            }
        result.swap(next);
    }
    return result;
}

std::vector<double> attentionFlowTo(const std::vector<PlainTensor>& layers, std::int64_t query,
                                    const std::function<bool(std::int64_t, std::int64_t)>& keepGoing) {
    const std::int64_t n = tokensOf(layers);
    if (query < 0 || query >= n)
        throw EngineError(ErrorCode::InvalidArgument, "flow query " + std::to_string(query) + " is outside [0, " + std::to_string(n) + ")");
    std::vector<std::vector<double>> residual;
    for (const PlainTensor& layer : layers) {
        residual.push_back(fuseHeads(layer, HeadFusion::Mean));
        mixResidual(residual.back(), n);
    }
    return attentionFlowToOutput(residual, n, query, keepGoing);
}

std::vector<std::uint8_t> massShareCells(const std::vector<double>& weights, double share) {
    if (!(share > 0.0 && share <= 1.0))
        throw EngineError(ErrorCode::InvalidArgument, "mass share must be in (0, 1], got " + std::to_string(share));
    std::vector<std::size_t> order(weights.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return weights[a] < weights[b]; });
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    std::vector<std::uint8_t> kept(weights.size(), 0);
    if (total <= 0.0) return kept;
    double cumulative = 0;
    for (std::size_t i : order) {
        cumulative += weights[i] / total;
        kept[i] = cumulative > 1.0 - share ? 1 : 0;
    }
    return kept;
}

namespace {

// Row `query` of an [n, n] matrix over the grid cells, or (query −1) the mean of all rows.
std::vector<double> gridRow(const double* m, std::int64_t n, std::int64_t query, std::int64_t prefix, std::int64_t cells) {
    std::vector<double> out(static_cast<std::size_t>(cells), 0.0);
    const std::int64_t first = query < 0 ? 0 : query, last = query < 0 ? n : query + 1;
    for (std::int64_t i = first; i < last; ++i)
        for (std::int64_t c = 0; c < cells; ++c) out[static_cast<std::size_t>(c)] += m[i * n + prefix + c];
    if (query < 0)
        for (double& v : out) v /= static_cast<double>(n);
    return out;
}

}  // namespace

ImageAttentionViews imageAttentionViews(const std::vector<PlainTensor>& layers, std::int64_t prefix, std::int64_t cells,
                                        const ImageAttentionOptions& options,
                                        const std::function<bool(std::int64_t, std::int64_t)>& keepGoing) {
    const std::int64_t n = tokensOf(layers);
    if (prefix < 0 || cells <= 0 || prefix + cells != n)
        throw EngineError(ErrorCode::InvalidArgument, std::to_string(prefix) + " prefix tokens and " + std::to_string(cells) +
                                                          " cells do not make the attention's " + std::to_string(n) + " tokens");
    ImageAttentionViews views;
    views.options = options;
    views.query = prefix > 0 ? 0 : -1;
    views.layers = static_cast<std::int64_t>(layers.size());
    views.heads = layers.front().shape[0];
    views.cells = cells;
    for (const PlainTensor& layer : layers)
        for (std::int64_t h = 0; h < views.heads; ++h) {
            std::vector<double> head(layer.f32.begin() + h * n * n, layer.f32.begin() + (h + 1) * n * n);
            const std::vector<double> row = gridRow(head.data(), n, views.query, prefix, cells);
            views.queryAttention.insert(views.queryAttention.end(), row.begin(), row.end());
        }
    const std::vector<double> rollout = attentionRollout(layers, options.fusion, options.discardRatio);
    views.rollout = gridRow(rollout.data(), n, views.query, prefix, cells);
    if (options.flow && views.query >= 0) {
        const std::vector<double> flow = attentionFlowTo(layers, views.query, keepGoing);
        if (flow.empty()) throw CancelledError();
        views.flow.assign(flow.begin() + prefix, flow.end());
    }
    const float* last = views.queryAttention.data() + (views.layers - 1) * views.heads * cells;
    for (std::int64_t h = 0; h < views.heads; ++h) {
        const std::vector<double> row(last + h * cells, last + (h + 1) * cells);
        const std::vector<std::uint8_t> kept = massShareCells(row, options.massShare);
        views.massCells.insert(views.massCells.end(), kept.begin(), kept.end());
    }
    return views;
}

}  // namespace attnscope::engine
