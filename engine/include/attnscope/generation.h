#pragma once
// Text generation with the open model (Engine::generate): the prompt through the model once, then
// one token at a time with a key/value cache over the weights as stored (a quantized GGUF file is
// multiplied in place, never converted whole), greedy or seeded sampling, stopping at the end-of-
// text token. What the model looked at while it wrote each token is the attention of the whole
// sequence, which a run on the prompt and generated ids then shows (ModelLayerSource::ids).

#include <attnscope/progress.h>
#include <attnscope/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnscope::engine {

struct GenerateRequest {
    std::string prompt;                 ///< tokenized with the model's own tokenizer (specials added)
    std::vector<std::int64_t> promptIds;  ///< the prompt as vocabulary ids instead (the text is then not read)
    std::int64_t maxNewTokens = 32;
    double temperature = 0;             ///< 0: greedy (the most likely token); > 0: sampled from softmax(logits / T)
    std::int64_t topK = 0;              ///< sample among the K most likely only; 0: all
    std::uint64_t seed = 0;             ///< the sampling's draws (the same seed, the same text)
    bool stopAtEos = true;              ///< end at the model's end-of-text token (not written after it)
    /// The layer whose attention is reported with each written token (GeneratedToken::attention); -1: none.
    std::int64_t watchLayer = -1;
    /// With watchLayer: each token also carries GeneratedToken::soFar, the layer's attention of the
    /// sequence so far as a run the views show (the window's heatmap following the generation).
    bool liveResults = false;
};

/// A position the model looked at: its index in the sequence, its text, its weight (mean over heads).
struct LookedAt {
    std::int64_t position = 0;
    std::string text;
    float weight = 0;
};

/// One token as it is generated.
struct GeneratedToken {
    std::int64_t id = 0;
    std::string text;      ///< its text as decoded in context (may be empty for part of a character)
    std::int64_t index = 0;  ///< 0 for the first generated token
    /// With GenerateRequest::watchLayer: that layer's attention row, per head, of the position the
    /// token was written from (the one before it) over every position so far [heads, position + 1]:
    /// what the model looked at when it wrote this token.
    std::vector<float> attention;
    std::vector<LookedAt> strongest;  ///< of that row, the three largest means over heads
    /// With GenerateRequest::liveResults: the watched layer's own attention (results[0],
    /// ownAttention = 0) of the sequence up to the position this token was written from — the
    /// prompt's rows as the layer computes them, each later row as it was computed while writing —
    /// so its last row is `attention`. Immutable, shared with the later tokens' runs.
    std::shared_ptr<const RunResult> soFar;
};

/// Called after each generated token; return false to stop (what Esc and Ctrl-C do).
using GeneratedTokenFn = std::function<bool(const GeneratedToken& token)>;

struct GenerateResult {
    std::vector<std::int64_t> promptIds, generatedIds;
    std::string prompt;         ///< as given
    std::string generatedText;  ///< the generated ids decoded (the end-of-text token left out)
    bool stoppedAtEos = false;
    bool stoppedByCaller = false;
    double promptSeconds = 0, generateSeconds = 0;  ///< the prompt's pass; the tokens after it
    std::vector<std::string> notices;
};

}  // namespace attnscope::engine
