#pragma once
// Transformer-XL's four score terms over a rectangle of one head (Dai et al. 2019, §3.3):
//   (a) q_i·k_j         content              (b) q_i·r_(i−j)  content-dependent position
//   (c) u·k_j           global content bias  (d) v·r_(i−j)    global position bias
// each divided by sqrt(d), so a + b + c + d is the score the softmax of row i sees.

#include <attnscope/result.h>
#include <attnscope/types.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace attnscope::engine {

struct ScoreTerms {
    int head = 0;
    std::int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;  ///< queries [r0, r1), keys [c0, c1)
    /// [rows x cols] each; NaN where query r0 + row does not see key c0 + col. Without `relative`
    /// b, c and d are 0 where the key is seen.
    std::vector<float> content, contentPosition, globalContent, globalPosition;
    std::int64_t rows() const { return r1 - r0; }
    std::int64_t cols() const { return c1 - c0; }
};

/// How a `transformer_xl` result reads its input: segments of L queries, each seeing its memory
/// (keys before the segment) and itself causally.
struct SegmentLayout {
    std::int64_t n = 0, segment = 0, memory = 0;
    bool relative = true, sameLength = false;
    std::int64_t segments() const { return (n + segment - 1) / segment; }
    std::int64_t segmentStart(std::int64_t s) const { return s * segment; }
    std::int64_t segmentEnd(std::int64_t s) const { return std::min(n, (s + 1) * segment); }
    /// The first key query i sees (the last it sees is i).
    std::int64_t firstKey(std::int64_t i) const;
};
/// Its layout, from the parameters it ran with; nullopt for another variant's result.
std::optional<SegmentLayout> readSegmentLayout(const AttentionResult& result);

/// The terms of run.results[index], a `transformer_xl` result, from the run's Q, K and the result's
/// u, v, pos_keys. Errors: InvalidArgument (another variant, a head or rectangle outside the
/// result, more than 4M cells), InvalidInput (its draws missing or mis-shaped).
Result<ScoreTerms> transformerXlScoreTerms(const RunResult& run, std::size_t index, int head, std::int64_t r0,
                                           std::int64_t r1, std::int64_t c0, std::int64_t c1);

}  // namespace attnscope::engine
