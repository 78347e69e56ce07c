// `star`: the Star-Transformer's connectivity (Guo et al. 2019): each token attends its ring
// neighbours i-1, i, i+1 and a relay node. The relay is key column n (m = n + 1) whose key and
// value are the means of all tokens' keys and values (fastNLP starts the relay as the mean of
// the embeddings, padding included), so `output` is a real attention output. The relay's own
// row (mean query over [tokens; relay]) is a diagnostic. Plain C++ (the dynamics over T cycles
// are Engine::runStar's).

#include "attention/variants/star/star_pattern.h"
#include "attention/variants/shared/dense_plan_run.h"
#include "attention/variants/shared/pattern_variant.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

namespace attnscope::engine {
namespace {

// [heads, n, d] with one more row per head: the mean of the head's n rows (summed in double).
SharedFloats withMeanRow(const SharedFloats& x) {
    const std::int64_t heads = x.shape[0], n = x.shape[1], d = x.shape[2];
    auto out = std::shared_ptr<float[]>(new float[static_cast<std::size_t>(heads * (n + 1) * d)]);
    std::vector<double> sum(static_cast<std::size_t>(d));
    for (std::int64_t h = 0; h < heads; ++h) {
        const float* in = x.data.get() + h * n * d;
        float* to = out.get() + h * (n + 1) * d;
        std::copy(in, in + n * d, to);
        std::fill(sum.begin(), sum.end(), 0.0);
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t c = 0; c < d; ++c) sum[static_cast<std::size_t>(c)] += in[i * d + c];
        for (std::int64_t c = 0; c < d; ++c) to[n * d + c] = static_cast<float>(sum[static_cast<std::size_t>(c)] / static_cast<double>(n));
    }
    return SharedFloats{{heads, n + 1, d}, std::shared_ptr<const float>(out, out.get())};
}

// The relay's own row per head: the mean query against every key and the relay (padded keys left
// out), its softmax weights [heads, n + 1] and output [heads, d].
void relayRow(const Qkv& qkv, const Qkv& ext, std::vector<float>& weights, std::vector<float>& output) {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), d = qkv.d(), m = n + 1;
    weights.assign(static_cast<std::size_t>(heads * m), 0.0f);
    output.assign(static_cast<std::size_t>(heads * d), 0.0f);
    std::vector<double> query(static_cast<std::size_t>(d)), scores(static_cast<std::size_t>(m));
    for (std::int64_t h = 0; h < heads; ++h) {
        const float* q = qkv.qHead(h);
        std::fill(query.begin(), query.end(), 0.0);
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t c = 0; c < d; ++c) query[static_cast<std::size_t>(c)] += q[i * d + c];
        for (double& c : query) c /= static_cast<double>(n);
        const float* k = ext.kHead(h);
        double high = -std::numeric_limits<double>::infinity();
        for (std::int64_t j = 0; j < m; ++j) {
            const bool padded = j < n && !ext.keyPadding.empty() && ext.keyPadding[static_cast<std::size_t>(j)];
            double dot = 0;
            for (std::int64_t c = 0; c < d; ++c) dot += query[static_cast<std::size_t>(c)] * k[j * d + c];
            scores[static_cast<std::size_t>(j)] = padded ? -std::numeric_limits<double>::infinity() : dot / std::sqrt(static_cast<double>(d));
            high = std::max(high, scores[static_cast<std::size_t>(j)]);
        }
        double sum = 0;
        for (double& s : scores) sum += (s = std::exp(s - high));
        const float* v = ext.vHead(h);
        for (std::int64_t j = 0; j < m; ++j) {
            const double w = scores[static_cast<std::size_t>(j)] / sum;
            weights[static_cast<std::size_t>(h * m + j)] = static_cast<float>(w);
            for (std::int64_t c = 0; c < d; ++c) output[static_cast<std::size_t>(h * d + c)] += static_cast<float>(w * v[j * d + c]);
        }
    }
}

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
    ext.k = withMeanRow(qkv.k);
    ext.v = withMeanRow(qkv.v);
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
    std::vector<float> relayWeights, relayOutput;
    relayRow(qkv, ext, relayWeights, relayOutput);
    ctx.endStage();
    result.counters = ctx.counters();
    result.diagnostics["relay_weights"] = PlainTensor::fromF32({heads, n + 1}, std::move(relayWeights));
    result.diagnostics["relay_output"] = PlainTensor::fromF32({heads, d}, std::move(relayOutput));
    return result;
}

}  // namespace

namespace variants::star {
std::unique_ptr<Variant> kernel() { return std::make_unique<StarAttention>(); }
}  // namespace variants::star

}  // namespace attnscope::engine
