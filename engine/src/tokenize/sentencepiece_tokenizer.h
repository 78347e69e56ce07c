#pragma once
// SentencePiece models (spiece.model: T5 and Switch Transformers) through Debian's libsentencepiece,
// so the model's own normaliser and unigram segmentation give the ids; the encoder's template is
// the text followed by `</s>`, as T5's tokenizer adds it.

#include <attnscope/model_tokenizer.h>

#include <memory>
#include <string>

namespace attnscope::engine {

/// Loads `path` (a serialized ModelProto). `eosId` is appended when specials are added (-1: none).
/// Errors: NotFound (no file), InvalidInput (not a SentencePiece model), naming the file.
Result<std::shared_ptr<const ModelTokenizer>> loadSentencePieceTokenizer(const std::string& path, std::int64_t eosId);

}  // namespace attnscope::engine
