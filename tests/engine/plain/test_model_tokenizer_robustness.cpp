// Hostile input for the model tokenizers: random bytes as text and as tokenizer files must give
// tokens or errors, never a crash, a hang or a span outside the text (FORMATS.md §2).

#include <attnscope/model_tokenizer.h>

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace attnscope::engine {
namespace {

std::string randomBytes(std::mt19937& rng, std::size_t maxLength, const std::string& alphabet = {}) {
    std::uniform_int_distribution<std::size_t> length(0, maxLength);
    std::uniform_int_distribution<int> byte(0, 255);
    std::string out(length(rng), '\0');
    for (char& c : out) {
        c = alphabet.empty() ? static_cast<char>(byte(rng))
                             : alphabet[static_cast<std::size_t>(byte(rng)) % alphabet.size()];
    }
    return out;
}

std::string byteVocabJson() {
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
        json += "\"" + s + "\": " + std::to_string(b) + ",";
    }
    return json + "\"ab\": 256, \"aba\": 257, \"<s>\": 258, \"</s>\": 259}";
}

void expectSaneSpans(const EncodedText& e, const std::string& text) {
    ASSERT_EQ(e.tokens.size(), e.typeIds.size());
    ASSERT_EQ(e.tokens.size(), e.special.size());
    std::int64_t lastBegin = 0;
    for (const Token& t : e.tokens) {
        EXPECT_LE(0, t.byteBegin);
        EXPECT_LE(t.byteBegin, t.byteEnd);
        EXPECT_LE(t.byteEnd, static_cast<std::int64_t>(text.size()));
        EXPECT_LE(lastBegin, t.byteBegin);
        lastBegin = t.byteBegin;
    }
}

TEST(ModelTokenizerRobustness, RandomBytesAsText) {
    WordPieceOptions wpOptions;
    auto wordPiece = makeWordPieceTokenizer("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n##a\nb\n##b\n", wpOptions);
    ASSERT_TRUE(wordPiece.ok()) << wordPiece.error().message;
    ByteLevelBpeOptions bpeOptions;
    bpeOptions.singleTemplate = templateWithSpecials("<s>", "</s>");
    bpeOptions.addPrefixSpace = true;
    auto bpe = makeByteLevelBpeTokenizer(byteVocabJson(), "#version: 0.2\na b\nab a\n", bpeOptions);
    ASSERT_TRUE(bpe.ok()) << bpe.error().message;

    std::mt19937 rng(1234);
    const std::string mixed = "ab \t\n\xC3\xA9\xE4\xB8\xAD\xCE\xA3\xF0\x9F\x91\x8B'[]MASK\x80\xFF\xED\xA0";
    for (int i = 0; i < 400; ++i) {
        const std::string text = i % 2 == 0 ? randomBytes(rng, 300) : randomBytes(rng, 300, mixed);
        for (const auto* tok : {wordPiece.value().get(), bpe.value().get()}) {
            auto e = tok->encode(text);
            ASSERT_TRUE(e.ok()) << e.error().message;
            expectSaneSpans(e.value(), text);
            std::vector<std::int64_t> ids;
            for (const Token& t : e.value().tokens) ids.push_back(t.id);
            (void)tok->decode(ids);
        }
    }
}

// A tokenizer made from hostile files is either refused with a message that says something, or
// loaded and then tokenizes like any other: tokens with sane spans, or an error.
template <class Made>
void expectRefusedOrUsable(const Made& made, int& loaded, int& refused) {
    if (!made.ok()) {
        EXPECT_FALSE(made.error().message.empty());
        ++refused;
        return;
    }
    ++loaded;
    const std::string text = "ab a b\xC3\xA9 [MASK] \xFF";
    auto e = made.value()->encode(text);
    if (e.ok()) expectSaneSpans(e.value(), text);
    else EXPECT_FALSE(e.error().message.empty());
}

TEST(ModelTokenizerRobustness, RandomTokenizerFilesAreRefusedOrLoaded) {
    std::mt19937 rng(99);
    const std::string jsonish = "{}[]\":,0123456789 abtrueflsn\\u";
    int loaded = 0, refused = 0;
    for (int i = 0; i < 300; ++i) {
        const std::string junk = randomBytes(rng, 200, i % 3 == 0 ? std::string() : jsonish);
        expectRefusedOrUsable(makeWordPieceTokenizer(junk), loaded, refused);
        expectRefusedOrUsable(makeByteLevelBpeTokenizer(junk, junk), loaded, refused);
        expectRefusedOrUsable(makeByteLevelBpeTokenizer(byteVocabJson(), junk), loaded, refused);
        expectRefusedOrUsable(makeTokenizerFromJson(junk), loaded, refused);
        expectRefusedOrUsable(makeTokenizerFromJson("{\"model\": {\"type\": \"BPE\", \"vocab\": " + byteVocabJson() +
                                                    ", \"merges\": " + junk + "}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"}}"),
                              loaded, refused);
    }
    // Both outcomes happen: junk is mostly refused, and some (a WordPiece vocabulary is any list
    // of lines) loads and must then work.
    EXPECT_GT(refused, 0);
    EXPECT_GT(loaded, 0);
}

TEST(ModelTokenizerRobustness, OversizedTextAndCancelAreErrors) {
    auto bpe = makeByteLevelBpeTokenizer(byteVocabJson(), "");
    ASSERT_TRUE(bpe.ok()) << bpe.error().message;
    auto tooBig = bpe.value()->encode(std::string(kMaxModelTokenizerTextBytes + 1, 'a'));
    ASSERT_FALSE(tooBig.ok());
    EXPECT_EQ(tooBig.error().code, ErrorCode::InvalidArgument);

    std::string words;
    for (int i = 0; i < 50000; ++i) words += "ab ";
    int calls = 0;
    auto cancelled = bpe.value()->encode(words, true, [&](const Progress& p) {
        EXPECT_STREQ(p.stage, "tokenize");
        return ++calls < 2;
    });
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().code, ErrorCode::Cancelled);
}

}  // namespace
}  // namespace attnscope::engine
