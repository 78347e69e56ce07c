#pragma once
// Transformer-XL's attention as the run, the weights and the score terms all read it (Dai et al.
// 2019; kimiyoung/transformer-xl mem_transformer.py): which keys a query sees, the relative
// encoding R(δ) and the parameters u, v, r_δ drawn from the seed or taken from the request.
// Torch-free.

#include <attnscope/tensor.h>
#include <attnscope/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnscope::engine {
struct KeptState;
}

namespace attnscope::engine::transformer_xl {

struct Settings {
    std::int64_t segment = 64;  ///< L
    std::int64_t memory = 64;   ///< M
    bool relative = true;
    bool sameLength = false;
};
/// From resolved parameters; throws EngineError(InvalidArgument) for same_length with memory 0
/// (the reference's mask then hides every key).
Settings settingsOf(const ParamValues& params);

/// The keys query i sees, [first, i]: from max(0, s·L − M) for segment s = ⌊i / L⌋ (the memory the
/// reference caches, `_update_mems`), or with same_length from max(0, i − M + 1) (its
/// `tril(ones, −mask_shift_len)` mask: every query sees the last M keys).
std::int64_t firstKey(const Settings& s, std::int64_t i);
/// The first query of i's segment: keys before it are memory, the rest the segment's own (causal).
inline std::int64_t segmentStart(const Settings& s, std::int64_t i) { return i / s.segment * s.segment; }
/// Rows pos_keys needs: relative distances 0 … M + L − 1.
inline std::int64_t distances(const Settings& s) { return s.memory + s.segment; }

/// R(δ) of a model of width `modelDim` into out[0 … 2·⌈modelDim / 2⌉): [sin(δ f_k) | cos(δ f_k)],
/// f_k = 10000^(−2k / modelDim), concatenated as the reference's PositionalEmbedding.
void relativeEncoding(double delta, std::int64_t modelDim, float* out);
/// The length of R: 2·⌈modelDim / 2⌉ (modelDim itself when even).
inline std::int64_t encodingWidth(std::int64_t modelDim) { return 2 * ((modelDim + 1) / 2); }

/// u = r_w_bias [H, d], v = r_r_bias [H, d], pos_keys [H, M + L, d] with pos_keys[h][δ] = r_δ of
/// head h = W_r^(h) R(δ).
struct Parameters {
    PlainTensor wBias, rBias, posKeys;
};
/// Drawn from the seed: u, v entries N(0, 1) like the random projections' q and k entries; W_r
/// [H·d, |R|] entries N(0, 1 / |R|), so that r_δ's entries have variance 1/2 as R's have.
Parameters drawParameters(std::uint64_t seed, std::int64_t heads, std::int64_t d, const Settings& s);
/// The request's tensors where given (all three or none), checked against [H, d] and
/// [H, ≥ M + L, d] (pos_keys cut to M + L rows); otherwise drawParameters. Throws
/// EngineError(InvalidInput) naming the tensor and the shape it needs.
Parameters parametersFor(const std::map<std::string, PlainTensor>* inputs, std::uint64_t seed, std::int64_t heads,
                         std::int64_t d, const Settings& s);
/// The parameters a result kept (its draws r_w_bias, r_r_bias, pos_keys; transformer_xl_weights.cpp).
/// Throws EngineError(InvalidInput) naming a missing or mis-shaped one.
Parameters keptParameters(const KeptState& state, const Settings& s);

}  // namespace attnscope::engine::transformer_xl

namespace attnscope::engine::transformer_xl {

/// The scores query i gives keys first … i (out[t] for key first + t, scale applied):
/// ((q_i + u)·k_j + (q_i + v)·r_(i−j)) · scale, or q_i·k_j · scale without `relative`. q: the
/// query's d floats; keys, posKeys: the head's rows; u, v: the head's biases. `scratch` holds
/// 2·d + (i − first + 1) floats.
void rowScores(const float* q, const float* keys, const float* u, const float* v, const float* posKeys, std::int64_t d,
               std::int64_t i, std::int64_t first, bool relative, float scale, float* out, float* scratch);

}  // namespace attnscope::engine::transformer_xl
