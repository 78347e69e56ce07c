// Tokenizers and UTF-8 validation. Expected spans and ids are worked out by hand from the UTF-8
// encodings below (byte escapes, so the test does not depend on the compiler's source charset).

#include <attnscope/tokenize.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace attnscope::engine {
namespace {

// U+0301 combining acute, U+00A0 no-break space, U+3000 ideographic space, U+200B zero-width
// space, U+200C ZWNJ, U+200D ZWJ, U+FE0F emoji presentation selector.
const std::string kAcute = "\xCC\x81";
const std::string kNbsp = "\xC2\xA0";
const std::string kIdeoSpace = "\xE3\x80\x80";
const std::string kZwsp = "\xE2\x80\x8B";
const std::string kZwnj = "\xE2\x80\x8C";
const std::string kZwj = "\xE2\x80\x8D";
const std::string kVs16 = "\xEF\xB8\x8F";
const std::string kWave = "\xF0\x9F\x91\x8B";       // U+1F44B
const std::string kSkinTone = "\xF0\x9F\x8F\xBD";   // U+1F3FD
const std::string kMan = "\xF0\x9F\x91\xA8";        // U+1F468
const std::string kWoman = "\xF0\x9F\x91\xA9";      // U+1F469
const std::string kGirl = "\xF0\x9F\x91\xA7";       // U+1F467
const std::string kHeart = "\xE2\x9D\xA4";          // U+2764
const std::string kFlagDe = "\xF0\x9F\x87\xA9\xF0\x9F\x87\xAA";  // U+1F1E9 U+1F1EA
const std::string kFlagFr = "\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7";  // U+1F1EB U+1F1F7
// 注意力机制: U+6CE8 U+610F U+529B U+673A U+5236
const std::string kAttention = "\xE6\xB3\xA8\xE6\x84\x8F\xE5\x8A\x9B\xE6\x9C\xBA\xE5\x88\xB6";
const std::string kPrivet = "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82";  // Привет
const std::string kMir = "\xD0\xBC\xD0\xB8\xD1\x80";                            // мир
const std::string kTokyo = "\xE6\x9D\xB1\xE4\xBA\xAC";                          // 東京
const std::string kRamen = "\xE3\x83\xA9\xE3\x83\xBC\xE3\x83\xA1\xE3\x83\xB3";  // ラーメン

struct Span {
    std::int64_t begin;
    std::int64_t end;
    bool operator==(const Span& other) const { return begin == other.begin && end == other.end; }
};

std::ostream& operator<<(std::ostream& os, const Span& span) {
    return os << "[" << span.begin << ", " << span.end << ")";
}

TokenizedInput tokenizeOk(const std::string& text, TokenizerKind kind) {
    Result<TokenizedInput> result = tokenize(InputSpec{text, kind});
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
    return result.ok() ? std::move(result).value() : TokenizedInput{};
}

std::vector<std::string> textsOf(const TokenizedInput& input) {
    std::vector<std::string> texts;
    for (const Token& token : input.tokens) texts.push_back(token.text);
    return texts;
}

std::vector<Span> spansOf(const TokenizedInput& input) {
    std::vector<Span> spans;
    for (const Token& token : input.tokens) spans.push_back({token.byteBegin, token.byteEnd});
    return spans;
}

std::vector<std::int64_t> idsOf(const TokenizedInput& input) {
    std::vector<std::int64_t> ids;
    for (const Token& token : input.tokens) ids.push_back(token.id);
    return ids;
}

constexpr TokenizerKind kAllKinds[] = {TokenizerKind::Bytes, TokenizerKind::Chars,
                                       TokenizerKind::Words};

// ---- names ---------------------------------------------------------------------------------

TEST(TokenizerKindTest, NamesRoundTrip) {
    for (const TokenizerKind kind : kAllKinds) {
        Result<TokenizerKind> parsed = parseTokenizerKind(tokenizerName(kind));
        ASSERT_TRUE(parsed.ok());
        EXPECT_EQ(*parsed, kind);
    }
    EXPECT_STREQ(tokenizerName(TokenizerKind::Bytes), "bytes");
    EXPECT_STREQ(tokenizerName(TokenizerKind::Chars), "chars");
    EXPECT_STREQ(tokenizerName(TokenizerKind::Words), "words");
}

TEST(TokenizerKindTest, UnknownNameIsInvalidArgument) {
    for (const std::string name : {"x", "", "Words", "bpe"}) {
        Result<TokenizerKind> parsed = parseTokenizerKind(name);
        ASSERT_FALSE(parsed.ok()) << name;
        EXPECT_EQ(parsed.error().code, ErrorCode::InvalidArgument);
        EXPECT_EQ(parsed.error().message,
                  "unknown tokenizer '" + name + "' (allowed: bytes, chars, words)");
    }
}

// ---- UTF-8 validation ----------------------------------------------------------------------

TEST(Utf8Test, AcceptsBoundaryCodePoints) {
    EXPECT_EQ(findInvalidUtf8(""), -1);
    EXPECT_EQ(findInvalidUtf8(std::string("a\0b", 3)), -1);
    // Each pair: the smallest and largest code point of a length or around the surrogates.
    const std::vector<std::pair<std::string, std::int64_t>> cases = {
        {"\x7F", 0x7F},          {"\xC2\x80", 0x80},         {"\xDF\xBF", 0x7FF},
        {"\xE0\xA0\x80", 0x800}, {"\xED\x9F\xBF", 0xD7FF},   {"\xEE\x80\x80", 0xE000},
        {"\xEF\xBF\xBF", 0xFFFF}, {"\xF0\x90\x80\x80", 0x10000},
        {"\xF4\x8F\xBF\xBF", 0x10FFFF},
    };
    for (const auto& [bytes, codePoint] : cases) {
        EXPECT_EQ(findInvalidUtf8(bytes), -1) << codePoint;
        const TokenizedInput chars = tokenizeOk(bytes, TokenizerKind::Chars);
        ASSERT_EQ(chars.tokens.size(), 1u);
        EXPECT_EQ(chars.tokens[0].id, codePoint);
        EXPECT_EQ(chars.tokens[0].byteEnd, static_cast<std::int64_t>(bytes.size()));
    }
}

struct InvalidCase {
    const char* what;
    std::string bytes;
    std::int64_t offset;
    const char* byte;
};

const std::vector<InvalidCase>& invalidCases() {
    static const std::vector<InvalidCase> cases = {
        {"overlong '/' (C0)", "\xC0\xAF", 0, "0xC0"},
        {"overlong C1", "\xC1\xBF", 0, "0xC1"},
        {"overlong 3-byte", "\xE0\x80\xAF", 0, "0xE0"},
        {"overlong 4-byte", "\xF0\x80\x80\xAF", 0, "0xF0"},
        {"surrogate U+D800", "\xED\xA0\x80", 0, "0xED"},
        {"surrogate U+DFFF after text", "ok\xED\xBF\xBF", 2, "0xED"},
        {"U+110000", "\xF4\x90\x80\x80", 0, "0xF4"},
        {"F5 lead", "x\xF5\x80\x80\x80", 1, "0xF5"},
        {"FF", "\xFF", 0, "0xFF"},
        {"truncated at end", "ab\xE2\x82", 2, "0xE2"},
        {"truncated before ASCII", "\xE2\x82z", 0, "0xE2"},
        {"lone continuation", "\x80", 0, "0x80"},
        {"continuation after valid char", "\xC3\xA9\xA9", 2, "0xA9"},
        {"first of two errors", "a\x80\xFF", 1, "0x80"},
    };
    return cases;
}

TEST(Utf8Test, FindInvalidReportsStartOfBadSequence) {
    for (const InvalidCase& c : invalidCases())
        EXPECT_EQ(findInvalidUtf8(c.bytes), c.offset) << c.what;
}

TEST(TokenizeTest, InvalidUtf8IsInvalidInputForEveryKind) {
    for (const InvalidCase& c : invalidCases()) {
        for (const TokenizerKind kind : kAllKinds) {
            Result<TokenizedInput> result = tokenize(InputSpec{c.bytes, kind});
            ASSERT_FALSE(result.ok()) << c.what << " " << tokenizerName(kind);
            EXPECT_EQ(result.error().code, ErrorCode::InvalidInput);
            EXPECT_EQ(result.error().message, "invalid UTF-8 at byte offset " +
                                                  std::to_string(c.offset) + " (" + c.byte +
                                                  ")")
                << c.what;
        }
    }
}

// ---- ASCII ---------------------------------------------------------------------------------

TEST(TokenizeTest, EmptyTextGivesNoTokens) {
    for (const TokenizerKind kind : kAllKinds) {
        const TokenizedInput input = tokenizeOk("", kind);
        EXPECT_TRUE(input.tokens.empty());
        EXPECT_EQ(input.kind, kind);
    }
    EXPECT_TRUE(tokenizeOk(" \t\n", TokenizerKind::Words).tokens.empty());
}

TEST(TokenizeTest, AsciiSentenceWords) {
    const TokenizedInput input = tokenizeOk("Hello, world!", TokenizerKind::Words);
    EXPECT_EQ(input.text, "Hello, world!");
    EXPECT_EQ(input.kind, TokenizerKind::Words);
    EXPECT_EQ(textsOf(input), (std::vector<std::string>{"Hello", ",", "world", "!"}));
    EXPECT_EQ(spansOf(input), (std::vector<Span>{{0, 5}, {5, 6}, {7, 12}, {12, 13}}));
}

TEST(TokenizeTest, AsciiSentenceCharsAndBytes) {
    const std::string text = "Hi, 42!";
    const std::vector<std::int64_t> codes = {'H', 'i', ',', ' ', '4', '2', '!'};
    for (const TokenizerKind kind : {TokenizerKind::Bytes, TokenizerKind::Chars}) {
        const TokenizedInput input = tokenizeOk(text, kind);
        EXPECT_EQ(idsOf(input), codes);
        ASSERT_EQ(input.tokens.size(), text.size());
        for (std::size_t i = 0; i < text.size(); ++i) {
            EXPECT_EQ(input.tokens[i].text, text.substr(i, 1));
            EXPECT_EQ(spansOf(input)[i], (Span{std::int64_t(i), std::int64_t(i + 1)}));
        }
    }
}

TEST(TokenizeTest, DigitsAndLettersFormOneWordUnderscoreDoesNot) {
    const TokenizedInput input = tokenizeOk("abc123 x_y", TokenizerKind::Words);
    EXPECT_EQ(textsOf(input), (std::vector<std::string>{"abc123", "x", "_", "y"}));
}

TEST(TokenizeTest, ControlCharactersAreTokensWhiteSpaceIsDropped) {
    const std::string text = "a" + kNbsp + "b" + kIdeoSpace + "c\td\r\ne" + kZwsp + "f" +
                             std::string("\0g", 2);
    const TokenizedInput input = tokenizeOk(text, TokenizerKind::Words);
    // ZWSP is format (Cf), not White_Space, so it is a token; NUL is a control token.
    EXPECT_EQ(textsOf(input), (std::vector<std::string>{"a", "b", "c", "d", "e", kZwsp, "f",
                                                        std::string(1, '\0'), "g"}));
    EXPECT_EQ(spansOf(input)[1], (Span{3, 4}));  // 'a' (1) + NBSP (2)
    EXPECT_EQ(spansOf(input)[2], (Span{7, 8}));  // + 'b' + U+3000 (3)
}

// ---- CJK -----------------------------------------------------------------------------------

TEST(TokenizeTest, CjkChars) {
    const TokenizedInput input = tokenizeOk(kAttention, TokenizerKind::Chars);
    EXPECT_EQ(idsOf(input), (std::vector<std::int64_t>{0x6CE8, 0x610F, 0x529B, 0x673A, 0x5236}));
    EXPECT_EQ(spansOf(input), (std::vector<Span>{{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 15}}));
    EXPECT_EQ(input.tokens[1].text, "\xE6\x84\x8F");
}

TEST(TokenizeTest, CjkWordsOnePerCharacter) {
    const TokenizedInput input = tokenizeOk(kAttention, TokenizerKind::Words);
    EXPECT_EQ(spansOf(input), (std::vector<Span>{{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 15}}));
    EXPECT_EQ(textsOf(input)[4], "\xE5\x88\xB6");
    // Katakana, including U+30FC whose Script is Common: still one token per character.
    EXPECT_EQ(tokenizeOk(kRamen, TokenizerKind::Words).tokens.size(), 4u);
}

TEST(TokenizeTest, CjkBytes) {
    const TokenizedInput input = tokenizeOk(kAttention, TokenizerKind::Bytes);
    ASSERT_EQ(input.tokens.size(), 15u);
    EXPECT_EQ(input.tokens[0].id, 0xE6);
    EXPECT_EQ(input.tokens[1].id, 0xB3);
    EXPECT_EQ(input.tokens[2].id, 0xA8);
}

TEST(TokenizeTest, MixedScripts) {
    // Привет(0-12) ,(12) ' ' мир(14-20) !(20) ' ' 東(22-25) 京(25-28) abc(28-31) ' ' 123(32-35)
    const std::string text = kPrivet + ", " + kMir + "! " + kTokyo + "abc 123";
    ASSERT_EQ(text.size(), 35u);
    const TokenizedInput words = tokenizeOk(text, TokenizerKind::Words);
    EXPECT_EQ(textsOf(words), (std::vector<std::string>{kPrivet, ",", kMir, "!", kTokyo.substr(0, 3),
                                                        kTokyo.substr(3), "abc", "123"}));
    EXPECT_EQ(spansOf(words), (std::vector<Span>{{0, 12}, {12, 13}, {14, 20}, {20, 21}, {22, 25},
                                                 {25, 28}, {28, 31}, {32, 35}}));
    EXPECT_EQ(tokenizeOk(text, TokenizerKind::Chars).tokens.size(), 22u);
    EXPECT_EQ(tokenizeOk(text, TokenizerKind::Bytes).tokens.size(), 35u);
}

TEST(TokenizeTest, ZeroWidthNonJoinerKeepsPersianWordWhole) {
    // می‌خواهم: 2 + 2 letters (2 bytes each), ZWNJ (3 bytes), 5 letters.
    const std::string text = "\xD9\x85\xDB\x8C" + kZwnj + "\xD8\xAE\xD9\x88\xD8\xA7\xD9\x87\xD9\x85";
    const TokenizedInput input = tokenizeOk(text, TokenizerKind::Words);
    EXPECT_EQ(spansOf(input), (std::vector<Span>{{0, 17}}));
}

// ---- combining marks and emoji -------------------------------------------------------------

TEST(TokenizeTest, CombiningMarkStaysWithItsBase) {
    const std::string text = "e" + kAcute + "te";  // 5 bytes
    const TokenizedInput chars = tokenizeOk(text, TokenizerKind::Chars);
    EXPECT_EQ(idsOf(chars), (std::vector<std::int64_t>{'e', 0x301, 't', 'e'}));
    EXPECT_EQ(spansOf(chars), (std::vector<Span>{{0, 1}, {1, 3}, {3, 4}, {4, 5}}));

    const TokenizedInput words = tokenizeOk(text, TokenizerKind::Words);
    EXPECT_EQ(spansOf(words), (std::vector<Span>{{0, 5}}));
    EXPECT_EQ(words.tokens[0].text, text);
}

TEST(TokenizeTest, CombiningMarkAfterPunctuationAttachesToIt) {
    const TokenizedInput input = tokenizeOk("!" + kAcute + "a " + kAcute + "b", TokenizerKind::Words);
    // After white space there is nothing to attach to: the mark starts a word.
    EXPECT_EQ(textsOf(input), (std::vector<std::string>{"!" + kAcute, "a", kAcute + "b"}));
    EXPECT_EQ(spansOf(input), (std::vector<Span>{{0, 3}, {3, 4}, {5, 8}}));
}

TEST(TokenizeTest, EmojiWithSkinToneIsOneWord) {
    // h i ' ' U+1F44B(3-7) U+1F3FD(7-11) ' ' t h e r e(12-17)
    const std::string text = "hi " + kWave + kSkinTone + " there";
    const TokenizedInput words = tokenizeOk(text, TokenizerKind::Words);
    EXPECT_EQ(textsOf(words), (std::vector<std::string>{"hi", kWave + kSkinTone, "there"}));
    EXPECT_EQ(spansOf(words), (std::vector<Span>{{0, 2}, {3, 11}, {12, 17}}));

    const TokenizedInput chars = tokenizeOk(text, TokenizerKind::Chars);
    ASSERT_EQ(chars.tokens.size(), 11u);
    EXPECT_EQ(chars.tokens[3].id, 0x1F44B);
    EXPECT_EQ(chars.tokens[4].id, 0x1F3FD);
    EXPECT_EQ(spansOf(chars)[4], (Span{7, 11}));
}

TEST(TokenizeTest, ZwjFamilyIsOneWord) {
    const std::string family = kMan + kZwj + kWoman + kZwj + kGirl;  // 4+3+4+3+4 bytes
    const TokenizedInput words = tokenizeOk(family + "!" + kWave, TokenizerKind::Words);
    EXPECT_EQ(textsOf(words), (std::vector<std::string>{family, "!", kWave}));
    EXPECT_EQ(spansOf(words), (std::vector<Span>{{0, 18}, {18, 19}, {19, 23}}));

    const TokenizedInput chars = tokenizeOk(family, TokenizerKind::Chars);
    EXPECT_EQ(idsOf(chars), (std::vector<std::int64_t>{0x1F468, 0x200D, 0x1F469, 0x200D, 0x1F467}));
}

TEST(TokenizeTest, AdjacentEmojiWithoutJoinerAreSeparate) {
    const std::string heart = kHeart + kVs16;  // U+2764 U+FE0F: 6 bytes
    const TokenizedInput words =
        tokenizeOk(heart + kWave + kFlagDe + kFlagFr, TokenizerKind::Words);
    EXPECT_EQ(textsOf(words), (std::vector<std::string>{heart, kWave, kFlagDe, kFlagFr}));
    EXPECT_EQ(spansOf(words), (std::vector<Span>{{0, 6}, {6, 10}, {10, 18}, {18, 26}}));
}

TEST(TokenizeTest, BytesOfTwoByteCharacter) {
    const TokenizedInput input = tokenizeOk("\xC3\xA9", TokenizerKind::Bytes);  // é
    EXPECT_EQ(idsOf(input), (std::vector<std::int64_t>{0xC3, 0xA9}));
    EXPECT_EQ(textsOf(input), (std::vector<std::string>{"\xC3", "\xA9"}));
    EXPECT_EQ(spansOf(input), (std::vector<Span>{{0, 1}, {1, 2}}));
}

// ---- ids -----------------------------------------------------------------------------------

TEST(TokenizeTest, WordIdsAreFnv1a63) {
    // FNV-1a 64 test vectors ("a" = af63dc4c8601ec8c, "foobar" = 85944171f73967e8), top bit cleared.
    const TokenizedInput input = tokenizeOk("a foobar", TokenizerKind::Words);
    EXPECT_EQ(idsOf(input),
              (std::vector<std::int64_t>{0x2f63dc4c8601ec8cLL, 0x05944171f73967e8LL}));
}

TEST(TokenizeTest, IdsAreDeterministic) {
    const std::string text = "the cat saw the dog, the end";
    const TokenizedInput first = tokenizeOk(text, TokenizerKind::Words);
    const TokenizedInput second = tokenizeOk(text, TokenizerKind::Words);
    EXPECT_EQ(idsOf(first), idsOf(second));
    ASSERT_EQ(first.tokens.size(), 8u);
    EXPECT_EQ(first.tokens[0].id, first.tokens[3].id);  // "the"
    EXPECT_EQ(first.tokens[0].id, first.tokens[6].id);
    EXPECT_NE(first.tokens[0].id, first.tokens[1].id);  // "the" vs "cat"
    for (const Token& token : first.tokens) EXPECT_GE(token.id, 0);
    // The id depends on the word alone, not on its position or neighbours.
    EXPECT_EQ(tokenizeOk("!!cat", TokenizerKind::Words).tokens[2].id, first.tokens[1].id);
}

// ---- invariants ----------------------------------------------------------------------------

TEST(TokenizeTest, SpansReconstructTheText) {
    const std::vector<std::string> corpus = {
        "Hello, world!",
        "  leading and trailing  ",
        kPrivet + ",\t" + kMir + "\n" + kTokyo + "abc 123",
        "hi " + kWave + kSkinTone + " there " + kMan + kZwj + kWoman + kZwj + kGirl,
        "e" + kAcute + "te " + kAcute + " !" + kAcute + kNbsp + kAttention + kIdeoSpace + kRamen,
        kFlagDe + kFlagFr + kHeart + kVs16 + kZwsp + std::string("\0x", 2),
    };
    for (const std::string& text : corpus) {
        for (const TokenizerKind kind : kAllKinds) {
            const TokenizedInput input = tokenizeOk(text, kind);
            EXPECT_EQ(input.text, text);
            std::string joined;
            std::int64_t last = 0;
            for (const Token& token : input.tokens) {
                ASSERT_LE(last, token.byteBegin);
                ASSERT_LT(token.byteBegin, token.byteEnd);
                ASSERT_LE(token.byteEnd, static_cast<std::int64_t>(text.size()));
                EXPECT_EQ(token.text, text.substr(token.byteBegin, token.byteEnd - token.byteBegin));
                // Only white space may lie between tokens, and only for words.
                const std::string gap = text.substr(last, token.byteBegin - last);
                if (kind != TokenizerKind::Words) {
                    EXPECT_TRUE(gap.empty()) << gap;
                }
                EXPECT_EQ(findInvalidUtf8(gap), -1);
                std::string spaces = gap;
                for (const std::string& space : {kNbsp, kIdeoSpace}) {
                    for (auto at = spaces.find(space); at != std::string::npos;
                         at = spaces.find(space)) {
                        spaces.replace(at, space.size(), " ");
                    }
                }
                EXPECT_EQ(spaces.find_first_not_of(" \t\n"), std::string::npos) << gap;
                joined += gap + token.text;
                last = token.byteEnd;
            }
            joined += text.substr(last);
            EXPECT_EQ(joined, text);
            if (kind == TokenizerKind::Bytes) {
                EXPECT_EQ(input.tokens.size(), text.size());
            }
        }
    }
}

// ---- progress, cancel, limits --------------------------------------------------------------

TEST(TokenizeTest, ProgressReportsEvery64KiB) {
    const std::string text(200 * 1024, 'a');
    std::vector<std::int64_t> done;
    const ProgressFn progress = [&](const Progress& p) {
        EXPECT_STREQ(p.stage, "tokenize");
        EXPECT_EQ(p.total, 200 * 1024);
        done.push_back(p.done);
        return true;
    };
    Result<TokenizedInput> result = tokenize(InputSpec{text, TokenizerKind::Words}, progress);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->tokens.size(), 1u);
    EXPECT_EQ(done, (std::vector<std::int64_t>{65536, 131072, 196608, 204800}));
}

TEST(TokenizeTest, CancelThroughProgress) {
    const std::string text(200 * 1024, 'a');
    for (const TokenizerKind kind : kAllKinds) {
        int calls = 0;
        const ProgressFn progress = [&](const Progress&) {
            ++calls;
            return false;
        };
        Result<TokenizedInput> result = tokenize(InputSpec{text, kind}, progress);
        ASSERT_FALSE(result.ok());
        EXPECT_EQ(result.error().code, ErrorCode::Cancelled);
        EXPECT_EQ(calls, 1);  // stopped at the first 64 KiB boundary
    }
}

TEST(TokenizeTest, TextAbove256MiBIsInvalidArgument) {
    InputSpec input;
    input.text.assign((std::size_t{256} << 20) + 1, 'a');
    Result<TokenizedInput> result = tokenize(input);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(result.error().message.find("268435457"), std::string::npos)
        << result.error().message;
}

}  // namespace
}  // namespace attnscope::engine
