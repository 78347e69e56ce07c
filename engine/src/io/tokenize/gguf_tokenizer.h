#pragma once
// The tokenizer a GGUF file carries in its metadata (tokenizer.ggml.*), as llama.cpp reads it:
// `gpt2` (byte-level BPE over `tokens` and `merges`, after the pre-tokenizer `pre` names) or
// `llama` (SentencePiece-style BPE over `tokens` ranked by `scores`, spaces as "▁", byte fallback),
// BOS and EOS as add_bos_token / add_eos_token say. Built from the same parts as a tokenizer.json
// (the byte-level one as its equivalent tokenizer.json), so the tokenizers already checked against
// the reference implementations do the work.

#include "io/checkpoint/gguf_file.h"

#include <attnscope/model_tokenizer.h>

#include <nlohmann/json.hpp>

namespace attnscope::engine {

/// The file's tokenizer. NotFound when the file has none (no tokenizer.ggml.model), Unsupported for
/// a model or pre-tokenizer llama.cpp names that is not read, InvalidInput for inconsistent lists —
/// each naming the key.
Result<std::shared_ptr<const ModelTokenizer>> makeGgufTokenizer(const GgufHeader& header, const std::string& source);

/// llama.cpp's pre-tokenizer regexes for `pre` (tokenizer.ggml.pre), applied in turn; empty for
/// GPT-2's own; false for a name that is not read.
bool ggufPreTokenizerPatterns(const std::string& pre, std::vector<std::string>& patterns);

}  // namespace attnscope::engine
