// BERT WordPiece on a small vocabulary written here; every expected id and byte span is worked
// out by hand from FORMATS.md §1.7.1 (byte escapes keep the test independent of the source
// charset).

#include <attnscope/model_tokenizer.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace attnscope::engine {
namespace {

// Line number = id.
const char* const kVocabLines[] = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",                    // 0-4
    "un", "##aff", "##able", "the", "cafe",                          // 5-9
    "naive", ",", ".", "!", "$",                                      // 10-14
    "hello", "world", "\xCF\x83\xCE\xB1\xCF\x82", "i", "##\xCC\x87",  // 15-19: σας, i, ##U+0307
    "istanbul", "\xE4\xB8\xAD", "\xE5\x9B\xBD", "a", "##a",           // 20-24: 中 国
    "^", "`", "##s", "##stanbul", "caf",                              // 25-29
    "##\xC3\xA9",                                                     // 30: ##é
};

std::string vocabText() {
    std::string text;
    for (const char* line : kVocabLines) text += std::string(line) + "\n";
    return text;
}

std::shared_ptr<const ModelTokenizer> makeTokenizer(const WordPieceOptions& options = {}) {
    auto tokenizer = makeWordPieceTokenizer(vocabText(), options);
    EXPECT_TRUE(tokenizer.ok()) << (tokenizer.ok() ? "" : tokenizer.error().message);
    return tokenizer.ok() ? tokenizer.value() : nullptr;
}

EncodedText encodeOk(const ModelTokenizer& tokenizer, const std::string& text, bool specials = false) {
    auto encoded = tokenizer.encode(text, specials);
    EXPECT_TRUE(encoded.ok()) << (encoded.ok() ? "" : encoded.error().message);
    return encoded.ok() ? encoded.value() : EncodedText{};
}

std::vector<std::int64_t> ids(const EncodedText& e) {
    std::vector<std::int64_t> out;
    for (const Token& t : e.tokens) out.push_back(t.id);
    return out;
}

std::vector<std::pair<std::int64_t, std::int64_t>> spans(const EncodedText& e) {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (const Token& t : e.tokens) out.emplace_back(t.byteBegin, t.byteEnd);
    return out;
}

using Spans = std::vector<std::pair<std::int64_t, std::int64_t>>;
using Ids = std::vector<std::int64_t>;

TEST(WordPiece, GreedyLongestMatchWithContinuations) {
    const auto tok = makeTokenizer();
    const EncodedText e = encodeOk(*tok, "unaffable", true);
    EXPECT_EQ(ids(e), (Ids{2, 5, 6, 7, 3}));
    EXPECT_EQ(e.tokens[2].text, "##aff");
    EXPECT_EQ(spans(e), (Spans{{0, 0}, {0, 2}, {2, 5}, {5, 9}, {9, 9}}));
    EXPECT_EQ(e.special, (std::vector<bool>{true, false, false, false, true}));
    EXPECT_EQ(e.typeIds, (Ids{0, 0, 0, 0, 0}));
    EXPECT_EQ(tok->kind(), ModelTokenizerKind::WordPiece);
    EXPECT_EQ(tok->vocabSize(), 31);
}

TEST(WordPiece, LowercasesAndStripsAccents) {
    const auto tok = makeTokenizer();
    // "UnAffable Café naïve": é and ï are two bytes each.
    const EncodedText e = encodeOk(*tok, "UnAffable Caf\xC3\xA9 na\xC3\xAFve");
    EXPECT_EQ(ids(e), (Ids{5, 6, 7, 9, 10}));
    EXPECT_EQ(spans(e), (Spans{{0, 2}, {2, 5}, {5, 9}, {10, 15}, {16, 22}}));
}

TEST(WordPiece, StripAccentsFalseKeepsThem) {
    WordPieceOptions options;
    options.stripAccents = false;
    const auto tok = makeTokenizer(options);
    // "café" lowercased keeps é: caf + ##é.
    const EncodedText e = encodeOk(*tok, "CAF\xC3\x89");
    EXPECT_EQ(ids(e), (Ids{29, 30}));
    EXPECT_EQ(spans(e), (Spans{{0, 3}, {3, 5}}));
}

