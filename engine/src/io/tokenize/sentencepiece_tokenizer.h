#pragma once
// SentencePiece models — spiece.model (T5, Switch Transformers) and tokenizer.model (Llama 2,
// Mistral, TinyLlama) — through Debian's libsentencepiece, run as the attnscope-sentencepiece
// child process, so the model's own normaliser and segmentation give the ids; specials as the
// model's tokenizer adds them: T5's encoder appends `</s>`, Llama's tokenizer puts `<s>` first.

#include <attnscope/model_tokenizer.h>

#include <memory>
#include <string>

namespace attnscope::engine {

/// Loads `path` (a serialized ModelProto). When specials are added, `bosId` goes first and `eosId`
/// last (-1: none). Errors: NotFound (no file), InvalidInput (not a SentencePiece model, a special
/// id outside its pieces), naming the file.
Result<std::shared_ptr<const ModelTokenizer>> loadSentencePieceTokenizer(const std::string& path, std::int64_t bosId,
                                                                         std::int64_t eosId);

}  // namespace attnscope::engine
