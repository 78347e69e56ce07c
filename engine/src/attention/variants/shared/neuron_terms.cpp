// The neuron view's data (attnscope/neuron_terms.h): per key, q ⊙ k and its sum in float64, the
// variant's scale and additive terms read from what the result keeps, and the result's own weight.

#include <attnscope/neuron_terms.h>
#include <attnscope/score_terms.h>

#include "base/api/param_access.h"
#include "attention/variants/model_softmax/model_softmax_rule.h"

#include <cmath>

namespace attnscope::engine {
namespace {

constexpr std::int64_t kMaxKeys = 65536;

double paramOr(const ParamValues& params, const char* name, double otherwise) {
    return params.count(name) ? paramFloat(params, name) : otherwise;
}

// What the variant multiplies q · k by: a model layer's own scale where it has one, else 1/√d.
double scaleOf(const AttentionResult& r) {
    const double own = r.variantId == "model_softmax" ? paramOr(r.params, "scale", 0.0) : 0.0;
    return own > 0 ? own : 1.0 / std::sqrt(static_cast<double>(r.d));
}

// Key j of `head` as the run scored it: the file's K, or for Star-Transformer's relay (the key
// after the n tokens) the mean of the head's keys, as its run appends it.
std::vector<float> keyVector(const RunResult& run, const AttentionResult& r, int head, std::int64_t j) {
    const std::int64_t stored = run.k.shape[1], d = r.d;
    std::vector<float> key(static_cast<std::size_t>(d), 0.0f);
    const float* k = run.k.data.get() + head * stored * d;
    if (j < stored) {
        std::copy(k + j * d, k + (j + 1) * d, key.begin());
        return key;
    }
    for (std::int64_t c = 0; c < d; ++c) {
        double sum = 0;
        for (std::int64_t t = 0; t < stored; ++t) sum += k[t * d + c];
        key[static_cast<std::size_t>(c)] = static_cast<float>(sum / static_cast<double>(stored));
    }
    return key;
}

// The variant's own additive terms of row i, keys [k0, k1): a model layer's relative bias, or
// Transformer-XL's position and global terms.
Result<void> addTerms(const RunResult& run, std::size_t index, int head, std::int64_t i, NeuronTerms& out) {
    const AttentionResult& r = run.results[index];
    if (r.variantId == "model_softmax") {
        if (const auto it = r.diagnostics.find(kRelativeBias); it != r.diagnostics.end() && it->second.dtype == DType::F32 &&
                                                                it->second.shape == std::vector<std::int64_t>{r.heads, r.n + r.m - 1})
            for (NeuronKey& key : out.keys)
                key.terms["relative_bias"] = it->second.f32[static_cast<std::size_t>(head * (r.n + r.m - 1) + key.index - i + r.n - 1)];
        out.softcap = paramOr(r.params, "softcap", 0.0);
    } else if (r.variantId == "transformer_xl") {
        const std::int64_t k0 = out.keys.front().index, k1 = out.keys.back().index + 1;
        auto t = transformerXlScoreTerms(run, index, head, i, i + 1, k0, k1);
        if (!t) return t.error();
        for (NeuronKey& key : out.keys) {
            const auto cell = static_cast<std::size_t>(key.index - k0);
            if (std::isnan(t->content[cell])) continue;  // (outside the segment's keys)
            key.terms["content_position"] = t->contentPosition[cell];
            key.terms["global_content"] = t->globalContent[cell];
            key.terms["global_position"] = t->globalPosition[cell];
        }
    }
    return {};
}

// A rotary layer's q and k before the rotation, when the result kept them for its Q's shape.
void addBeforeRotation(const RunResult& run, const AttentionResult& r, int head, std::int64_t i, NeuronTerms& out) {
    if (!run.rotaryProfile) return;
    const RotaryDistanceProfile& p = *run.rotaryProfile;
    const auto size = static_cast<std::size_t>(p.heads * p.n * p.headDim);
    if (p.headDim != r.d || p.n != r.n || r.m != r.n || head >= p.heads || p.unrotatedQ.size() != size || p.unrotatedK.size() != size)
        return;
    const float* q = p.unrotatedQ.data() + (head * p.n + i) * p.headDim;
    out.queryBeforeRotation.assign(q, q + p.headDim);
    for (NeuronKey& key : out.keys) {
        const float* k = p.unrotatedK.data() + (head * p.n + key.index) * p.headDim;
        key.keyBeforeRotation.assign(k, k + p.headDim);
        key.productBeforeRotation.resize(static_cast<std::size_t>(p.headDim));
        for (std::int64_t c = 0; c < p.headDim; ++c) {
            key.productBeforeRotation[static_cast<std::size_t>(c)] = q[c] * k[c];
            key.dotBeforeRotation += static_cast<double>(q[c]) * k[c];
        }
    }
}

}  // namespace

Result<NeuronTerms> neuronTerms(const RunResult& run, std::size_t index, int head, std::int64_t query, std::int64_t k0,
                                std::int64_t k1) {
    if (index >= run.results.size())
        return makeError(ErrorCode::InvalidArgument, "neuron: result " + std::to_string(index) + " is outside the file's " +
                                                         std::to_string(run.results.size()) + " results");
    const AttentionResult& r = run.results[index];
    if (head < 0 || head >= r.heads)
        return makeError(ErrorCode::InvalidArgument, "neuron: head " + std::to_string(head) + " is outside [0, " + std::to_string(r.heads - 1) + "]");
    if (query < 0 || query >= r.n)
        return makeError(ErrorCode::InvalidArgument, "neuron: query " + std::to_string(query) + " is outside [0, " + std::to_string(r.n - 1) + "]");
    if (k0 < 0 || k0 >= k1 || k1 > r.m)
        return makeError(ErrorCode::InvalidArgument, "neuron: keys " + std::to_string(k0) + ":" + std::to_string(k1) + " are not a range inside [0, " +
                                                         std::to_string(r.m) + ")");
    if (k1 - k0 > kMaxKeys)
        return makeError(ErrorCode::InvalidArgument, "neuron: at most 65,536 keys at once (ask for a range with --keys)");
    // (Star-Transformer's relay is one key past the stored ones: the mean of them, as its run appends it)
    const bool withRelay = r.variantId == "star" && !run.k.empty() && run.k.shape.size() == 3 && r.m == run.k.shape[1] + 1;
    if (run.q.empty() || run.k.empty() || run.q.shape.size() != 3 || run.k.shape.size() != 3 || run.q.shape[2] != r.d ||
        run.q.shape[1] != r.n || (run.k.shape[1] != r.m && !withRelay) || !r.weights)
        return makeError(ErrorCode::InvalidInput, "neuron: the result kept no Q and K of its shape (a file written without them)");

    NeuronTerms out;
    out.variantId = r.variantId;
    out.head = head;
    out.query = query;
    out.scale = scaleOf(r);
    const float* q = run.q.data.get() + (head * r.n + query) * r.d;
    out.queryVector.assign(q, q + r.d);
    const WeightTile tile = r.weights->tile(head, query, query + 1, k0, k1, true);
    for (std::int64_t j = k0; j < k1; ++j) {
        NeuronKey key;
        key.index = j;
        key.key = keyVector(run, r, head, j);
        key.product.resize(static_cast<std::size_t>(r.d));
        for (std::int64_t c = 0; c < r.d; ++c) {
            key.product[static_cast<std::size_t>(c)] = q[c] * key.key[static_cast<std::size_t>(c)];
            key.dot += static_cast<double>(q[c]) * key.key[static_cast<std::size_t>(c)];
        }
        key.scaled = key.dot * out.scale;
        key.weight = tile.at(query, j);
        key.allowed = tile.reasons[static_cast<std::size_t>(j - k0)] != 0;
        out.keys.push_back(std::move(key));
    }
    if (auto terms = addTerms(run, index, head, query, out); !terms) return terms.error();
    addBeforeRotation(run, r, head, query, out);
    for (NeuronKey& key : out.keys) {
        double s = key.scaled;
        for (const auto& [name, value] : key.terms) s += value;
        // (Gemma 2 caps the scaled dot, then adds the bias: attention/weights/softmax_score_rule.h)
        if (out.softcap > 0) {
            const double bias = key.terms.count("relative_bias") ? key.terms.at("relative_bias") : 0.0;
            s = out.softcap * std::tanh(key.scaled / out.softcap) + bias;
        }
        key.score = s;
    }
    return out;
}

}  // namespace attnscope::engine
