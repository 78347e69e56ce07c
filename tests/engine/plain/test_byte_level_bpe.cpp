// Byte-level BPE on hand-made vocabularies: ids 0-255 are the 256 byte symbols (id = byte value),
// extra tokens follow. Parity with the real GPT-2 files is in test_gpt2_parity.cpp.

#include <attnscope/model_tokenizer.h>

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace attnscope::engine {
namespace {

using Ids = std::vector<std::int64_t>;
using Spans = std::vector<std::pair<std::int64_t, std::int64_t>>;

std::string utf8(char32_t c) {
    std::string out;
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else {  // the table only reaches U+0143
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
    return out;
}

/// The byte-level string of a plain-ASCII/space text: ' ' → "Ġ".
std::string symbols(const std::string& text) {
    std::string out;
    for (const char c : text) out += utf8(byteLevelChar(static_cast<unsigned char>(c)));
    return out;
}

std::string jsonString(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

/// encoder.json with the 256 byte symbols and then `extra` (ids 256, 257, …).
std::string encoderJson(const std::vector<std::string>& extra) {
    std::string json = "{";
    for (int b = 0; b < 256; ++b) {
        json += jsonString(utf8(byteLevelChar(static_cast<unsigned char>(b)))) + ": " + std::to_string(b) + ",";
    }
    for (std::size_t i = 0; i < extra.size(); ++i) json += jsonString(extra[i]) + ": " + std::to_string(256 + i) + ",";
    json.back() = '}';
    return json;
}

std::shared_ptr<const ModelTokenizer> makeBpe(const std::vector<std::string>& extra, const std::string& merges,
                                              const ByteLevelBpeOptions& options = {}) {
    auto tok = makeByteLevelBpeTokenizer(encoderJson(extra), "#version: 0.2\n" + merges, options);
    EXPECT_TRUE(tok.ok()) << (tok.ok() ? "" : tok.error().message);
    return tok.ok() ? tok.value() : nullptr;
}

EncodedText encodeOk(const ModelTokenizer& tok, const std::string& text, bool specials = true) {
    auto e = tok.encode(text, specials);
    EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
    return e.ok() ? e.value() : EncodedText{};
}

Ids ids(const EncodedText& e) {
    Ids out;
    for (const Token& t : e.tokens) out.push_back(t.id);
    return out;
}

Spans spans(const EncodedText& e) {
    Spans out;
    for (const Token& t : e.tokens) out.emplace_back(t.byteBegin, t.byteEnd);
    return out;
}

TEST(ByteLevelTable, Gpt2Entries) {
    EXPECT_EQ(byteLevelChar(' '), U'\u0120');
    EXPECT_EQ(byteLevelChar('\n'), U'\u010A');
    EXPECT_EQ(byteLevelChar('\t'), U'\u0109');
    EXPECT_EQ(byteLevelChar(0x00), U'\u0100');
    EXPECT_EQ(byteLevelChar(0x7F), U'\u0121');
    EXPECT_EQ(byteLevelChar(0xA0), U'\u0142');
    EXPECT_EQ(byteLevelChar(0xAD), U'\u0143');
    EXPECT_EQ(byteLevelChar('!'), U'!');
    EXPECT_EQ(byteLevelChar('~'), U'~');
    EXPECT_EQ(byteLevelChar(0xA1), U'\u00A1');
    EXPECT_EQ(byteLevelChar(0xFF), U'\u00FF');
}

TEST(ByteLevelBpe, LowestRankMergesFirst) {
    // 256 "ab", 257 "Ġa", 258 "abc", 259 "bc"
    const auto tok = makeBpe({"ab", symbols(" a"), "abc", "bc"}, "a b\n" + symbols(" ") + " a\nab c\nb c\n");
    // Ġ a b c: (a,b) rank 0 beats (Ġ,a) rank 1 → Ġ ab c → (ab,c) rank 2 → Ġ abc.
    const EncodedText e = encodeOk(*tok, " abc");
    EXPECT_EQ(ids(e), (Ids{32, 258}));
    EXPECT_EQ(e.tokens[0].text, symbols(" "));
    EXPECT_EQ(spans(e), (Spans{{0, 1}, {1, 4}}));
    EXPECT_EQ(ids(encodeOk(*tok, "abab")), (Ids{256, 256}));
    EXPECT_EQ(ids(encodeOk(*tok, "bca")), (Ids{259, 'a'}));
    EXPECT_EQ(tok->decode({32, 258}), " abc");
}

TEST(ByteLevelBpe, LeftmostMergeWinsOnATie) {
    const auto tok = makeBpe({"aa"}, "a a\n");
    EXPECT_EQ(ids(encodeOk(*tok, "aaa")), (Ids{256, 'a'}));
    EXPECT_EQ(spans(encodeOk(*tok, "aaa")), (Spans{{0, 2}, {2, 3}}));
    EXPECT_EQ(ids(encodeOk(*tok, "aaaaa")), (Ids{256, 256, 'a'}));
}

TEST(ByteLevelBpe, DuplicateMergeKeepsTheLastRank) {
    // "a b" appears at ranks 0 and 2; the last wins (as in the reference dicts), so (b,c) at
    // rank 1 merges first: a bc.
    const auto tok = makeBpe({"ab", "bc"}, "a b\nb c\na b\n");
    EXPECT_EQ(ids(encodeOk(*tok, "abc")), (Ids{'a', 257}));
}

TEST(ByteLevelBpe, PreTokenizerKeepsPiecesApart) {
    // "ab" would merge across the space only if pieces were not separate: "a b" is a, Ġb.
    const auto tok = makeBpe({"ab", symbols(" b")}, "a b\n" + symbols(" ") + " b\n");
    const EncodedText e = encodeOk(*tok, "a b's");
    EXPECT_EQ(ids(e), (Ids{'a', 257, '\'', 's'}));
    EXPECT_EQ(spans(e), (Spans{{0, 1}, {1, 3}, {3, 4}, {4, 5}}));
}

TEST(ByteLevelBpe, LongRunWithoutSpacesFinishes) {
    const auto tok = makeBpe({"aa", "aaaa"}, "a a\naa aa\n");
    const auto e = tok->encode(std::string(100000, 'a'));
    ASSERT_TRUE(e.ok()) << e.error().message;
    ASSERT_EQ(e.value().tokens.size(), 25000u);
    EXPECT_EQ(e.value().tokens.back().id, 257);
    EXPECT_EQ(e.value().tokens.back().byteEnd, 100000);
}

TEST(ByteLevelBpe, LongWhiteSpaceRunsFinish) {
    // A megabyte of white space once overflowed ICU's backtracking stack (`\s+(?!\S)`).
    const auto tok = makeBpe({}, "");
    for (const std::string& text : {std::string(1 << 20, ' ') + "x", std::string(1 << 20, '\n')}) {
        const auto e = tok->encode(text);
        ASSERT_TRUE(e.ok()) << e.error().message;
        EXPECT_EQ(e.value().tokens.size(), text.size());
    }
}

TEST(ByteLevelBpe, OverLongPieceIsMergedInPartsAndCancellable) {
    const auto tok = makeBpe({"aa", "aaaa"}, "a a\naa aa\n");
    // 64 KiB parts: 1 MiB of 'a' is 16 parts of 16384 "aaaa" each.
    const auto e = tok->encode(std::string(1 << 20, 'a'));
    ASSERT_TRUE(e.ok()) << e.error().message;
    EXPECT_EQ(e.value().tokens.size(), std::size_t{1} << 18);
    int calls = 0;
    const auto cancelled = tok->encode(std::string(1 << 20, 'a'), true, [&](const Progress&) { return ++calls < 3; });
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().code, ErrorCode::Cancelled);
    EXPECT_EQ(calls, 3);
}

TEST(ByteLevelBpe, InvalidUtf8BecomesReplacementBytesWithTheirSpan) {
    const auto tok = makeBpe({}, "");
    const EncodedText e = encodeOk(*tok, "a\xFF" "b");
    // a, then U+FFFD as its three bytes EF BF BD (all spanning the bad byte), then b.
    EXPECT_EQ(ids(e), (Ids{'a', 0xEF, 0xBF, 0xBD, 'b'}));
    EXPECT_EQ(spans(e), (Spans{{0, 1}, {1, 2}, {1, 2}, {1, 2}, {2, 3}}));
    ASSERT_EQ(e.notices.size(), 1u);
    EXPECT_EQ(e.notices[0], "invalid UTF-8 at byte 1 replaced by U+FFFD");
    EXPECT_EQ(tok->decode({'a', 0xFF}), "a\xEF\xBF\xBD");
}

TEST(ByteLevelBpe, EndOfTextTypedByTheUserIsTextByDefault) {
    ByteLevelBpeOptions options;
    options.specialTokens = {"<|endoftext|>"};
    const auto asText = makeBpe({"<|endoftext|>"}, "", options);
    EXPECT_EQ(encodeOk(*asText, "<|endoftext|>").tokens.size(), 13u);

    options.recognizeSpecialTokensInText = true;
    const auto recognised = makeBpe({"<|endoftext|>"}, "", options);
    const EncodedText e = encodeOk(*recognised, "a<|endoftext|>b");
    EXPECT_EQ(ids(e), (Ids{'a', 256, 'b'}));
    EXPECT_EQ(spans(e), (Spans{{0, 1}, {1, 14}, {14, 15}}));
    EXPECT_EQ(e.special, (std::vector<bool>{false, true, false}));
}

TEST(ByteLevelBpe, RobertaTemplateAndPrefixSpace) {
    ByteLevelBpeOptions options;
    options.singleTemplate = templateWithSpecials("<s>", "</s>");
    options.addPrefixSpace = true;
    const auto tok = makeBpe({"<s>", "</s>", symbols(" a")}, symbols(" ") + " a\n", options);
    const EncodedText e = encodeOk(*tok, "ab");
    // <s> Ġa b </s>: the added space has no bytes in the input, so Ġa spans only "a".
    EXPECT_EQ(ids(e), (Ids{256, 258, 'b', 257}));
    EXPECT_EQ(spans(e), (Spans{{0, 0}, {0, 1}, {1, 2}, {2, 2}}));
    EXPECT_EQ(e.special, (std::vector<bool>{true, false, false, true}));
    EXPECT_EQ(ids(encodeOk(*tok, "ab", false)), (Ids{258, 'b'}));
}

TEST(ByteLevelBpe, Gpt2HasNoSpecials) {
    const auto tok = makeBpe({}, "");
    EXPECT_EQ(ids(encodeOk(*tok, "hi")), (Ids{'h', 'i'}));
    EXPECT_TRUE(encodeOk(*tok, "").tokens.empty());
    EXPECT_EQ(tok->kind(), ModelTokenizerKind::ByteLevelBpe);
    EXPECT_EQ(tok->vocabSize(), 256);
}

void expectError(const std::string& encoder, const std::string& merges, const std::string& fragment) {
    auto tok = makeByteLevelBpeTokenizer(encoder, merges);
    ASSERT_FALSE(tok.ok()) << "accepted; expected: " << fragment;
    EXPECT_EQ(tok.error().code, ErrorCode::InvalidInput);
    EXPECT_NE(tok.error().message.find(fragment), std::string::npos) << tok.error().message;
}

TEST(ByteLevelBpeFiles, MalformedFilesNameTheFileAndTheRule) {
    const std::string good = encoderJson({"ab"});
    expectError("", "a b\n", "encoder.json: the file is empty");
    expectError("[1, 2]", "", "encoder.json: expected a JSON object");
    expectError("{\"a\": 1,", "", "encoder.json: not valid JSON");
    expectError("{\"a\": 1, \"a\": 2}", "", "encoder.json: duplicate key \"a\"");
    expectError("{\"a\": \"1\"}", "", "the id of 'a' is not a non-negative integer");
    expectError("{\"a\": -1}", "", "the id of 'a' is not a non-negative integer");
    expectError("{\"a\": 99999999999}", "", "is above");
    expectError("{\"a\": 1, \"b\": 1}", "", "id 1 is given to both 'a' and 'b'");
    expectError(std::string("{\"a\": 1}\0{\"b\": 2}", 17), "", "encoder.json: NUL byte at offset 8");
    expectError("{\"a\": 0}", "", "byte 0) is missing");
    expectError(good, "#version: 0.2\na b c\n", "vocab.bpe line 2: expected two tokens separated by one space");
    expectError(good, "#version: 0.2\na\n", "vocab.bpe line 2: expected two tokens");
    expectError(good, "#version: 0.2\na b\n\nb c\n", "vocab.bpe line 3: blank line before the last merge");
    expectError(good, "#version: 0.2\nab zz\n", "vocab.bpe line 2: merge part 'zz' is not in encoder.json");
    expectError(good, "#version: 0.2\nb c\n", "vocab.bpe line 2: merge result 'bc' is not in encoder.json");
    expectError(good, "version https://git-lfs.github.com/spec/v1\n", "vocab.bpe: this is a Git LFS pointer");
}

TEST(ByteLevelBpeFiles, CrlfMergesAreAcceptedWithANotice) {
    auto tok = makeByteLevelBpeTokenizer(encoderJson({"ab"}), "#version: 0.2\r\na b\r\n");
    ASSERT_TRUE(tok.ok()) << tok.error().message;
    EXPECT_EQ(ids(encodeOk(*tok.value(), "ab")), (Ids{256}));
    ASSERT_EQ(tok.value()->loadNotices().size(), 1u);
    EXPECT_NE(tok.value()->loadNotices()[0].find("CRLF"), std::string::npos);
}

}  // namespace
}  // namespace attnscope::engine
