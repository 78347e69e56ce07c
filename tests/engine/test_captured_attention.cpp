// Attention captured from any model (`--attention FILE`): a safetensors file with q, k, v
// [layers, heads, n, d] and/or attentions [layers, heads, n, n] and its tokens in the metadata opens
// like a model — its attention recomputed from q, k in float64 here, variants running on its real
// q, k, v, the head atlas on attention-only files — and every malformed file is refused naming
// the tensor or field at fault.

#include <attnscope/engine.h>
#include <attnscope/head_atlas.h>
#include <attnscope/safetensors.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;

namespace {

constexpr std::int64_t kLayers = 2, kHeads = 2, kTokens = 5, kDim = 4;
const char* kTokensJson = R"(["The", " cat", " sat", " on", " it"])";

PlainTensor randomTensor(std::vector<std::int64_t> shape, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    PlainTensor t = PlainTensor::zeros(DType::F32, std::move(shape));
    for (float& v : t.f32) v = normal(rng);
    return t;
}

double at4(const PlainTensor& t, std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    return t.f32[static_cast<std::size_t>(((a * t.shape[1] + b) * t.shape[2] + c) * t.shape[3] + d)];
}

// softmax(q kᵀ / √d) of one layer and head, later keys left out when causal, in double
std::vector<std::vector<double>> reference(const PlainTensor& q, const PlainTensor& k, std::int64_t l, std::int64_t h, bool causal) {
    std::vector<std::vector<double>> p(kTokens, std::vector<double>(kTokens, 0.0));
    for (std::int64_t i = 0; i < kTokens; ++i) {
        std::vector<double> s(kTokens, -INFINITY);
        double top = -INFINITY, sum = 0;
        for (std::int64_t j = 0; j < kTokens; ++j) {
            if (causal && j > i) continue;
            s[j] = 0;
            for (std::int64_t c = 0; c < kDim; ++c) s[j] += at4(q, l, h, i, c) * at4(k, l, h, j, c);
            s[j] /= std::sqrt(double(kDim));
            top = std::max(top, s[j]);
        }
        for (std::int64_t j = 0; j < kTokens; ++j) sum += (p[i][j] = std::isinf(s[j]) ? 0.0 : std::exp(s[j] - top));
        for (double& x : p[i]) x /= sum;
    }
    return p;
}

class CapturedAttentionTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("attnscope-captured-" + std::to_string(::getpid()));
        fs::create_directories(m_dir);
        auto engine = Engine::create();
        ASSERT_TRUE(engine.ok());
        m_engine = std::move(engine.value());
        m_q = randomTensor({kLayers, kHeads, kTokens, kDim}, 1);
        m_k = randomTensor({kLayers, kHeads, kTokens, kDim}, 2);
        m_v = randomTensor({kLayers, kHeads, kTokens, kDim}, 3);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    std::string write(const std::string& name, const std::map<std::string, const PlainTensor*>& tensors,
                      std::map<std::string, std::string> metadata) {
        std::vector<StWriteItem> items;
        for (const auto& [n, t] : tensors) items.push_back(StWriteItem(n, t));
        const std::string path = (m_dir / name).string();
        auto written = writeSafetensors(path, items, metadata);
        EXPECT_TRUE(written.ok()) << written.error().message;
        return path;
    }
    std::string qkvFile(const std::string& causal = "true") {
        std::map<std::string, std::string> metadata{{"tokens", kTokensJson}, {"model", "tiny"}};
        if (!causal.empty()) metadata["causal"] = causal;
        return write("qkv.safetensors", {{"q", &m_q}, {"k", &m_k}, {"v", &m_v}}, metadata);
    }
    // the causal attention of the q, k above, as a model would have given it
    PlainTensor attentions() const {
        PlainTensor a = PlainTensor::zeros(DType::F32, {kLayers, kHeads, kTokens, kTokens});
        for (std::int64_t l = 0; l < kLayers; ++l)
            for (std::int64_t h = 0; h < kHeads; ++h) {
                const auto p = reference(m_q, m_k, l, h, true);
                for (std::int64_t i = 0; i < kTokens; ++i)
                    for (std::int64_t j = 0; j < kTokens; ++j)
                        a.f32[static_cast<std::size_t>(((l * kHeads + h) * kTokens + i) * kTokens + j)] = float(p[i][j]);
            }
        return a;
    }
    std::string refusal(const std::string& path) {
        auto info = m_engine->openModel(path);
        return info.ok() ? std::string("opened") : info.error().message;
    }

