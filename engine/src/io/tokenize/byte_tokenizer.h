#pragma once
// The tokenizer of byte-level models (Transformer-XL folders of the built-in trainer, vocab_size
// 256, no tokenizer files): each byte of the text is one token whose id is the byte's value.

#include <attnscope/model_tokenizer.h>

#include <memory>

namespace attnscope::engine {

std::shared_ptr<const ModelTokenizer> makeByteTokenizer();

}  // namespace attnscope::engine
