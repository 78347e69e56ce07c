// tokenizer.json for the BERT and GPT-2/RoBERTa shapes, model-folder loading, and the refusals
// (FORMATS.md §1.7.3). The JSON documents are written here, small enough to check by hand.

#include <attnscope/model_tokenizer.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace attnscope::engine {
namespace {

using Ids = std::vector<std::int64_t>;

Ids ids(const ModelTokenizer& tok, const std::string& text, bool specials = true) {
    auto e = tok.encode(text, specials);
    EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
    Ids out;
    if (e.ok())
        for (const Token& t : e.value().tokens) out.push_back(t.id);
    return out;
}

const char* const kBertJson = R"({
  "version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [
    {"id": 0, "content": "[PAD]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 1, "content": "[UNK]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 2, "content": "[CLS]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 3, "content": "[SEP]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 4, "content": "[MASK]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
  ],
  "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
  "pre_tokenizer": {"type": "BertPreTokenizer"},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
    "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
    "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]}, "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
  "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
  "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
    "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "un": 5, "##aff": 6, "##able": 7, "cafe": 8, ",": 9}}
})";

/// GPT-2-shaped tokenizer.json over a 256-byte vocabulary: ids = byte values for printable ASCII
/// only matter here, so the vocabulary is generated, and `merges` is spliced in.
std::string byteVocab(const std::string& extra) {
    std::string json = "{";
    for (int b = 0; b < 256; ++b) {
        const char32_t c = byteLevelChar(static_cast<unsigned char>(b));
        std::string s;
        if (c < 0x80) {
            if (c == '"' || c == '\\') s += '\\';
            s += static_cast<char>(c);
        } else {
            s += static_cast<char>(0xC0 | (c >> 6));
            s += static_cast<char>(0x80 | (c & 0x3F));
        }
        json += "\"" + s + "\": " + std::to_string(b) + ", ";
    }
    return json + extra + "}";
}

std::string bpeJson(const std::string& merges, const std::string& postProcessor = R"({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true})",
                    const std::string& preTokenizer = R"({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true})",
                    const std::string& modelType = "BPE") {
    return R"({"version": "1.0", "added_tokens": [{"id": 259, "content": "<|endoftext|>", "special": true}],
      "normalizer": null, "pre_tokenizer": )" + preTokenizer + R"(, "post_processor": )" + postProcessor + R"(,
      "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
      "model": {"type": ")" + modelType + R"(", "dropout": null, "unk_token": null, "continuing_subword_prefix": "", "end_of_word_suffix": "",
        "fuse_unk": false, "byte_fallback": false, "vocab": )" + byteVocab(R"("ab": 256, "<s>": 257, "</s>": 258, "<|endoftext|>": 259)") +
           R"(, "merges": )" + merges + "}}";
}

TEST(TokenizerJson, BertShapeMatchesVocabTxt) {
    auto tok = makeTokenizerFromJson(kBertJson);
    ASSERT_TRUE(tok.ok()) << tok.error().message;
    EXPECT_EQ(tok.value()->kind(), ModelTokenizerKind::WordPiece);
    EXPECT_EQ(ids(*tok.value(), "UnAffable, Caf\xC3\xA9 [MASK]"), (Ids{2, 5, 6, 7, 9, 8, 4, 3}));
    EXPECT_EQ(tok.value()->vocabSize(), 10);
}

TEST(TokenizerJson, BertCasedNormalizer) {
    std::string json = kBertJson;
    json.replace(json.find(R"("lowercase": true)"), 17, R"("lowercase": false)");
    auto tok = makeTokenizerFromJson(json);
    ASSERT_TRUE(tok.ok()) << tok.error().message;
    EXPECT_EQ(ids(*tok.value(), "Un un", false), (Ids{1, 5}));
}