TEST(WordPiece, CasedVocabularyDoesNotLowercase) {
    WordPieceOptions options;
    options.lowercase = false;
    const auto tok = makeTokenizer(options);
    EXPECT_EQ(ids(encodeOk(*tok, "Hello hello")), (Ids{1, 15}));
    // No accent stripping either when not lowercasing (strip_accents unset).
    EXPECT_EQ(ids(encodeOk(*tok, "caf\xC3\xA9")), (Ids{29, 30}));
}

TEST(WordPiece, CjkIdeographsAreWordsOfTheirOwn) {
    const auto tok = makeTokenizer();
    // "a中国a": 中 and 国 are 3 bytes each.
    const EncodedText e = encodeOk(*tok, "a\xE4\xB8\xAD\xE5\x9B\xBD" "a");
    EXPECT_EQ(ids(e), (Ids{23, 21, 22, 23}));
    EXPECT_EQ(spans(e), (Spans{{0, 1}, {1, 4}, {4, 7}, {7, 8}}));
}

TEST(WordPiece, PunctuationSplitsIncludingSymbolsAsciiCountsAsPunctuation) {
    const auto tok = makeTokenizer();
    const EncodedText e = encodeOk(*tok, "$hello, world!^`");
    EXPECT_EQ(ids(e), (Ids{14, 15, 11, 16, 13, 25, 26}));
    EXPECT_EQ(spans(e), (Spans{{0, 1}, {1, 6}, {6, 7}, {8, 13}, {13, 14}, {14, 15}, {15, 16}}));
}

TEST(WordPiece, HundredCharacterWordLimit) {
    const auto tok = makeTokenizer();
    const EncodedText hundred = encodeOk(*tok, std::string(100, 'a'));
    ASSERT_EQ(hundred.tokens.size(), 100u);
    EXPECT_EQ(hundred.tokens[0].id, 23);
    EXPECT_EQ(hundred.tokens[99].id, 24);
    EXPECT_EQ(spans(hundred)[99], (std::pair<std::int64_t, std::int64_t>{99, 100}));

    const EncodedText over = encodeOk(*tok, "the " + std::string(101, 'a') + " the");
    EXPECT_EQ(ids(over), (Ids{8, 1, 8}));
    EXPECT_EQ(spans(over)[1], (std::pair<std::int64_t, std::int64_t>{4, 105}));
}

TEST(WordPiece, UnsegmentableWordIsOneUnk) {
    const auto tok = makeTokenizer();
    // "unaffablex": un ##aff ##able, then "##x" is missing → the whole word is [UNK].
    const EncodedText e = encodeOk(*tok, "hello unaffablex");
    EXPECT_EQ(ids(e), (Ids{15, 1}));
    EXPECT_EQ(e.tokens[1].text, "[UNK]");
    EXPECT_EQ(spans(e)[1], (std::pair<std::int64_t, std::int64_t>{6, 16}));
}

TEST(WordPiece, GreekFinalSigma) {
    const auto tok = makeTokenizer();
    // "ΣΑΣ" lowercases to "σας" (final sigma), as Python and ICU's root locale do.
    const EncodedText e = encodeOk(*tok, "\xCE\xA3\xCE\x91\xCE\xA3");
    EXPECT_EQ(ids(e), (Ids{17}));
    EXPECT_EQ(spans(e), (Spans{{0, 6}}));
    // Followed by a period (case-ignorable) it is still final: σας + .
    EXPECT_EQ(ids(encodeOk(*tok, "\xCE\xA3\xCE\x91\xCE\xA3.")), (Ids{17, 12}));
}

TEST(WordPiece, DottedCapitalIUsesTheRootLocale) {
    // "İstanbul" → root lowercase "i̇stanbul" (i + U+0307), never Turkish "istanbul".
    const std::string istanbul = "\xC4\xB0stanbul";
    const auto stripping = makeTokenizer();
    const EncodedText stripped = encodeOk(*stripping, istanbul);
    EXPECT_EQ(ids(stripped), (Ids{20}));
    EXPECT_EQ(spans(stripped), (Spans{{0, 9}}));

    WordPieceOptions keep;
    keep.stripAccents = false;
    const auto keeping = makeTokenizer(keep);
    const EncodedText kept = encodeOk(*keeping, istanbul);
    // i, ##U+0307 and ##stanbul; the first two both come from İ (bytes 0-2).
    EXPECT_EQ(ids(kept), (Ids{18, 19, 28}));
    EXPECT_EQ(spans(kept), (Spans{{0, 2}, {0, 2}, {2, 9}}));
}