    fs::path m_dir;
    std::unique_ptr<Engine> m_engine;
    PlainTensor m_q, m_k, m_v;
};

}  // namespace

TEST_F(CapturedAttentionTest, QkvFileOpensAsAModelAndItsAttentionIsSoftmaxOfQK) {
    const std::string path = qkvFile();
    auto info = m_engine->openModel(path);
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->arch, "captured");
    EXPECT_EQ(info->layers, kLayers);
    EXPECT_EQ(info->heads, kHeads);
    EXPECT_EQ(info->headDim, kDim);
    EXPECT_TRUE(info->causal);
    EXPECT_EQ(info->capturedText, "The cat sat on it");
    EXPECT_EQ(info->attention, "captured from tiny");
    ModelInput input;
    input.text = "typed text that is not used";
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    ASSERT_EQ(pass.value()->input.tokens.size(), std::size_t(kTokens));
    EXPECT_EQ(pass.value()->input.tokens[1].text, " cat");
    EXPECT_EQ(pass.value()->input.tokens[1].byteBegin, 3);
    EXPECT_EQ(pass.value()->input.tokens[1].byteEnd, 7);
    for (std::int64_t l = 0; l < kLayers; ++l)
        for (std::int64_t h = 0; h < kHeads; ++h) {
            const auto p = reference(m_q, m_k, l, h, true);
            for (std::int64_t i = 0; i < kTokens; ++i)
                for (std::int64_t j = 0; j < kTokens; ++j)
                    ASSERT_NEAR(pass.value()->attention[l].f32[static_cast<std::size_t>((h * kTokens + i) * kTokens + j)], p[i][j], 1e-6);
        }
    // without "causal" in the metadata and no attentions to look at: bidirectional
    auto open = m_engine->openModel(qkvFile(""));
    ASSERT_TRUE(open.ok());
    EXPECT_FALSE(open->causal);
}

TEST_F(CapturedAttentionTest, VariantsRunOnTheFilesOwnQkv) {
    const std::string path = qkvFile();
    RunRequest request;
    request.source = ModelLayerSource{path, 1, false, {}, {}};
    request.variants.push_back(VariantRequest{"full", {{"causal", true}}});
    auto run = m_engine->run(request);
    ASSERT_TRUE(run.ok()) << run.error().message;
    const AttentionResult& r = run.value()->results[0];
    ASSERT_EQ(r.n, kTokens);
    for (int h = 0; h < kHeads; ++h) {
        const auto p = reference(m_q, m_k, 1, h, true);
        for (std::int64_t i = 0; i < kTokens; ++i)
            for (std::int64_t j = 0; j < kTokens; ++j) ASSERT_NEAR(r.weightAt(h, i, j), p[i][j], 1e-6);
    }
}