TEST(TokenizerJson, BothMergesFormsGiveTheSameTokens) {
    auto legacy = makeTokenizerFromJson(bpeJson(R"(["a b"])"));
    auto pairs = makeTokenizerFromJson(bpeJson(R"([["a", "b"]])"));
    ASSERT_TRUE(legacy.ok()) << legacy.error().message;
    ASSERT_TRUE(pairs.ok()) << pairs.error().message;
    EXPECT_EQ(ids(*legacy.value(), "abc"), (Ids{256, 'c'}));
    EXPECT_EQ(ids(*pairs.value(), "abc"), (Ids{256, 'c'}));
    EXPECT_EQ(legacy.value()->kind(), ModelTokenizerKind::ByteLevelBpe);
    // Special added tokens typed in the text stay text, as with the vocabulary files.
    EXPECT_EQ(ids(*pairs.value(), "<|endoftext|>").size(), 13u);
}

TEST(TokenizerJson, RobertaProcessingAndPrefixSpace) {
    auto tok = makeTokenizerFromJson(bpeJson(R"(["a b"])",
                                             R"({"type": "RobertaProcessing", "sep": ["</s>", 258], "cls": ["<s>", 257], "trim_offsets": true, "add_prefix_space": true})",
                                             R"({"type": "ByteLevel", "add_prefix_space": true})"));
    ASSERT_TRUE(tok.ok()) << tok.error().message;
    // " ab": Ġ, ab (no Ġa merge here) between <s> and </s>.
    EXPECT_EQ(ids(*tok.value(), "ab"), (Ids{257, ' ', 256, 258}));
    EXPECT_EQ(ids(*tok.value(), " ab", false), (Ids{' ', 256}));
}

void expectRefused(const std::string& json, ErrorCode code, const std::string& fragment) {
    auto tok = makeTokenizerFromJson(json);
    ASSERT_FALSE(tok.ok()) << "accepted; expected: " << fragment;
    EXPECT_EQ(tok.error().code, code) << tok.error().message;
    EXPECT_NE(tok.error().message.find("tokenizer.json"), std::string::npos) << tok.error().message;
    EXPECT_NE(tok.error().message.find(fragment), std::string::npos) << tok.error().message;
}

TEST(TokenizerJson, UnsupportedShapesAreRefusedByName) {
    expectRefused(R"({"model": {"type": "Unigram", "vocab": [["a", 0.0]], "unk_id": 0}})", ErrorCode::Unsupported,
                  "tokenizer type 'Unigram' not supported");
    expectRefused(R"({"model": {"type": "WordLevel", "vocab": {"a": 0}}})", ErrorCode::Unsupported,
                  "tokenizer type 'WordLevel' not supported");
    // A Metaspace pre-tokenizer makes it SentencePiece-style BPE, which a ByteLevel decoder is not.
    expectRefused(bpeJson(R"([])", "null", R"({"type": "Metaspace", "replacement": "_"})"), ErrorCode::Unsupported,
                  "decoder type 'ByteLevel' with SentencePiece-style BPE is not supported");
    std::string nfkc = bpeJson(R"([])");
    nfkc.replace(nfkc.find(R"("normalizer": null)"), 18, R"("normalizer": {"type": "NFKC"})");
    expectRefused(nfkc, ErrorCode::Unsupported, "normalizer type 'NFKC' with byte-level BPE is not supported");
    std::string dropout = bpeJson(R"([])");
    dropout.replace(dropout.find(R"("dropout": null)"), 15, R"("dropout": 0.1)");
    expectRefused(dropout, ErrorCode::Unsupported, "BPE dropout is not supported");
    std::string bertWhitespace = kBertJson;
    bertWhitespace.replace(bertWhitespace.find(R"("BertPreTokenizer")"), 18, R"("Whitespace")");
    expectRefused(bertWhitespace, ErrorCode::Unsupported, "pre-tokenizer type 'Whitespace' with WordPiece");
}

// Llama 3's and Qwen2's shape: a Split regex, then ByteLevel without its own regex; Qwen adds NFC.
std::string splitPreTokenizer(const std::string& digits, const std::string& behavior = "Isolated") {
    return R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|)" +
           digits + R"(| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": ")" + behavior +
           R"(", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]})";
}

std::vector<std::string> pieces(const ModelTokenizer& tok, const std::string& text) {
    auto encoded = tok.encode(text, false);
    EXPECT_TRUE(encoded.ok()) << encoded.error().message;
    std::vector<std::string> out;
    if (encoded.ok())
        for (const Token& t : encoded.value().tokens) out.push_back(text.substr(std::size_t(t.byteBegin), std::size_t(t.byteEnd - t.byteBegin)));
    return out;
}