TEST(WordPiece, ControlAndFormatCharactersAreDropped) {
    const auto tok = makeTokenizer();
    // U+0001 (Cc), U+200B (Cf), U+00AD soft hyphen (Cf), U+0000 inside a word; \x0B is Cc too.
    const EncodedText e = encodeOk(*tok, std::string("hel\x01lo wo\xE2\x80\x8Brld th\xC2\xAD" "e a\0a\x0B", 26));
    EXPECT_EQ(ids(e), (Ids{15, 16, 8, 23, 24}));
    EXPECT_EQ(spans(e), (Spans{{0, 6}, {7, 15}, {16, 21}, {22, 23}, {24, 25}}));
    // Tabs, newlines and no-break spaces separate words.
    EXPECT_EQ(ids(encodeOk(*tok, "hello\tworld\r\nthe\xC2\xA0" "a")), (Ids{15, 16, 8, 23}));
}

TEST(WordPiece, SpecialTokensTypedInTheTextAreKept) {
    const auto tok = makeTokenizer();
    const EncodedText e = encodeOk(*tok, "hello [MASK] a[MASK]a", true);
    EXPECT_EQ(ids(e), (Ids{2, 15, 4, 23, 4, 23, 3}));
    EXPECT_EQ(spans(e)[2], (std::pair<std::int64_t, std::int64_t>{6, 12}));
    EXPECT_TRUE(e.special[2]);
    EXPECT_FALSE(e.special[1]);
    // Lowercase "[mask]" is ordinary text: [ mask ] with "[" "]" unknown.
    EXPECT_EQ(ids(encodeOk(*tok, "[mask]")), (Ids{1, 1, 1}));

    WordPieceOptions off;
    off.recognizeSpecialTokensInText = false;
    off.neverSplit.clear();
    EXPECT_EQ(ids(encodeOk(*makeTokenizer(off), "[MASK]")), (Ids{1, 1, 1}));
}

TEST(WordPiece, InvalidUtf8IsReplacedWithANotice) {
    const auto tok = makeTokenizer();
    const EncodedText e = encodeOk(*tok, "hello \xFF\xFE world");
    EXPECT_EQ(ids(e), (Ids{15, 16}));
    EXPECT_EQ(spans(e), (Spans{{0, 5}, {9, 14}}));
    ASSERT_EQ(e.notices.size(), 1u);
    EXPECT_EQ(e.notices[0], "invalid UTF-8 at byte 6 replaced by U+FFFD (2 places in all)");
}

TEST(WordPiece, EmptyTextGivesOnlyTheTemplate) {
    const auto tok = makeTokenizer();
    const EncodedText e = encodeOk(*tok, "", true);
    EXPECT_EQ(ids(e), (Ids{2, 3}));
    EXPECT_TRUE(encodeOk(*tok, " \t\n").tokens.empty());
}

TEST(WordPiece, DecodeGluesContinuations) {
    const auto tok = makeTokenizer();
    EXPECT_EQ(tok->decode({2, 5, 6, 7, 15, 11, 16, 13, 3}), "[CLS] unaffable hello, world! [SEP]");
    EXPECT_EQ(tok->decode({5, 999, -1}), "un");
    EXPECT_EQ(tok->tokenString(6), "##aff");
    EXPECT_EQ(tok->tokenString(31), "");
    EXPECT_EQ(tok->tokenId("[MASK]"), 4);
}

TEST(WordPiece, CancelStopsEncoding) {
    const auto tok = makeTokenizer();
    std::string big;
    for (int i = 0; i < 40000; ++i) big += "hello ";
    int calls = 0;
    auto result = tok->encode(big, true, [&](const Progress&) { return ++calls < 2; });
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::Cancelled);
}

