// `star`: the Star-Transformer's connectivity (Guo et al. 2019): each token attends its ring
// neighbours i-1, i, i+1 and a relay node. The relay is key column n (m = n + 1) whose key and
// value are the means of all tokens' keys and values (fastNLP starts the relay as the mean of
// the embeddings, padding included), so `output` is a real attention output. The relay's own
// row (mean query over [tokens; relay]) is a diagnostic. The full multi-step dynamics come later.

#include "core_torch/tensor_views.h"
#include "variants/star/star_pattern.h"
#include "variants/shared/dense_plan_run.h"
#include "variants/shared/pattern_variant.h"

#include <algorithm>

namespace attnscope::engine {
namespace {

class StarAttention final : public Variant {
public:
    double scoredKeysPerQuery(const ProblemShape&, const ParamValues&) const override {
        return 4.0;  // two neighbours, itself and the relay
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues&) const override {
        ProblemShape withRelay = s;
        withRelay.m = s.m + 1;
        // (plus the keys and values with the relay row appended)
        return patternRunBytes(withRelay, 4.0) + static_cast<std::uint64_t>(s.heads * (s.m + 1) * s.d * 8);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;
};

AttentionResult StarAttention::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    requireSelfAttention(info().id, qkv);
    const std::int64_t heads = qkv.heads(), n = qkv.n(), d = qkv.d();

    // k, v with the relay appended: [heads, n + 1, d]; relay = mean over the n tokens.
    Qkv ext;
    ext.q = qkv.q;
    const at::Tensor k = tensorOf(qkv.k), v = tensorOf(qkv.v);
    ext.k = shareTensor(at::cat({k, k.mean(1, true)}, 1));
    ext.v = shareTensor(at::cat({v, v.mean(1, true)}, 1));
    ext.keyPadding = qkv.keyPadding;
    if (!ext.keyPadding.empty()) ext.keyPadding.push_back(0);

    AttentionResult result = startResult(info().id, params, qkv);
    result.m = n + 1;
    const BlockPattern pattern = starPattern(params, heads, n);
    PatternKernelInput input;
    input.pattern = &pattern;
    input.keyPadding = ext.keyPadding;
    input.queryPadding = qkv.keyPadding;
    input.slot = info().id;
    ctx.beginStage("attention");
    runPatternKernel(ext, input, ctx, result);

    at::Tensor relayQuery = tensorOf(qkv.q).mean(1);  // [heads, d]
    at::Tensor relayScores = at::bmm(tensorOf(ext.k), relayQuery.unsqueeze(2)).squeeze(2) / std::sqrt(static_cast<double>(d));
    if (!ext.keyPadding.empty())
        for (std::int64_t j = 0; j < n; ++j)
            if (ext.keyPadding[static_cast<std::size_t>(j)]) relayScores.select(1, j).fill_(-INFINITY);
    at::Tensor relayWeights = at::softmax(relayScores, 1).contiguous();
    at::Tensor relayOutput = at::bmm(relayWeights.unsqueeze(1), tensorOf(ext.v)).squeeze(1).contiguous();
    ctx.endStage();
    result.counters = ctx.counters();
    result.diagnostics["relay_weights"] = PlainTensor::fromF32(
        {heads, n + 1}, std::vector<float>(relayWeights.data_ptr<float>(), relayWeights.data_ptr<float>() + heads * (n + 1)));
    result.diagnostics["relay_output"] = PlainTensor::fromF32(
        {heads, d}, std::vector<float>(relayOutput.data_ptr<float>(), relayOutput.data_ptr<float>() + heads * d));
    return result;
}

}  // namespace

namespace variants::star {
std::unique_ptr<Variant> kernel() { return std::make_unique<StarAttention>(); }
}  // namespace variants::star

}  // namespace attnscope::engine
