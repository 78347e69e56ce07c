#pragma once
// GPT-2/RoBERTa byte-level BPE: bytes → table characters, the GPT-2 pre-tokenizer regex, then BPE
// merges per pre-token (FORMATS.md §1.7.2).

#include "io/tokenize/tokenizer_common.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace attnscope::engine {

/// One merge rule and where it came from ("vocab.bpe line 7"), for messages.
struct MergeRule {
    std::string left;
    std::string right;
    std::string where;
    /// Its priority when several merges share one (SentencePiece's equal scores: leftmost first);
    /// -1: its place in the list.
    std::int32_t rank = -1;
};

/// Everything a byte-level BPE tokenizer is built from, whatever the files.
struct ByteLevelBpeData {
    Vocab vocab;
    std::vector<MergeRule> merges;  ///< in rank order
    ByteLevelBpeOptions options;
    std::vector<std::string> notices;
};

/// Checks the data (every byte symbol, merge part and merge result in the vocabulary; template
/// tokens present) and builds the tokenizer.
Result<std::shared_ptr<const ModelTokenizer>> buildByteLevelBpeTokenizer(ByteLevelBpeData data);

/// Parses encoder.json / vocab.json: one object {token: id}, ids unique non-negative integers.
Result<Vocab> parseBpeVocabJson(std::string text, const std::string& source);

/// Parses vocab.bpe / merges.txt: an optional "#version" first line, then "left right" per line.
/// CRLF line ends are accepted with a notice.
Result<std::vector<MergeRule>> parseMergesText(std::string text, const std::string& source,
                                               std::vector<std::string>& notices);

/// Builds the vocabulary from a {token: id} JSON object (also used for tokenizer.json).
Result<Vocab> vocabFromJsonObject(const nlohmann::json& object, const std::string& where);

}  // namespace attnscope::engine
