#pragma once
// The watched layer's own attention of a sequence while it is generated, as a run the views show
// (GeneratedToken::soFar): the prompt's rows recomputed on demand from the forward's queries and
// keys under the layer's own rule, each later row as the decoder step computed it when it wrote the
// next token. A snapshot per token shares the rows before it, so following the generation costs a
// pointer per row, not a copy of the matrix.

#include <attnscope/attention_weights.h>
#include <attnscope/model.h>
#include <attnscope/types.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace attnscope::engine {

class GenerationSoFar {
public:
    /// q, k: the prompt's queries and keys of `layer` as its attention used them ([heads, p, d],
    /// after the rotation, each key/value head repeated for its query heads); `promptTokens` its p
    /// tokens. Throws EngineError (InvalidArgument) when the layer's own attention is not the
    /// softmax rule the decoder step computes.
    GenerationSoFar(const ModelInfo& info, int layer, SharedFloats q, SharedFloats k, std::vector<Token> promptTokens);

    /// The prompt's last row [heads, p]: what the first generated token was written from.
    std::vector<float> promptLastRow() const;
    /// Appends the next position p + i: the token written there and its row [heads, p + i + 1],
    /// computed when the token after it was written.
    void addRow(std::vector<float> row, Token token);
    /// The run of every row known so far: queries and keys are the sequence up to the position the
    /// newest token was written from.
    std::shared_ptr<const RunResult> snapshot() const;

private:
    RunResult m_base;  ///< model, layer and own-attention fields; no results, no tokens
    LayerAttentionInfo m_own;
    std::shared_ptr<const AttentionWeights> m_prompt;
    std::vector<std::shared_ptr<const std::vector<float>>> m_rows;  ///< row p + i: [heads, p + i + 1]
    std::vector<Token> m_tokens;
    std::int64_t m_promptLength = 0, m_window = 0;
    ReasonBits m_reason = 0;
};

}  // namespace attnscope::engine
