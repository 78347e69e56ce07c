// SentencePiece-style BPE from tokenizer.json (Llama 2, Mistral, TinyLlama): "▁" for spaces and
// before each stretch, BPE over characters, byte fallback, fused unknowns, and the refusals. The
// vocabulary is small enough to work every case out by hand; the real Llama 2 file is checked
// against @lenml/tokenizers in test_lenml_parity.cpp.

#include <attnscope/model_tokenizer.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace attnscope::engine {
namespace {

using Ids = std::vector<std::int64_t>;

// ▁ = U+2581 (E2 96 81). 猫 = E7 8C AB has byte tokens; é (C3 A9) has none.
const char* const kVocab = R"({"<unk>": 0, "<s>": 1, "</s>": 2, "▁": 3, "a": 4, "b": 5, "c": 6, "▁a": 7, "ab": 8,
  "▁ab": 9, "<0x0A>": 10, "<0xE7>": 11, "<0x8C>": 12, "<0xAB>": 13, "▁c": 14, "c▁": 15})";
// Ranks: ab 0, c▁ 1, ▁ab 2, ▁a 3, ▁c 4.
const char* const kMerges = R"([["a", "b"], ["c", "▁"], ["▁", "ab"], ["▁", "a"], ["▁", "c"]])";

const char* const kLlama2Normalizer =
    R"({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})";
const char* const kLlama2Decoder =
    R"({"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})";

struct Shape {
    std::string normalizer = kLlama2Normalizer;
    std::string preTokenizer = "null";
    std::string decoder = kLlama2Decoder;
    std::string unk = R"("<unk>")";
    bool byteFallback = true;
    bool fuseUnk = true;
};

std::string tokenizerJson(const Shape& s) {
    return std::string(R"({"version": "1.0", "added_tokens": [
        {"id": 0, "content": "<unk>", "special": true}, {"id": 1, "content": "<s>", "special": true},
        {"id": 2, "content": "</s>", "special": true}],
      "normalizer": )") + s.normalizer + R"(, "pre_tokenizer": )" + s.preTokenizer + R"(,
      "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
      "decoder": )" + s.decoder + R"(,
      "model": {"type": "BPE", "dropout": null, "unk_token": )" + s.unk + R"(, "continuing_subword_prefix": null, "end_of_word_suffix": null,
        "fuse_unk": )" + (s.fuseUnk ? "true" : "false") + R"(, "byte_fallback": )" + (s.byteFallback ? "true" : "false") +
           R"(, "vocab": )" + kVocab + R"(, "merges": )" + kMerges + "}}";
}

std::shared_ptr<const ModelTokenizer> load(const Shape& shape) {
    auto tok = makeTokenizerFromJson(tokenizerJson(shape));
    EXPECT_TRUE(tok.ok()) << tok.error().message;
    return tok.ok() ? tok.value() : nullptr;
}

EncodedText encode(const ModelTokenizer& tok, const std::string& text) {
    auto e = tok.encode(text, true);
    EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
    return e.ok() ? e.value() : EncodedText{};
}

Ids ids(const ModelTokenizer& tok, const std::string& text) {
    Ids out;
    for (const Token& t : encode(tok, text).tokens) out.push_back(t.id);
    return out;
}

Shape metaspace(const std::string& scheme, bool split) {
    Shape s;
    s.normalizer = "null";
    s.preTokenizer = R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": ")" + scheme + R"(", "split": )" +
                     (split ? "true" : "false") + "}";
    s.decoder = R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": false})";
    return s;
}

TEST(MetaspaceBpe, MergesByRankOverTheMarkedText) {
    auto tok = load(Shape{});
    ASSERT_TRUE(tok);
    EXPECT_EQ(tok->kind(), ModelTokenizerKind::SentencePiece);
    // "▁ab▁c": a+b (rank 0), then ▁+ab (2), then ▁+c (4); c▁ never forms, c is last.
    const EncodedText e = encode(*tok, "ab c");
    ASSERT_EQ(e.tokens.size(), 3u);
    EXPECT_EQ(ids(*tok, "ab c"), (Ids{1, 9, 14}));
    // The prepended ▁ stands at the start; the ▁ from the space is that space.
    EXPECT_EQ(e.tokens[1].byteBegin, 0);
    EXPECT_EQ(e.tokens[1].byteEnd, 2);
    EXPECT_EQ(e.tokens[2].byteBegin, 2);
    EXPECT_EQ(e.tokens[2].byteEnd, 4);
    // "▁c▁c": c+▁ (rank 1) comes before ▁+c (4), leaving ▁, c▁, c.
    EXPECT_EQ(ids(*tok, "c c"), (Ids{1, 3, 15, 6}));
}

TEST(MetaspaceBpe, ByteFallbackAndFusedUnknowns) {
    auto tok = load(Shape{});
    ASSERT_TRUE(tok);
    // "\n" is not a vocabulary character: its byte token; 猫 its three byte tokens, one byte each.
    const EncodedText e = encode(*tok, "a\n\xE7\x8C\xAB");
    EXPECT_EQ(ids(*tok, "a\n\xE7\x8C\xAB"), (Ids{1, 7, 10, 11, 12, 13}));
    ASSERT_EQ(e.tokens.size(), 6u);
    for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(e.tokens[3 + k].byteBegin, 2 + k);
        EXPECT_EQ(e.tokens[3 + k].byteEnd, 3 + k);
    }
    // é has no byte tokens: the unknown token, two in a row fused into one spanning both.
    const EncodedText u = encode(*tok, "\xC3\xA9\xC3\xA9" "a");
    EXPECT_EQ(ids(*tok, "\xC3\xA9\xC3\xA9" "a"), (Ids{1, 3, 0, 4}));
    ASSERT_EQ(u.tokens.size(), 4u);
    EXPECT_EQ(u.tokens[2].byteBegin, 0);
    EXPECT_EQ(u.tokens[2].byteEnd, 4);
    Shape unfused;
    unfused.fuseUnk = false;
    EXPECT_EQ(ids(*load(unfused), "\xC3\xA9\xC3\xA9" "a"), (Ids{1, 3, 0, 0, 4}));
    // Without byte fallback "\n" is unknown too.
    Shape noBytes;
    noBytes.byteFallback = false;
    EXPECT_EQ(ids(*load(noBytes), "a\n"), (Ids{1, 7, 0}));
}