TEST(TokenizerJson, SplitRegexShapeOfLlama3AndQwen) {
    // merges: "a b" only, so every other byte is its own token and pieces show the regex's cuts
    auto llama3 = makeTokenizerFromJson(bpeJson(R"(["a b"])", "null", splitPreTokenizer(R"(\\p{N}{1,3})")));
    ASSERT_TRUE(llama3.ok()) << llama3.error().message;
    // digits in threes; contractions in any case; a letter run takes one leading non-letter
    EXPECT_EQ(ids(*llama3.value(), "12345", false), (Ids{'1', '2', '3', '4', '5'}));
    EXPECT_EQ(ids(*llama3.value(), "ab", false), (Ids{256}));
    EXPECT_EQ(ids(*llama3.value(), "(ab", false), (Ids{'(', 256}));
    auto qwen = makeTokenizerFromJson(bpeJson(R"(["a b"])", "null", splitPreTokenizer(R"(\\p{N})")));
    ASSERT_TRUE(qwen.ok()) << qwen.error().message;
    // "(ab" is one pre-token, so "a b" merges inside it; " ab" too (the space is a non-letter)
    EXPECT_EQ(ids(*qwen.value(), " ab", false), (Ids{' ', 256}));
    // typed added tokens are those tokens in this shape (HF tokenizers, transformers.js)
    EXPECT_EQ(ids(*qwen.value(), "x<|endoftext|>", false), (Ids{'x', 259}));
}

