#pragma once
// Tokenizers without a vocabulary: UTF-8 bytes, Unicode code points, words. Each token keeps its
// byte span in the source text. Plain C++ (ICU for character classes), safe on any input.

#include <attnscope/progress.h>
#include <attnscope/result.h>
#include <attnscope/types.h>

#include <cstdint>
#include <string>

namespace attnscope::engine {

/// Returns the offset of the first byte that is not valid UTF-8 (overlong forms, surrogates,
/// code points above U+10FFFF and truncated sequences are invalid), or -1 when the text is valid.
std::int64_t findInvalidUtf8(const std::string& text);

/// Tokenizes `input.text`. Invalid UTF-8 is an InvalidInput error naming the byte offset, for
/// every tokenizer (bytes included), so a result never mixes valid and broken text.
/// Words: a maximal run of letters, digits and combining marks is one token; every other
/// non-space code point (punctuation, symbols, emoji) is a token of its own; white space splits
/// and is dropped. Cancellable through `progress` between chunks of the text.
Result<TokenizedInput> tokenize(const InputSpec& input, const ProgressFn& progress = {});

/// Parses "bytes" | "chars" | "words".
Result<TokenizerKind> parseTokenizerKind(const std::string& name);

}  // namespace attnscope::engine