TEST(WordPiece, ChunkCutsDoNotChangeTokens) {
    // 270 KB without white space: chunks may only end after a comma, which must not move a word
    // boundary or a final sigma. "ΑΣ" + ",ΣΑΑΣ" × 30000 → ας, then (",", σαας) × 30000.
    WordPieceOptions options;
    options.singleTemplate = {};
    auto tok = makeWordPieceTokenizer("[UNK]\n\xCE\xB1\xCF\x82\n,\n\xCF\x83\xCE\xB1\xCE\xB1\xCF\x82\n", options);
    ASSERT_TRUE(tok.ok()) << tok.error().message;
    std::string text = "\xCE\x91\xCE\xA3";
    for (int i = 0; i < 30000; ++i) text += ",\xCE\xA3\xCE\x91\xCE\x91\xCE\xA3";
    const EncodedText e = encodeOk(*tok.value(), text);
    ASSERT_EQ(e.tokens.size(), 60001u);
    EXPECT_EQ(e.tokens[0].id, 1);
    for (std::size_t i = 1; i < e.tokens.size(); ++i) {
        ASSERT_EQ(e.tokens[i].id, i % 2 == 1 ? 2 : 3) << "token " << i;
        ASSERT_EQ(e.tokens[i].byteBegin, 4 + static_cast<std::int64_t>((i - 1) / 2) * 9 + (i % 2 == 1 ? 0 : 1));
    }
}

TEST(WordPieceVocab, BomCrlfAndDuplicates) {
    WordPieceOptions noTemplate;
    noTemplate.singleTemplate = {};
    auto tok = makeWordPieceTokenizer("\xEF\xBB\xBF[UNK]\r\nhello\r\nworld\r\nhello\r\n", noTemplate);
    ASSERT_TRUE(tok.ok()) << tok.error().message;
    EXPECT_EQ(tok.value()->tokenId("[UNK]"), 0);
    EXPECT_EQ(tok.value()->tokenId("hello"), 3);  // the last of the duplicate lines
    EXPECT_EQ(tok.value()->vocabSize(), 4);
    const auto& notices = tok.value()->loadNotices();
    ASSERT_EQ(notices.size(), 2u);
    EXPECT_NE(notices[0].find("CRLF"), std::string::npos);
    EXPECT_NE(notices[1].find("1 duplicate lines"), std::string::npos);

    auto plain = makeWordPieceTokenizer("[UNK]\nhello\nworld", noTemplate);  // no final newline
    ASSERT_TRUE(plain.ok()) << plain.error().message;
    EXPECT_EQ(plain.value()->tokenId("world"), 2);
    EXPECT_EQ(ids(encodeOk(*plain.value(), "Hello WORLD", true)), (Ids{1, 2}));
}

TEST(WordPieceVocab, MalformedFilesNameTheFileAndTheRule) {
    auto expectError = [](const std::string& text, const std::string& fragment, WordPieceOptions options = {}) {
        auto tok = makeWordPieceTokenizer(text, options);
        ASSERT_FALSE(tok.ok()) << "accepted: " << text;
        EXPECT_EQ(tok.error().code, ErrorCode::InvalidInput);
        EXPECT_NE(tok.error().message.find("vocab.txt"), std::string::npos) << tok.error().message;
        EXPECT_NE(tok.error().message.find(fragment), std::string::npos) << tok.error().message;
    };
    expectError("", "empty");
    expectError("hello\nworld\n", "'[UNK]' is not in the vocabulary");
    expectError("[UNK]\nhello\n", "'[CLS]' the template needs");
    expectError("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 231508\n", "Git LFS pointer");
    expectError("<!DOCTYPE html>\n<html></html>\n", "HTML page");
    expectError(std::string("[UNK]\nhel\0lo\n", 13), "NUL byte at offset 9");
    expectError("[UNK]\nhel\xC3lo\n", "invalid UTF-8 at byte 9");
    WordPieceOptions silly;
    silly.maxInputCharsPerWord = 0;
    silly.singleTemplate = {};
    expectError("[UNK]\n", "max_input_chars_per_word 0", silly);
}

}  // namespace
}  // namespace attnscope::engine
