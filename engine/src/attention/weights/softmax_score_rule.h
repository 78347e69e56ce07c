#pragma once
// How a softmax row turns the dot products q_i · k_j into the scores it normalises, and which keys
// it sees: what `full` does (scale 1/sqrt(d), causal or not) and what a model layer's own attention
// adds (DESIGN.md "Model families"): another scale (T5: 1; Gemma: query_pre_attn_scalar^-1/2),
// soft-capping, a sliding window, a relative position bias. The run, the weights and the tests read
// this one rule, so a tile recomputed later scores every cell as the run did:
//   s = scale · q·k;  s = softcap · tanh(s / softcap) when softcap > 0;  s += bias(j − i);
//   keys j in [begin(i), end(i)), padded keys excluded; a head's sink logit (GPT-OSS) joins each
//   row's normalisation as one more key without a value, so the row's weights sum to less than 1.

#include <attnscope/attention_weights.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace attnscope::engine {

struct SoftmaxScoreRule {
    float scale = 1.0f;
    float softcap = 0.0f;  ///< > 0: scores capped as softcap · tanh(s / softcap) (Gemma 2)
    bool causal = false;
    /// > 0: a query sees the keys within W positions of its own: causal j in [p − W + 1, p],
    /// else |j − p| < W, with p = i + m − n its position among the keys (Mistral's sliding window).
    std::int64_t window = 0;
    std::int64_t n = 0, m = 0;
    /// [heads, n + m − 1] or empty: added to score (i, j) at column j − i + n − 1 (T5's bucketed
    /// relative bias, laid out by distance so that it costs O(n + m) per head).
    SharedFloats relativeBias;
    /// [heads] or empty: each head's learned sink logit, in every row's softmax beside the keys.
    SharedFloats sinks;

    /// The first key row i sees.
    std::int64_t begin(std::int64_t i) const {
        if (window <= 0) return 0;
        return std::clamp<std::int64_t>(i + (m - n) - window + 1, 0, m);
    }
    /// One past the last key row i sees.
    std::int64_t end(std::int64_t i) const {
        const std::int64_t p = i + (m - n);
        if (causal) return std::clamp<std::int64_t>(p + 1, 0, m);
        if (window > 0) return std::clamp<std::int64_t>(p + window, 0, m);
        return m;
    }
    /// The bias of row i of `head` for key j is row[j] (null when there is no bias).
    const float* biasRow(std::int64_t head, std::int64_t i) const {
        if (relativeBias.empty()) return nullptr;
        return relativeBias.data.get() + head * (n + m - 1) + (n - 1 - i);
    }
    /// The score of a dot product (before the bias).
    float score(float dot) const {
        const float s = dot * scale;
        return softcap > 0 ? softcap * std::tanh(s / softcap) : s;
    }
    bool hasSinks() const { return !sinks.empty(); }
    float sink(std::int64_t head) const { return sinks.data.get()[head]; }
    /// Folds the head's sink into a row's softmax over its keys (shift: their max, −inf for none;
    /// sum: Σ exp(s − shift)): the shift becomes max(shift, sink), the sum counts exp(sink − shift).
    /// Returns the factor the keys' normalised weights are multiplied by (their new total).
    double foldSink(std::int64_t head, float& shift, double& sum) const {
        const float z = sink(head);
        if (!(sum > 0) || !std::isfinite(shift)) {  // no key: the sink takes the whole row
            shift = z;
            sum = 1.0;
            return 0.0;
        }
        const float top = std::max(shift, z);
        const double keys = sum * std::exp(static_cast<double>(shift) - static_cast<double>(top));
        sum = keys + std::exp(static_cast<double>(z) - static_cast<double>(top));
        shift = top;
        return keys / sum;
    }
    /// True when a cell's score is more than scale · q·k (the rows then go through scoreRow).
    bool hasTerms() const { return softcap > 0 || !relativeBias.empty(); }
    /// Turns the dot products of keys [from, to) of row i (at row[0 … to − from)) into scores.
    void scoreRow(std::int64_t head, std::int64_t i, std::int64_t from, std::int64_t to, float* row) const {
        const float* bias = biasRow(head, i);
        for (std::int64_t j = from; j < to; ++j) {
            float s = score(row[j - from]);
            if (bias) s += bias[j];
            row[j - from] = s;
        }
    }
};

}  // namespace attnscope::engine