TEST(MetaspaceBpe, PrependSchemes) {
    // The normalizer's Prepend is unconditional: " ab" → "▁▁ab"; every stretch between typed
    // special tokens gets its own ▁.
    auto llama2 = load(Shape{});
    EXPECT_EQ(ids(*llama2, " ab"), (Ids{1, 3, 9}));
    EXPECT_EQ(ids(*llama2, "ab</s>ab"), (Ids{1, 9, 2, 9}));
    // Metaspace "always" prepends only where the text does not start with ▁ already.
    auto always = load(metaspace("always", false));
    EXPECT_EQ(ids(*always, " ab"), (Ids{1, 9}));
    EXPECT_EQ(ids(*always, "ab</s>ab"), (Ids{1, 9, 2, 9}));
    // "first": only the stretch at the start of the text.
    auto first = load(metaspace("first", false));
    EXPECT_EQ(ids(*first, "ab</s>ab"), (Ids{1, 9, 2, 8}));
    auto never = load(metaspace("never", false));
    EXPECT_EQ(ids(*never, "ab"), (Ids{1, 8}));
    // split: every ▁ starts a piece, so c▁ cannot form across the pieces "▁c" "▁c".
    EXPECT_EQ(ids(*load(metaspace("always", true)), "c c"), (Ids{1, 14, 14}));
    EXPECT_EQ(ids(*always, "c c"), (Ids{1, 3, 15, 6}));
}

TEST(MetaspaceBpe, DecodesBackToTheText) {
    auto tok = load(Shape{});
    ASSERT_TRUE(tok);
    for (const std::string text : {"ab c", "a\n\xE7\x8C\xAB", "c c ab"}) EXPECT_EQ(tok->decode(ids(*tok, text)), text);
    // An unfinished byte sequence decodes to U+FFFD rather than invalid UTF-8.
    EXPECT_EQ(tok->decode({11, 12}), "\xEF\xBF\xBD");
}

void expectRefused(const Shape& shape, ErrorCode code, const std::string& fragment) {
    auto tok = makeTokenizerFromJson(tokenizerJson(shape));
    ASSERT_FALSE(tok.ok()) << "accepted; expected: " << fragment;
    EXPECT_EQ(tok.error().code, code) << tok.error().message;
    EXPECT_NE(tok.error().message.find(fragment), std::string::npos) << tok.error().message;
}

TEST(MetaspaceBpe, RefusesShapesItDoesNotRead) {
    Shape tab;
    tab.normalizer = R"({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": "\t"}, "content": "▁"}]})";
    expectRefused(tab, ErrorCode::Unsupported, "$.normalizer.normalizers[1].pattern");
    Shape lower;
    lower.normalizer = R"({"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})";
    expectRefused(lower, ErrorCode::Unsupported, "'Lowercase'");
    Shape both = Shape{};
    both.preTokenizer = R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": false})";
    expectRefused(both, ErrorCode::Unsupported, "$.pre_tokenizer");
    Shape scheme = metaspace("sometimes", false);
    expectRefused(scheme, ErrorCode::InvalidInput, "$.pre_tokenizer.prepend_scheme");
    Shape decoder;
    decoder.decoder = R"({"type": "WordPiece", "prefix": "##"})";
    expectRefused(decoder, ErrorCode::Unsupported, "$.decoder");
    Shape unk;
    unk.unk = R"("<missing>")";
    expectRefused(unk, ErrorCode::InvalidInput, "$.model.unk_token");
}

TEST(MetaspaceBpe, ACharacterWithNoTokenAndNoUnknownIsAClearError) {
    Shape shape;
    shape.unk = "null";
    shape.byteFallback = false;
    auto tok = load(shape);
    ASSERT_TRUE(tok);
    auto e = tok->encode("a\xC3\xA9", true);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message.find("unk_token"), std::string::npos) << e.error().message;
}

// Gemma's shape: the normalizer only replaces spaces (nothing prepended), and its Split at " "
// finds no space left to split at. "ab c" → "ab▁c": ab, ▁c; " ab" → "▁ab".
TEST(MetaspaceBpe, GemmaReplacesSpacesWithoutPrepending) {
    Shape gemma;
    gemma.normalizer = R"({"type": "Replace", "pattern": {"String": " "}, "content": "▁"})";
    gemma.preTokenizer = R"({"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": false})";
    gemma.decoder = R"({"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}]})";
    auto tok = load(gemma);
    ASSERT_TRUE(tok);
    EXPECT_EQ(ids(*tok, "ab c"), (Ids{1, 8, 14}));
    EXPECT_EQ(ids(*tok, " ab"), (Ids{1, 9}));
    EXPECT_EQ(tok->decode(ids(*tok, "ab c")), "ab c");
    gemma.preTokenizer = R"({"type": "Split", "pattern": {"String": "a"}, "behavior": "MergedWithPrevious", "invert": false})";
    expectRefused(gemma, ErrorCode::Unsupported, "pre-tokenizer type 'Split' with SentencePiece-style BPE");
}

}  // namespace
}  // namespace attnscope::engine