TEST(TokenizerJson, SplitRegexPiecesFollowThePattern) {
    // the regex cuts show through ignore_merges: a pre-token found whole in the vocabulary is one
    // token, any other is bytes (no merges here)
    std::string whole = bpeJson(R"([])", "null", splitPreTokenizer(R"(\\p{N}{1,3})"));
    whole.replace(whole.find(R"("fuse_unk": false)"), 17, R"("fuse_unk": false, "ignore_merges": true)");
    whole.replace(whole.find(R"("ab": 256)"), 9, R"("ab": 256, "123": 260, "'S": 261, "ĊĊ": 262)");
    auto cuts = makeTokenizerFromJson(whole);
    ASSERT_TRUE(cuts.ok()) << cuts.error().message;
    EXPECT_EQ(ids(*cuts.value(), "1234", false), (Ids{260, '4'}));
    EXPECT_EQ(ids(*cuts.value(), "it'S", false), (Ids{'i', 't', 261}));  // (?i:'s) takes 'S
    EXPECT_EQ(ids(*cuts.value(), "x\n\n", false), (Ids{'x', 262}));   // \s*[\r\n]+ keeps the line ends together
    EXPECT_EQ(pieces(*cuts.value(), "ab 123"), (std::vector<std::string>{"ab", " ", "123"}));  // the space alone: digits take none
}

TEST(TokenizerJson, NfcNormalizerComposesAndMapsOffsetsBack) {
    std::string json = bpeJson(R"([])", "null", splitPreTokenizer(R"(\\p{N})"));
    json.replace(json.find(R"("normalizer": null)"), 18, R"("normalizer": {"type": "NFC"})");
    auto tok = makeTokenizerFromJson(json);
    ASSERT_TRUE(tok.ok()) << tok.error().message;
    // "xe" + U+0301 becomes "x" + U+00E9 (bytes C3 A9): 3 tokens; the two bytes of é both span the
    // decomposed source [1, 4)
    auto encoded = tok.value()->encode("xe\xCC\x81!", false);
    ASSERT_TRUE(encoded.ok());
    const auto& t = encoded.value().tokens;
    ASSERT_EQ(t.size(), 4u);
    EXPECT_EQ(t[1].id, 0xC3);  // byteVocab's ids are the byte values
    EXPECT_EQ(t[2].id, 0xA9);
    EXPECT_EQ(t[0].byteBegin, 0);
    EXPECT_EQ(t[0].byteEnd, 1);
    EXPECT_EQ(t[1].byteBegin, 1);
    EXPECT_EQ(t[2].byteEnd, 4);
    EXPECT_EQ(t[3].byteBegin, 4);
    EXPECT_EQ(t[3].byteEnd, 5);
    EXPECT_EQ(tok.value()->decode({t[0].id, t[1].id, t[2].id, t[3].id}), "x\xC3\xA9!");
}

TEST(TokenizerJson, SplitShapesItDoesNotComputeAreRefusedByName) {
    expectRefused(bpeJson(R"([])", "null", splitPreTokenizer(R"(\\p{N})", "Removed")), ErrorCode::Unsupported,
                  "a Split behavior other than \"Isolated\" is not supported");
    expectRefused(bpeJson(R"([])", "null", splitPreTokenizer(R"((\\p{N})")), ErrorCode::InvalidInput,
                  "the pre-tokenizer's Split regex does not compile");
    std::string gpt2Inside = bpeJson(R"([])", "null", splitPreTokenizer(R"(\\p{N})"));
    gpt2Inside.replace(gpt2Inside.find(R"("use_regex": false)"), 18, R"("use_regex": true)");
    expectRefused(gpt2Inside, ErrorCode::Unsupported, "GPT-2's regex after a Split is not supported");
}

TEST(TokenizerJson, MalformedFilesNameTheFieldAndTheRule) {
    expectRefused("", ErrorCode::InvalidInput, "the file is empty");
    expectRefused("{\"model\": ", ErrorCode::InvalidInput, "not valid JSON");
    expectRefused(R"({"model": {}, "model": {}})", ErrorCode::InvalidInput, "duplicate key \"model\"");
    expectRefused(R"({"version": "1.0"})", ErrorCode::InvalidInput, "$.model: is missing");
    expectRefused(R"({"model": {"vocab": {"a": 0}}})", ErrorCode::InvalidInput, "neither BPE nor WordPiece");
    expectRefused(bpeJson(R"([7])"), ErrorCode::InvalidInput, "$.model.merges[0]: a merge must be");
    expectRefused(bpeJson(R"(["a b c"])"), ErrorCode::InvalidInput, "$.model.merges[0]: expected \"left right\"");
    expectRefused(bpeJson(R"([["a", "zz"]])"), ErrorCode::InvalidInput, "$.model.merges[0]: merge part 'zz'");
    expectRefused(bpeJson(R"("a b")"), ErrorCode::InvalidInput, "$.model.merges: must be a list");
    std::string badId = kBertJson;
    badId.replace(badId.find(R"("cafe": 8)"), 9, R"("cafe": -8)");
    expectRefused(badId, ErrorCode::InvalidInput, "the id of 'cafe' is not a non-negative integer");
    std::string badTemplate = kBertJson;
    badTemplate.replace(badTemplate.find(R"("ids": [2])"), 10, R"("ids": [77])");
    expectRefused(badTemplate, ErrorCode::InvalidInput, "id 77 is outside the vocabulary");
    std::string unlisted = kBertJson;
    unlisted.replace(unlisted.find(R"({"SpecialToken": {"id": "[CLS]")"), 31, R"({"SpecialToken": {"id": "[BOS]")");
    expectRefused(unlisted, ErrorCode::InvalidInput, "special token '[BOS]' is not listed in special_tokens");
    std::string addedClash = kBertJson;
    addedClash.replace(addedClash.find(R"("id": 4, "content": "[MASK]")"), 28, R"("id": 5, "content": "[MASK]")");
    expectRefused(addedClash, ErrorCode::InvalidInput, "'[MASK]' has id 5 but the vocabulary gives it 4");
    std::string lowercaseType = kBertJson;
    lowercaseType.replace(lowercaseType.find(R"("lowercase": true)"), 17, R"("lowercase": "yes")");
    expectRefused(lowercaseType, ErrorCode::InvalidInput, "$.normalizer.lowercase: must be true or false");
}

/// A fresh folder under the system temp folder, removed at the end of the test.
class TokenizerFolder : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_dir = std::filesystem::temp_directory_path() /
                (std::string("attnscope_tok_") + info->name() + "_" + std::to_string(::getpid()));
        std::filesystem::remove_all(m_dir);
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }
    void write(const std::string& name, const std::string& text) {
        std::ofstream(m_dir / name, std::ios::binary) << text;
    }
    std::string dir() const { return m_dir.string(); }

    std::filesystem::path m_dir;
};

