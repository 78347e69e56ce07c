#pragma once
// What a vision model's attention says about the picture, from every layer's weights
// (RunResult::modelLayerAttention, each F32 [heads, n, n]): attention rollout and flow
// (Abnar & Zuidema 2020; rollout's head fusion and discard ratio as the vit-explain code), and
// DINO's view, the patches holding a chosen share of the [CLS] attention (Caron et al. 2021).
// Plain C++: the views call it.

#include <attnscope/tensor.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnscope::engine {

/// How a layer's heads become one matrix before rollout: their mean, or the entrywise max or min.
enum class HeadFusion { Mean, Max, Min };
const char* headFusionName(HeadFusion fusion);  ///< "mean", "max", "min"
std::optional<HeadFusion> headFusionFromName(const std::string& name);

/// Rollout R = Ã_L ⋯ Ã_1 [n × n], row-major: row i = output token i, column j = input token j.
/// Per layer: the heads fused; the `discardRatio` share of the fused matrix's entries with the
/// smallest weights set to 0 (never entry (0, 0), the [CLS] token's own); Ã = (A + I) / 2 with
/// its rows renormalised. `layers` each [heads, n, n]; discardRatio in [0, 1).
std::vector<double> attentionRollout(const std::vector<PlainTensor>& layers, HeadFusion fusion, double discardRatio);

/// Attention flow to output token `query` from every input token j: the maximum flow through
/// the layers' graph with capacities Ã (heads' mean, (A + I) / 2, rows renormalised). n max-flow
/// problems on (layers + 1) · n nodes. `keepGoing` (optional) is asked between problems and
/// stops the work (returning an empty vector) when it says false.
std::vector<double> attentionFlowTo(const std::vector<PlainTensor>& layers, std::int64_t query,
                                    const std::function<bool(std::int64_t done, std::int64_t total)>& keepGoing = {});

/// DINO's view: of `weights` (a row over cells, any scale), the largest ones that together hold
/// at least `share` of the row's sum, as DINO's visualize_attention.py keeps them (sorted
/// ascending, cumulative share above 1 − share). share in (0, 1].
std::vector<std::uint8_t> massShareCells(const std::vector<double>& weights, double share);

/// What `analyze --image` adds to a vision model's atlas (docs/IMAGES.md).
struct ImageAttentionOptions {
    HeadFusion fusion = HeadFusion::Mean;  ///< rollout's head fusion (vit-explain's default)
    double discardRatio = 0.9;             ///< rollout's discard ratio (vit-explain's default)
    double massShare = 0.6;                ///< DINO's threshold (visualize_attention.py's default)
    bool flow = true;                      ///< attention flow to the query token (n max-flow problems)
};

struct ImageAttentionViews {
    ImageAttentionOptions options;
    /// The token the views look from: [CLS] (0) when the model has one, else -1 (then every
    /// view is the mean over all query tokens, and flow is not computed).
    std::int64_t query = 0;
    std::int64_t layers = 0, heads = 0, cells = 0;
    /// [layers, heads, cells]: the query's attention to each grid cell, per layer and head (the strip).
    std::vector<float> queryAttention;
    std::vector<double> rollout;            ///< [cells]: the query's rollout row over the grid cells
    std::vector<double> flow;               ///< [cells]: flow to the query from each cell; empty when not computed
    /// [heads, cells]: DINO's view of the last layer, the cells holding massShare of each head's attention.
    std::vector<std::uint8_t> massCells;
};

/// The views of `layers` (each [heads, n, n]) for a grid of `cells` cells after `prefix` tokens.
/// Throws EngineError for bad shapes or options; `keepGoing` as attentionFlowTo.
ImageAttentionViews imageAttentionViews(const std::vector<PlainTensor>& layers, std::int64_t prefix, std::int64_t cells,
                                        const ImageAttentionOptions& options,
                                        const std::function<bool(std::int64_t, std::int64_t)>& keepGoing = {});

}  // namespace attnscope::engine
