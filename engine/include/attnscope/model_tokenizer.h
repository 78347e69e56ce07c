#pragma once
// Exact tokenizers of trained models: BERT WordPiece and GPT-2/RoBERTa byte-level BPE, read from
// vocab.txt, encoder.json/vocab.json + vocab.bpe/merges.txt or tokenizer.json (FORMATS.md §1.7).
// Plain C++ on ICU; no Qt, no LibTorch. docs/TOKENIZERS.md records every choice where the
// reference implementations disagree.

#include <attnscope/progress.h>
#include <attnscope/result.h>
#include <attnscope/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnscope::engine {

enum class ModelTokenizerKind { WordPiece, ByteLevelBpe, Bytes, SentencePiece };

/// The tokens of one text, parallel vectors of equal length.
struct EncodedText {
    /// Token.id = vocabulary id; Token.text = the token string as in the vocabulary ("##ing",
    /// "Ġworld"); byteBegin/byteEnd = the bytes of the *input* text the token came from. Template
    /// specials have an empty span: at 0 before the text, at text.size() after it. A token that
    /// starts inside the expansion of one input character (e.g. the "i" and "̇" of lowercased "İ")
    /// shares that character's span, so spans may overlap there.
    std::vector<Token> tokens;
    std::vector<std::int64_t> typeIds;  ///< token type ids (all 0 for one segment)
    std::vector<bool> special;          ///< template specials and special tokens typed in the text
    std::vector<std::string> notices;   ///< e.g. "invalid UTF-8 at byte 12 replaced by U+FFFD"
};

/// One item of a post-processing template: the text (sequence A) or a special token.
struct TemplateItem {
    bool sequence = false;     ///< true: the encoded text goes here
    std::string token;         ///< special token string, e.g. "[CLS]" (unused for the sequence)
    std::int64_t id = -1;      ///< its id; -1 = look the token up in the vocabulary
    std::int64_t typeId = 0;
};

/// "[CLS] A [SEP]", "<s> A </s>" and "A" (no specials).
std::vector<TemplateItem> templateWithSpecials(const std::string& before, const std::string& after);

struct WordPieceOptions {
    std::string source = "vocab.txt";  ///< file name used in error messages
    bool cleanText = true;             ///< drop controls, U+0000, U+FFFD; whitespace → space
    bool handleChineseChars = true;    ///< every CJK ideograph is a word of its own
    bool lowercase = true;
    std::optional<bool> stripAccents;  ///< unset: strip exactly when lowercasing
    std::string unkToken = "[UNK]";
    std::string continuingSubwordPrefix = "##";
    std::int64_t maxInputCharsPerWord = 100;
    /// Special tokens that are never split, lowercased or stripped. When typed in the text they
    /// are recognised (as transformers' BertTokenizer does) if `recognizeSpecialTokensInText`.
    /// Entries missing from the vocabulary are ignored.
    std::vector<std::string> neverSplit = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    bool recognizeSpecialTokensInText = true;
    std::vector<TemplateItem> singleTemplate = templateWithSpecials("[CLS]", "[SEP]");
};

struct ByteLevelBpeOptions {
    std::string vocabSource = "encoder.json";  ///< file names used in error messages
    std::string mergesSource = "vocab.bpe";
    bool addPrefixSpace = false;  ///< prepend " " to text that does not start with one
    bool useRegex = true;         ///< split with the pre-tokenizer regex first
    /// The pre-tokenizer regexes (tokenizer.json Splits, e.g. Llama 3's or Qwen2's one; DeepSeek's
    /// three, each splitting the pieces the one before left, its matches and the text between
    /// them each a piece); empty: GPT-2's.
    std::vector<std::string> splitPatterns;
    bool nfc = false;             ///< NFC-normalize the text first (tokenizer.json normalizer "NFC")
    bool ignoreMerges = false;    ///< a pre-token found whole in the vocabulary is one token
    /// Special token strings (e.g. "<|endoftext|>"). Typed text is text by default, as in
    /// gpt-3-encoder and tiktoken: "<|endoftext|>" gives 7 ids, not 50256 (docs/TOKENIZERS.md).
    std::vector<std::string> specialTokens;
    bool recognizeSpecialTokensInText = false;
    std::vector<TemplateItem> singleTemplate;  ///< empty: no specials (GPT-2)
};

