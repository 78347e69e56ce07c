// `star`: the Star-Transformer's connectivity (Guo et al. 2019): each token attends its ring
// neighbours i-1, i, i+1 and a relay node. The relay is key column n (m = n + 1) whose key and
// value are the means of all tokens' keys and values (fastNLP starts the relay as the mean of
// the embeddings, padding included), so `output` is a real attention output. The relay's own
// row (mean query over [tokens; relay]) is a diagnostic. The full multi-step dynamics come later.

#include "variants/sparse_kernel.h"

#include <algorithm>

namespace attnscope::engine {
namespace {

class StarAttention final : public Variant {
public:
    StarAttention() {
        m_info.id = "star";
        m_info.name = "Star-Transformer (connectivity)";
        m_info.paper = "Guo et al. 2019, Star-Transformer, arXiv 1902.09113";
        m_info.summary = "Ring i-1, i, i+1 plus a relay key (column n, the mean of all keys and values).";
        m_info.params.push_back(boolParam("cyclic", false, "Close the ring (token 0 and n-1 are neighbours); the "
                                                           "reference (fastNLP) ring is open."));
    }

    const VariantInfo& info() const override { return m_info; }

    std::uint64_t denseBytes(const ProblemShape& s, const ParamValues&, bool keepWeights) const override {
        ProblemShape withRelay = s;
        withRelay.m = s.m + 1;
        return sparsePatternBytes(withRelay, 4.0 * static_cast<double>(s.n), false, keepWeights) +
               static_cast<std::uint64_t>(s.heads * (s.m + 1) * s.d * 8);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;

private:
    VariantInfo m_info;
};

AttentionResult StarAttention::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    requireSelfAttention(m_info.id, qkv);
    const std::int64_t heads = qkv.heads(), n = qkv.n(), d = qkv.d();
    const bool cyclic = paramBool(params, "cyclic");

    // k, v with the relay appended: [heads, n + 1, d]; relay = mean over the n tokens.
    Qkv ext;
    ext.q = qkv.q;
    ext.k = at::cat({qkv.k, qkv.k.mean(1, true)}, 1).contiguous();
    ext.v = at::cat({qkv.v, qkv.v.mean(1, true)}, 1).contiguous();
    ext.keyPadding = qkv.keyPadding;
    if (!ext.keyPadding.empty()) ext.keyPadding.push_back(0);

    PatternBuilder builder(n, n + 1, false, 4 * n);
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = i - 1; j <= i + 1; ++j) {
            if (j >= 0 && j < n) builder.add(j, PatternReason::Ring);
            else if (cyclic && n > 1) builder.add((j + n) % n, PatternReason::Ring);
        }
        builder.add(n, PatternReason::Relay);
        builder.endRow();
    }

    AttentionResult result = startResult(m_info.id, params, qkv);
    result.m = n + 1;
    const auto tiles = [&](int, SparseTiles& t) {
        for (std::int64_t i0 = 0; i0 < n; i0 += kSparseRowsPerTile) {
            const std::int64_t i1 = std::min(n, i0 + kSparseRowsPerTile);
            const std::int64_t k0 = std::max<std::int64_t>(0, i0 - 1), k1 = std::min(n, i1 + 1);
            t.addRange(i0, 1, i1 - i0, k0, 1, k1 - k0);
            t.addRange(i0, 1, i1 - i0, n, 1, 1);  // the relay column
        }
        if (cyclic) {
            t.addRange(0, 1, 1, n - 1, 1, 1);
            t.addRange(n - 1, 1, 1, 0, 1, 1);
        }
    };
    SparseKernelInput input;
    result.pattern = builder.finish();
    input.pattern = &result.pattern;
    input.tilesForHead = tiles;
    input.keyPadding = ext.keyPadding;
    input.queryPadding = qkv.keyPadding;
    input.keepWeights = ctx.keepPatternWeights || ctx.keepWeights;
    input.slot = m_info.id;
    ctx.beginStage("attention");
    runSparseKernel(ext.q, ext.k, ext.v, input, ctx, result);

    // The relay's row: the mean query attends every token and the relay itself.
    // relay_weights: [heads, n + 1]; relay_output: [heads, d]
    at::Tensor relayQuery = qkv.q.mean(1);                                                // [heads, d]
    at::Tensor relayScores = at::bmm(ext.k, relayQuery.unsqueeze(2)).squeeze(2) / std::sqrt(static_cast<double>(d));
    if (!ext.keyPadding.empty())
        for (std::int64_t j = 0; j < n; ++j)
            if (ext.keyPadding[static_cast<std::size_t>(j)]) relayScores.select(1, j).fill_(-INFINITY);
    at::Tensor relayWeights = at::softmax(relayScores, 1).contiguous();
    at::Tensor relayOutput = at::bmm(relayWeights.unsqueeze(1), ext.v).squeeze(1).contiguous();
    ctx.endStage();
    result.counters = ctx.counters();
    result.diagnostics["relay_weights"] = PlainTensor::fromF32(
        {heads, n + 1}, std::vector<float>(relayWeights.data_ptr<float>(), relayWeights.data_ptr<float>() + heads * (n + 1)));
    result.diagnostics["relay_output"] = PlainTensor::fromF32(
        {heads, d}, std::vector<float>(relayOutput.data_ptr<float>(), relayOutput.data_ptr<float>() + heads * d));
    return result;
}

}  // namespace

std::unique_ptr<Variant> makeStarAttention() { return std::make_unique<StarAttention>(); }

}  // namespace attnscope::engine
