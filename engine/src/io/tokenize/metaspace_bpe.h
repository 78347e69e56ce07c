#pragma once
// SentencePiece-style BPE from tokenizer.json (Llama 2, Mistral, TinyLlama): spaces become "▁",
// a "▁" is put before each stretch of text, BPE merges over characters, and a character the
// vocabulary lacks becomes its UTF-8 bytes as "<0xNN>" tokens (byte_fallback) or the unknown
// token (consecutive unknowns fused into one with fuse_unk). docs/TOKENIZERS.md records the shapes.

#include "io/tokenize/byte_level_bpe.h"
#include "io/tokenize/tokenizer_common.h"

#include <memory>
#include <string>
#include <vector>

namespace attnscope::engine {

/// When a "▁" goes before a stretch of text (the pieces between typed special tokens).
enum class MetaspacePrepend {
    Always,     ///< before every stretch, whatever it starts with (the normalizer's Prepend)
    IfMissing,  ///< before every stretch not starting with "▁" once spaces are replaced (Metaspace "always")
    First,      ///< as IfMissing, but only for the stretch at the start of the text (Metaspace "first")
    Never,
};

struct MetaspaceBpeOptions {
    std::string source = "tokenizer.json";  ///< named in messages
    std::string replacement = "\u2581";     ///< what a space becomes
    MetaspacePrepend prepend = MetaspacePrepend::Always;
    bool splitAtReplacement = false;  ///< Metaspace split: each "▁" starts a new piece
    bool byteFallback = false;
    bool fuseUnk = false;
    std::string unkToken;  ///< "" when the model has none
    bool ignoreMerges = false;
    /// Added tokens, each recognised where it is typed in the text (HF tokenizers and transformers.js).
    std::vector<std::string> specialTokens;
    std::vector<TemplateItem> singleTemplate;
};

struct MetaspaceBpeData {
    Vocab vocab;
    std::vector<MergeRule> merges;  ///< in rank order
    std::vector<bool> special;      ///< id → left out when decoding (added tokens marked special)
    MetaspaceBpeOptions options;
};

/// Checks the data (merge parts and results in the vocabulary, the unknown token and template
/// tokens present) and builds the tokenizer.
Result<std::shared_ptr<const ModelTokenizer>> buildMetaspaceBpeTokenizer(MetaspaceBpeData data);

}  // namespace attnscope::engine
