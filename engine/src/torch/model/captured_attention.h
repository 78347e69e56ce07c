#pragma once
// Attention captured from any model outside AttnScope (Hugging Face's output_attentions=True, or
// hooks on q, k, v): one safetensors file with `attentions` [layers, heads, n, n] and/or `q`, `k`,
// `v` [layers, heads, n, d], and the tokens as a JSON list of strings in its metadata ("tokens";
// optional "causal": "true"/"false", "model": a name). docs/CAPTURED_ATTENTION.md has the format
// and the Python that writes it.

#include <attnscope/result.h>
#include <attnscope/types.h>

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

struct CapturedAttention {
    std::string path;
    std::string model;         ///< metadata "model", or ""
    std::int64_t layers = 0, heads = 0, n = 0, headDim = 0;  ///< headDim 0: no q, k, v
    bool causal = false;       ///< metadata "causal", else: no weight above the diagonal
    TokenizedInput tokens;     ///< the tokens, their text the tokens joined
    std::vector<at::Tensor> attention;   ///< per layer F32 [heads, n, n]; computed from q, k when absent
    std::vector<at::Tensor> q, k, v;     ///< per layer F32 [heads, n, d]; empty without them
};

/// Reads and validates the file strictly: shapes that agree, finite values, attention rows that
/// sum to 1 within 1e-3, tokens as many as n. Refuses beyond `budget` bytes of float32. Every
/// error names the file and the tensor or metadata field at fault.
Result<CapturedAttention> readCapturedAttention(const std::string& path, std::uint64_t budget);

/// Whether `path` is a file of captured attention (not a model folder or a GGUF file, which open as checkpoints).
bool isCapturedAttentionPath(const std::string& path);

}  // namespace attnscope::engine
