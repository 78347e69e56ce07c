#pragma once
// The head atlas of a trained checkpoint: per layer and head, what the head does (entropy,
// distance, positional shares, spectral rank) and what each efficient variant would keep of it
// (pattern coverage), plus attention rollout across layers (Abnar & Zuidema 2020).

#include <attnscope/coverage_settings.h>
#include <attnscope/model.h>
#include <attnscope/variant_info.h>
#include <attnscope/vit_views.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace attnscope::engine {

/// Longest input for which attention flow is computed.
constexpr std::int64_t kMaxFlowTokens = 64;

struct AtlasRequest {
    std::string text;
    std::vector<std::int64_t> ids;  ///< explicit vocabulary ids instead of text (no specials added)
    std::vector<CoverageSetting> settings;  ///< empty = coverageSettingsFor(the input's length)
    bool rollout = true;  ///< rollout and, up to kMaxFlowTokens tokens, attention flow
    /// A picture for a vision model (instead of text): the atlas then adds `image`.
    std::optional<ImageSpec> image;
    ImageAttentionOptions imageOptions;
};

struct HeadMetrics {
    int layer = 0, head = 0;
    double entropy = 0;       ///< mean over queries of -sum p log p (nats)
    double meanDistance = 0;  ///< mean over queries of sum_j p_ij |i - j| (tokens)
    double selfShare = 0, previousShare = 0, nextShare = 0;  ///< mean p_ii, p_i,i-1, p_i,i+1
    double specialShare = 0;  ///< mean mass on template specials ([CLS], [SEP], <s>, ...)
    double firstShare = 0;    ///< mean mass on token 0
    /// Mean over queries of 1 − Σ_j p_ij: the weight on the head's learned sink (GPT-OSS); 0 for
    /// heads whose rows sum to 1.
    double sinkShare = 0;
    /// StreamingLLM (Xiao et al. 2023): mean mass on the first HeadAtlas::streamingSinks keys
    /// plus the keys within HeadAtlas::streamingWindow of the query; and the window alone.
    double streamingKept = 0, windowOnlyKept = 0;
    /// Grouped-query heads: mean cosine similarity of this head's attention rows with the other
    /// query heads sharing its key/value head; NaN when no head shares one.
    double groupSimilarity = std::numeric_limits<double>::quiet_NaN();
    std::int64_t rank90 = 0;  ///< singular values needed for 90 % of the squared spectrum
    /// Per coverage setting (same order as HeadAtlas::settings); NaN where not applicable.
    std::vector<double> keptMass;     ///< mean share of the head's softmax mass inside the pattern
    std::vector<double> outputError;  ///< ||O_variant - O_head||_F / ||O_head||_F
    std::int64_t bestWindow = 0;      ///< smallest one-sided window keeping >= 90 % of the mass
    double bestWindowKept = 0;
    std::int64_t bestStride = 0;      ///< stride l >= 2 whose keys (i - j) mod l == 0 keep the most
    double bestStrideKept = 0;        ///<   mass relative to their share of keys (see docs)
};

struct HeadAtlas {
    ModelInfo model;
    TokenizedInput input;
    std::int64_t n = 0, layers = 0, heads = 0;
    std::int64_t streamingSinks = 4;   ///< the attention-sink keys StreamingLLM keeps (its 4)
    std::int64_t streamingWindow = 0;  ///< keys j with |i − j| < this are kept: ceil(n / 4)
    std::vector<CoverageSetting> settings;
    std::vector<std::string> settingNotes;  ///< per setting: "" or why it does not apply
    std::vector<HeadMetrics> metrics;       ///< layer-major: metrics[layer * heads + head]
    PlainTensor rollout;                    ///< F32 [n, n]: output token i <- input token j
    /// F32 [n, n]: attention flow (max-flow) from input token j to output token i; empty when n
    /// exceeds kMaxFlowTokens (n^2 max-flow problems), with a notice.
    PlainTensor flow;
    std::vector<std::string> notices;
    double seconds = 0;
    /// A vision model on a picture: per-layer [CLS] attention, rollout, flow and DINO's view
    /// over the grid (input.image says where the cells are).
    std::optional<ImageAttentionViews> image;
};

/// The atlas as JSON (what `attnscope-cli analyze --out ATLAS.json` writes; docs/ATLAS.md).
std::string headAtlasJson(const HeadAtlas& atlas);

}  // namespace attnscope::engine
