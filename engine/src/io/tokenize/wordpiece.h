#pragma once
// BERT WordPiece: BertPreTokenizer words, then greedy longest-match-first pieces with "##"
// continuations; a word over max_input_chars_per_word characters, or one that cannot be fully
// segmented, is a single [UNK] (FORMATS.md §1.7.1).

#include "io/tokenize/tokenizer_common.h"

#include <memory>
#include <string>
#include <vector>

namespace attnscope::engine {

struct WordPieceData {
    Vocab vocab;
    WordPieceOptions options;
    std::vector<std::string> notices;
};

/// Checks the data ([UNK] and template tokens present, sane limits) and builds the tokenizer.
Result<std::shared_ptr<const ModelTokenizer>> buildWordPieceTokenizer(WordPieceData data);

/// Parses vocab.txt: id = 0-based line number, the last of duplicate lines wins. A BOM is
/// skipped; CRLF line ends are removed with a notice.
Result<Vocab> parseVocabTxt(std::string text, const std::string& source, std::vector<std::string>& notices);

}  // namespace attnscope::engine