TEST_F(CapturedAttentionTest, AttentionOnlyFileGivesTheAtlasAndRefusesVariantRuns) {
    const PlainTensor a = attentions();
    const std::string path = write("weights.safetensors", {{"attentions", &a}}, {{"tokens", kTokensJson}});
    auto info = m_engine->openModel(path);
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_TRUE(info->causal);  // nothing above the diagonal
    EXPECT_EQ(info->headDim, 0);
    AtlasRequest atlasRequest;
    atlasRequest.settings.push_back(CoverageSetting{"", "longformer", {{"window", std::int64_t{1}}}});
    auto atlas = m_engine->analyzeModel(atlasRequest);
    ASSERT_TRUE(atlas.ok()) << atlas.error().message;
    ASSERT_EQ(atlas.value()->metrics.size(), std::size_t(kLayers * kHeads));
    EXPECT_NEAR(atlas.value()->metrics[0].firstShare, [&] {
        double first = 0;
        const auto p = reference(m_q, m_k, 0, 0, true);
        for (std::int64_t i = 0; i < kTokens; ++i) first += p[i][0];
        return first / kTokens;
    }(), 1e-6);
    EXPECT_NE(atlas.value()->settingNotes[0].find("q, k and v"), std::string::npos);
    // StreamingLLM: n = 5, window ceil(5 / 4) = 2, so query i keeps keys 0-3 and i - 1, i, i + 1;
    // the window alone keeps i - 1, i, i + 1 (causal: i - 1 and i)
    EXPECT_EQ(atlas.value()->streamingWindow, 2);
    for (std::int64_t h = 0; h < kHeads; ++h) {
        const auto p = reference(m_q, m_k, 1, h, true);
        double streaming = 0, window = 0;
        for (std::int64_t i = 0; i < kTokens; ++i)
            for (std::int64_t j = 0; j < kTokens; ++j) {
                const bool near = std::abs(i - j) < 2;
                streaming += (near || j < 4) ? p[i][j] : 0.0;
                window += near ? p[i][j] : 0.0;
            }
        EXPECT_NEAR(atlas.value()->metrics[static_cast<std::size_t>(kHeads + h)].streamingKept, streaming / kTokens, 1e-6);
        EXPECT_NEAR(atlas.value()->metrics[static_cast<std::size_t>(kHeads + h)].windowOnlyKept, window / kTokens, 1e-6);
        EXPECT_TRUE(std::isnan(atlas.value()->metrics[static_cast<std::size_t>(h)].groupSimilarity));  // no shared key/value heads
    }
    RunRequest request;
    request.source = ModelLayerSource{path, 0, false, {}, {}};
    request.variants.push_back(VariantRequest{"full", {{"causal", true}}});
    auto run = m_engine->run(request);
    ASSERT_FALSE(run.ok());
    EXPECT_NE(run.error().message.find("holds attention weights only"), std::string::npos) << run.error().message;
}

TEST_F(CapturedAttentionTest, MalformedFilesAreRefusedNamingTheFault) {
    PlainTensor a = attentions();
    a.f32[static_cast<std::size_t>(((0 * kHeads + 1) * kTokens + 2) * kTokens + 0)] += 0.5f;  // row [0, 1, 2] sums to 1.5
    EXPECT_NE(refusal(write("rows.safetensors", {{"attentions", &a}}, {{"tokens", kTokensJson}}))
                  .find("attentions[0, 1, 2] sums to 1.5"),
              std::string::npos);
    a = attentions();
    a.f32[7] = NAN;
    EXPECT_NE(refusal(write("nan.safetensors", {{"attentions", &a}}, {{"tokens", kTokensJson}})).find("attentions[0, 0, 1, 2] is nan"),
              std::string::npos);
    a = attentions();
    EXPECT_NE(refusal(write("few.safetensors", {{"attentions", &a}}, {{"tokens", R"(["a", "b"])"}}))
                  .find("metadata \"tokens\" must be a JSON list of 5 strings (n of the tensors), got 2 entries"),
              std::string::npos);
    EXPECT_NE(refusal(write("none.safetensors", {{"attentions", &a}}, {})).find("no \"tokens\" in the metadata"), std::string::npos);
    EXPECT_NE(refusal(write("part.safetensors", {{"q", &m_q}, {"k", &m_k}}, {{"tokens", kTokensJson}})).find("'q', 'k' and 'v' come together"),
              std::string::npos);
    const PlainTensor wide = randomTensor({kLayers, kHeads + 1, kTokens, kDim}, 4);
    EXPECT_NE(refusal(write("heads.safetensors", {{"q", &wide}, {"k", &wide}, {"v", &wide}, {"attentions", &a}}, {{"tokens", kTokensJson}}))
                  .find("disagree on layers, heads or tokens"),
              std::string::npos);
    const PlainTensor flat = randomTensor({kHeads, kTokens, kTokens}, 5);
    EXPECT_NE(refusal(write("flat.safetensors", {{"attentions", &flat}}, {{"tokens", kTokensJson}})).find("must be [layers, heads, n, n]"),
              std::string::npos);
    EXPECT_NE(refusal(write("causal.safetensors", {{"attentions", &a}}, {{"tokens", kTokensJson}, {"causal", "yes"}}))
                  .find("metadata \"causal\" must be \"true\" or \"false\""),
              std::string::npos);
    const PlainTensor other = randomTensor({2, 2}, 6);
    EXPECT_NE(refusal(write("other.safetensors", {{"x", &other}}, {{"tokens", kTokensJson}})).find("not captured attention"),
              std::string::npos);
}
