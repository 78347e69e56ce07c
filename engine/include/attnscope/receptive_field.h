#pragma once
// Transformer-XL's receptive field (Dai et al. 2019, §3.2 and Fig. 2b): which input positions can
// reach a query through l layers, and how much attention actually flows from them.
//
// Structure: at every layer query i sees keys [firstKey(i), i], and a key is the previous layer's
// state of that position (the memory holds the states the layer below computed for earlier
// segments). So through l layers i is reached from [reach_l, i] with reach_l = firstKey applied l
// times: the cone grows by up to M positions per layer, O(N × L) in the paper's words.
//
// Flow: attention rollout (Abnar & Zuidema 2020) as the head atlas computes it, Ã = ½·(head mean)
// + ½·I per layer, propagated down from the query one layer at a time: flow_0 = e_query at the top
// layer, flow_(d+1)[j] = Σ_i flow_d[i] · Ã_(top−d)[i][j]. Every flow row sums to 1.
// Torch-free.

#include <attnscope/result.h>
#include <attnscope/score_terms.h>
#include <attnscope/tensor.h>
#include <attnscope/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

/// One layer's attention averaged over heads, row i over the keys [first[i], i] it sees.
struct AttentionBand {
    std::int64_t n = 0;
    std::vector<std::int64_t> first;   ///< [n]
    std::vector<std::int64_t> offset;  ///< [n + 1]: row i is weights[offset[i] … offset[i + 1])
    std::vector<float> weights;
    /// Weight of key j in row i; 0 outside the band.
    float at(std::int64_t i, std::int64_t j) const {
        if (i < 0 || i >= n || j < first[static_cast<std::size_t>(i)] || j > i) return 0.0f;
        return weights[static_cast<std::size_t>(offset[static_cast<std::size_t>(i)] + j - first[static_cast<std::size_t>(i)])];
    }
};

/// The band of F32 [heads, n, n] attention under `layout` (heads averaged in double).
/// InvalidArgument when the shape does not match layout.n.
Result<AttentionBand> attentionBandOf(const PlainTensor& attention, const SegmentLayout& layout);

/// A Transformer-XL model's attention over one text, every layer as a band (what the receptive
/// field view reads), with the layout the model ran with (its tgt_len, mem_len, same_length).
struct ModelAttentionBands {
    std::string folder, text;
    std::vector<Token> tokens;
    SegmentLayout layout;
    std::vector<AttentionBand> layers;  ///< bottom (layer 0) to top
};

struct ReceptiveField {
    std::int64_t query = 0;
    int layers = 0;
    /// reach[d], d = 0 … layers: the first position of the layer `layers − d` that can reach the
    /// query at the top; reach[0] = query. Everything from reach[d] to the query can.
    std::vector<std::int64_t> reach;
    /// The same for a vanilla model reading one segment alone (no memory): reach within the
    /// query's segment.
    std::vector<std::int64_t> segmentReach;
    /// flow[d] [n], d = 0 … layers: how much of the query's top state draws on each position's
    /// state at layer `layers − d` (rollout); empty when no attention was given.
    std::vector<std::vector<double>> flow;
};

/// The structural cone only (`layers` ≥ 0). InvalidArgument for a query outside [0, layout.n),
/// a negative layer count or a layout without segments.
Result<ReceptiveField> structuralReceptiveField(const SegmentLayout& layout, std::int64_t query, int layers);
/// The cone and the rollout through every layer of `bands` (bottom to top; each over layout.n
/// positions). InvalidArgument as above or for a band of another length.
Result<ReceptiveField> receptiveField(const SegmentLayout& layout, std::int64_t query, const std::vector<AttentionBand>& bands);

}  // namespace attnscope::engine
