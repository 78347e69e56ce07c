// Transformer-XL's receptive field (attnscope/receptive_field.h): the structural cone by applying
// the layout's first key once per layer, and the rollout propagated down as a vector, so a query
// costs O(layers · n · band) instead of the n × n × n products of a whole rollout matrix.

#include "base/api/engine_error.h"

#include <attnscope/receptive_field.h>

#include <algorithm>

namespace attnscope::engine {
namespace {

void checkQuery(const SegmentLayout& layout, std::int64_t query, int layers) {
    if (layout.n < 1 || layout.segment < 1 || layout.memory < 0)
        throw EngineError(ErrorCode::InvalidArgument, "the receptive field needs a Transformer-XL layout (n, segment ≥ 1, memory ≥ 0)");
    if (query < 0 || query >= layout.n)
        throw EngineError(ErrorCode::InvalidArgument, "query " + std::to_string(query) + " is outside the text (0 … " +
                                                          std::to_string(layout.n - 1) + ")");
    if (layers < 0) throw EngineError(ErrorCode::InvalidArgument, "the layer count must be 0 or more");
}

/// One layer of Ã = ½·band + ½·I applied to `flow` from the left: out[j] = Σ_i flow[i] Ã[i][j].
/// Rows of the band sum to 1 up to rounding; Ã is re-normalised per row as the atlas does.
std::vector<double> propagate(const std::vector<double>& flow, const AttentionBand& band, std::int64_t lowest) {
    std::vector<double> out(flow.size(), 0.0);
    for (std::int64_t i = lowest; i < band.n; ++i) {
        const double f = flow[static_cast<std::size_t>(i)];
        if (f == 0.0) continue;
        const auto row = static_cast<std::size_t>(i);
        const std::int64_t first = band.first[row];
        const float* w = band.weights.data() + band.offset[row];
        double sum = 0.0;
        for (std::int64_t j = first; j <= i; ++j) sum += w[j - first];
        const double total = 0.5 * sum + 0.5;  // the row sum of Ã before re-normalising
        for (std::int64_t j = first; j <= i; ++j) out[static_cast<std::size_t>(j)] += f * 0.5 * w[j - first] / total;
        out[row] += f * 0.5 / total;
    }
    return out;
}

AttentionBand bandOf(const PlainTensor& attention, const SegmentLayout& layout) {
    if (attention.dtype != DType::F32 || attention.shape.size() != 3 || attention.shape[1] != layout.n ||
        attention.shape[2] != layout.n || attention.shape[0] < 1)
        throw EngineError(ErrorCode::InvalidArgument,
                          "the receptive field needs F32 attention [heads, " + std::to_string(layout.n) + ", " +
                              std::to_string(layout.n) + "]");
    const std::int64_t heads = attention.shape[0], n = layout.n;
    AttentionBand band;
    band.n = n;
    band.first.resize(static_cast<std::size_t>(n));
    band.offset.assign(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t i = 0; i < n; ++i) {
        band.first[static_cast<std::size_t>(i)] = layout.firstKey(i);
        band.offset[static_cast<std::size_t>(i) + 1] = band.offset[static_cast<std::size_t>(i)] + i - layout.firstKey(i) + 1;
    }
    band.weights.resize(static_cast<std::size_t>(band.offset.back()));
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t first = band.first[static_cast<std::size_t>(i)];
        for (std::int64_t j = first; j <= i; ++j) {
            double mean = 0.0;
            for (std::int64_t h = 0; h < heads; ++h) mean += attention.f32[static_cast<std::size_t>((h * n + i) * n + j)];
            band.weights[static_cast<std::size_t>(band.offset[static_cast<std::size_t>(i)] + j - first)] =
                static_cast<float>(mean / static_cast<double>(heads));
        }
    }
    return band;
}

ReceptiveField structuralCone(const SegmentLayout& layout, std::int64_t query, int layers) {
    checkQuery(layout, query, layers);
    ReceptiveField field;
    field.query = query;
    field.layers = layers;
    field.reach.push_back(query);
    field.segmentReach.push_back(query);
    const std::int64_t ownSegment = query / layout.segment * layout.segment;
    for (int d = 0; d < layers; ++d) {
        // firstKey is monotone in i, so the lowest position reached reaches lowest next
        field.reach.push_back(layout.firstKey(field.reach.back()));
        field.segmentReach.push_back(ownSegment);  // without memory the cone stops at the segment
    }
    return field;
}

ReceptiveField coneWithFlow(const SegmentLayout& layout, std::int64_t query, const std::vector<AttentionBand>& bands) {
    ReceptiveField field = structuralCone(layout, query, static_cast<int>(bands.size()));
    for (const auto& band : bands)
        if (band.n != layout.n || band.first.size() != static_cast<std::size_t>(layout.n) ||
            band.offset.size() != static_cast<std::size_t>(layout.n) + 1 ||
            band.weights.size() != static_cast<std::size_t>(band.offset.back()))
            throw EngineError(ErrorCode::InvalidArgument, "an attention band does not cover the layout's " +
                                                              std::to_string(layout.n) + " positions");
    std::vector<double> flow(static_cast<std::size_t>(layout.n), 0.0);
    flow[static_cast<std::size_t>(query)] = 1.0;
    field.flow.push_back(flow);
    for (std::size_t d = 0; d < bands.size(); ++d) {
        const AttentionBand& band = bands[bands.size() - 1 - d];  // from the top layer down
        flow = propagate(flow, band, field.reach[d]);
        field.flow.push_back(flow);
    }
    return field;
}

template <class F>
auto guarded(F&& work) -> Result<decltype(work())> {
    try {
        return work();
    } catch (const EngineError& e) {
        return makeError(e.code, e.what());
    }
}

}  // namespace

Result<AttentionBand> attentionBandOf(const PlainTensor& attention, const SegmentLayout& layout) {
    return guarded([&] { return bandOf(attention, layout); });
}

Result<ReceptiveField> structuralReceptiveField(const SegmentLayout& layout, std::int64_t query, int layers) {
    return guarded([&] { return structuralCone(layout, query, layers); });
}

Result<ReceptiveField> receptiveField(const SegmentLayout& layout, std::int64_t query, const std::vector<AttentionBand>& bands) {
    return guarded([&] { return coneWithFlow(layout, query, bands); });
}

}  // namespace attnscope::engine