/// A loaded tokenizer. Immutable after construction; every member is safe to call from several
/// threads at once.
class ModelTokenizer {
public:
    virtual ~ModelTokenizer() = default;
    virtual ModelTokenizerKind kind() const = 0;
    /// Number of ids (largest id + 1); the embedding matrix must have this many rows or more.
    virtual std::int64_t vocabSize() const = 0;
    /// Tokenizes `text` (any bytes: invalid UTF-8 is replaced by U+FFFD with a notice). Errors:
    /// InvalidArgument for a text over kMaxModelTokenizerTextBytes, Cancelled when `progress`
    /// returns false (it is called about every 64 KiB).
    virtual Result<EncodedText> encode(const std::string& text, bool addSpecialTokens = true,
                                       const ProgressFn& progress = {}) const = 0;
    /// Token strings joined back into text: byte-level BPE gives the original bytes (invalid
    /// UTF-8 replaced), WordPiece joins words with spaces and glues "##" pieces. Unknown ids
    /// are skipped.
    virtual std::string decode(const std::vector<std::int64_t>& ids) const = 0;
    /// The vocabulary string of `id`; "" when out of range.
    virtual std::string tokenString(std::int64_t id) const = 0;
    /// Id of a vocabulary string, or -1.
    virtual std::int64_t tokenId(const std::string& token) const = 0;
    /// Non-fatal issues found while loading (e.g. "vocab.txt has CRLF line ends").
    virtual const std::vector<std::string>& loadNotices() const = 0;
};

/// Largest text encode() accepts (8 MiB, eight times a novel): adversarial text can give one
/// token per byte, ~64 bytes each, so this bounds the result at about 512 MiB.
constexpr std::size_t kMaxModelTokenizerTextBytes = std::size_t{8} << 20;

/// Which tokenizer files a model family reads (its declaration says which: io/families/family.h).
enum class TokenizerFiles {
    WordPiece,            ///< tokenizer.json, else vocab.txt (+ tokenizer_config.json), [CLS] … [SEP] (BERT)
    RobertaBpe,           ///< tokenizer.json, else vocab.json/encoder.json + merges.txt/vocab.bpe, <s> … </s>
    Gpt2Bpe,              ///< as RobertaBpe without a template (<|endoftext|> special)
    JsonOrSentencePiece,  ///< tokenizer.json, else tokenizer.model (SentencePiece, `bosId` first) (Llama, Mistral)
    JsonOnly,             ///< tokenizer.json (Qwen, OLMoE)
    T5SentencePiece,      ///< spiece.model (`eosId` last), else tokenizer.json (T5, Switch Transformers)
    JsonOrBytes,          ///< tokenizer.json, else UTF-8 bytes (the trainer's Transformer-XL)
    None,                 ///< no tokenizer: pictures (ViT) or a family read elsewhere
};

/// Loads the tokenizer of a model folder as `files` says (through libsentencepiece for
/// spiece.model and tokenizer.model, `bosId` first and `eosId` last, -1: none). `modelType` names
/// the model in errors. Errors name the file and the rule broken: NotFound (no tokenizer files),
/// InvalidInput (malformed file), Unsupported (a tokenizer.json model or component other than the
/// BERT and GPT-2/RoBERTa shapes).
Result<std::shared_ptr<const ModelTokenizer>> loadModelTokenizer(const std::string& folder, TokenizerFiles files,
                                                                 const std::string& modelType, std::int64_t bosId = -1,
                                                                 std::int64_t eosId = 1);
/// The same with the files of the family that reads `modelType` (io/families/family.h); Unsupported
/// for a model type no family reads.
Result<std::shared_ptr<const ModelTokenizer>> loadModelTokenizer(const std::string& folder,
                                                                 const std::string& modelType, std::int64_t bosId = -1,
                                                                 std::int64_t eosId = 1);

/// WordPiece from the text of a vocab.txt (one token per line, id = line number).
Result<std::shared_ptr<const ModelTokenizer>> makeWordPieceTokenizer(const std::string& vocabText,
                                                                     const WordPieceOptions& options = {});

/// Byte-level BPE from the text of encoder.json/vocab.json and vocab.bpe/merges.txt.
Result<std::shared_ptr<const ModelTokenizer>> makeByteLevelBpeTokenizer(
    const std::string& encoderJson, const std::string& mergesText, const ByteLevelBpeOptions& options = {});

/// Either kind from the text of a tokenizer.json; `source` names it in messages.
Result<std::shared_ptr<const ModelTokenizer>> makeTokenizerFromJson(const std::string& tokenizerJson,
                                                                    const std::string& source = "tokenizer.json");

/// GPT-2's byte → unicode table: the code point that stands for `byte` in BPE token strings
/// (e.g. ' ' → U+0120 'Ġ', '\n' → U+010A 'Ċ').
char32_t byteLevelChar(unsigned char byte);

}  // namespace attnscope::engine
