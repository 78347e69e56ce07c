#pragma once
// BertViz's neuron view as data: for one head and one query of a result, the query vector, each
// key vector, their elementwise product q ⊙ k (whose sum is the dot product), the dot scaled as the
// variant scales it, the variant's own additive terms (a model's relative bias, Transformer-XL's
// position and global terms), the score they add up to, and the weight — the result's own, exactly
// what the heatmap draws. Works on whatever a result keeps: any variant's Q and K, a model layer's
// (after its rotation, and before it too where the layer turns them), a picture's.

#include <attnscope/result.h>
#include <attnscope/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnscope::engine {

struct NeuronKey {
    std::int64_t index = 0;
    std::vector<float> key;      ///< k_j [d]
    std::vector<float> product;  ///< q_i ⊙ k_j [d]
    double dot = 0;              ///< Σ product, in float64
    double scaled = 0;           ///< dot · scale
    /// The variant's additive terms of (i, j), already scaled: "relative_bias" (a model layer's),
    /// "content_position", "global_content", "global_position" (Transformer-XL's); empty for none.
    std::map<std::string, double> terms;
    /// scaled + Σ terms, soft-capped where the variant caps (Gemma 2): what a softmax variant
    /// normalises over the allowed keys.
    double score = 0;
    float weight = 0;      ///< the result's weight (i, j)
    bool allowed = false;  ///< in the variant's pattern for this query
    /// A rotary layer's (RunResult::rotaryProfile with its vectors): k_j before the rotation,
    /// q_i ⊙ k_j before it, and their sum — what the head scores with positions removed. Empty
    /// otherwise.
    std::vector<float> keyBeforeRotation, productBeforeRotation;
    double dotBeforeRotation = 0;
};

struct NeuronTerms {
    std::string variantId;
    int head = 0;
    std::int64_t query = 0;
    double scale = 0;                ///< what the dot is multiplied by
    double softcap = 0;              ///< > 0: score = softcap · tanh((scaled + terms) / softcap)
    std::vector<float> queryVector;  ///< q_i [d]
    std::vector<NeuronKey> keys;     ///< keys [k0, k1) in order
    /// q_i before a rotary layer's rotation (empty when the result has none): the rotation turns
    /// each pair of features by the position times its frequency, so q·k after it depends on i − j.
    std::vector<float> queryBeforeRotation;
    bool hasRotation() const { return !queryBeforeRotation.empty(); }
};

/// The terms of result `resultIndex`, `head`, `query` against keys [k0, k1). Errors name the
/// problem: InvalidArgument (an index or range outside the result, more than 65,536 keys at once),
/// InvalidInput (a result that kept no Q and K).
Result<NeuronTerms> neuronTerms(const RunResult& run, std::size_t resultIndex, int head, std::int64_t query, std::int64_t k0,
                                std::int64_t k1);

}  // namespace attnscope::engine