const char* const kVocabTxt = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nHello\n";

TEST_F(TokenizerFolder, BertVocabTxtWithTokenizerConfig) {
    write("vocab.txt", kVocabTxt);
    auto uncased = loadModelTokenizer(dir(), "bert");
    ASSERT_TRUE(uncased.ok()) << uncased.error().message;
    EXPECT_EQ(ids(*uncased.value(), "Hello"), (Ids{2, 5, 3}));

    write("tokenizer_config.json", R"({"do_lower_case": false, "model_max_length": 512})");
    auto cased = loadModelTokenizer(dir(), "bert");
    ASSERT_TRUE(cased.ok()) << cased.error().message;
    EXPECT_EQ(ids(*cased.value(), "Hello"), (Ids{2, 6, 3}));

    write("tokenizer_config.json", R"({"do_lower_case": "no"})");
    auto bad = loadModelTokenizer(dir(), "bert");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("tokenizer_config.json: do_lower_case must be true or false"), std::string::npos)
        << bad.error().message;
}

TEST_F(TokenizerFolder, TokenizerJsonIsPreferred) {
    write("vocab.txt", kVocabTxt);
    write("tokenizer.json", kBertJson);
    auto tok = loadModelTokenizer(dir(), "bert");
    ASSERT_TRUE(tok.ok()) << tok.error().message;
    EXPECT_EQ(tok.value()->vocabSize(), 10);  // the tokenizer.json vocabulary, not vocab.txt's 7

    write("tokenizer.json", R"({"model": {"type": "Unigram"}})");
    auto refused = loadModelTokenizer(dir(), "bert");
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::Unsupported);
}

TEST_F(TokenizerFolder, RobertaAndGpt2VocabularyFiles) {
    std::string vocab = byteVocab(R"("ab": 256, "<s>": 257, "</s>": 258)");
    write("vocab.json", vocab);
    write("merges.txt", "#version: 0.2\na b\n");
    auto roberta = loadModelTokenizer(dir(), "roberta");
    ASSERT_TRUE(roberta.ok()) << roberta.error().message;
    EXPECT_EQ(ids(*roberta.value(), "ab"), (Ids{257, 256, 258}));
    auto longformer = loadModelTokenizer(dir(), "longformer");
    ASSERT_TRUE(longformer.ok()) << longformer.error().message;
    EXPECT_EQ(ids(*longformer.value(), "ab"), (Ids{257, 256, 258}));
    auto gpt2 = loadModelTokenizer(dir(), "gpt2");
    ASSERT_TRUE(gpt2.ok()) << gpt2.error().message;
    EXPECT_EQ(ids(*gpt2.value(), "ab"), (Ids{256}));
}

TEST_F(TokenizerFolder, MissingAndBrokenFilesAreNamed) {
    auto none = loadModelTokenizer(dir(), "bert");
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().code, ErrorCode::NotFound);
    EXPECT_NE(none.error().message.find("no tokenizer.json or vocab.txt"), std::string::npos) << none.error().message;

    write("vocab.json", byteVocab(R"("ab": 256)"));
    auto noMerges = loadModelTokenizer(dir(), "gpt2");
    ASSERT_FALSE(noMerges.ok());
    EXPECT_EQ(noMerges.error().code, ErrorCode::NotFound);
    EXPECT_NE(noMerges.error().message.find("no merges.txt or vocab.bpe"), std::string::npos) << noMerges.error().message;

    write("merges.txt", "#version: 0.2\na\n");
    auto broken = loadModelTokenizer(dir(), "gpt2");
    ASSERT_FALSE(broken.ok());
    EXPECT_NE(broken.error().message.find("merges.txt line 2"), std::string::npos) << broken.error().message;

    auto unknownType = loadModelTokenizer(dir(), "reformer");
    ASSERT_FALSE(unknownType.ok());
    EXPECT_EQ(unknownType.error().code, ErrorCode::Unsupported);

    auto notAFolder = loadModelTokenizer(dir() + "/nothing-here", "bert");
    ASSERT_FALSE(notAFolder.ok());
    EXPECT_EQ(notAFolder.error().code, ErrorCode::NotFound);
}

}  // namespace
}  // namespace attnscope::engine
