// Switch Transformer models (`train --arch switch`): the trainer's differentiable Switch layer
// follows the router's rules, a trained folder reopens with the same states, its forward pass
// agrees with a double-precision recomputation written here from the definitions (post-LN
// RoBERTa whose FFN is top-1 routed experts with capacity, dropped tokens passed on by the
// residual), and folders that disagree with their config are refused by name.

#include <attnscope/engine.h>
#include <attnscope/moe_router.h>
#include <attnscope/safetensors.h>

#include "../support/reference_math.h"
#include "torch/train/switch_ffn.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;
using namespace attnscope::testing::reference;

namespace {

constexpr double kEps = 1e-5;  // the trainer's layer norm

class SwitchModelTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("attnscope-switch-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        auto engine = Engine::create();
        ASSERT_TRUE(engine.ok());
        m_engine = std::move(engine.value());
    }
    void TearDown() override { fs::remove_all(m_dir); }

    TrainOptions small(const std::string& name) {
        TrainOptions o;
        o.arch = "switch";
        o.task = "copy";
        o.experts = 3;
        o.capacityFactor = 0.5;  // fewer slots than tokens: every layer drops some
        o.layers = 2;
        o.heads = 2;
        o.dim = 16;
        o.steps = 12;
        o.batch = 8;
        o.length = 6;
        o.out = (m_dir / name).string();
        return o;
    }

    fs::path m_dir;
    std::unique_ptr<Engine> m_engine;
};

// Every tensor of the folder as float.
std::map<std::string, std::vector<float>> readWeights(const fs::path& folder) {
    std::map<std::string, std::vector<float>> out;
    auto file = SafetensorsFile::open((folder / "model.safetensors").string());
    if (!file) return out;
    for (const StTensorInfo& info : (*file)->header().tensors) {
        auto t = (*file)->read(info.name);
        if (t) out[info.name] = t->f32;
    }
    return out;
}

struct SwitchReference {
    Matrix hidden;                               // the last layer's [n, h]
    std::vector<std::vector<Matrix>> attention;  // [layer][head] n x n
    std::vector<std::vector<std::int64_t>> expert;  // per layer, per token
    std::vector<std::vector<int>> kept;
};

// The model from its definition, in double: RoBERTa embeddings (positions after pad = 1), per
// layer attention + residual + LN, then a Switch FFN: p = softmax(a · Wrᵀ), expert = argmax p
// (ties: the lower), slots in sequence order, capacity ceil(n / E · c); a kept token's FFN output
// is p_e · W2 gelu(W1 a + b1) + b2 of its expert, a dropped one's zero; then residual + LN.
SwitchReference recompute(std::map<std::string, std::vector<float>>& w, const std::vector<std::int64_t>& ids, int layers,
                          std::size_t h, std::size_t heads, std::size_t experts, double capacityFactor) {
    const std::size_t n = ids.size(), inter = 4 * h;
    auto W = [&](const std::string& name) -> const std::vector<float>& { return w.at("roberta." + name); };
    Matrix x = zeros(n, h);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t c = 0; c < h; ++c)
            x[i][c] = W("embeddings.word_embeddings.weight")[static_cast<std::size_t>(ids[i]) * h + c] +
                      W("embeddings.position_embeddings.weight")[(i + 2) * h + c] +
                      W("embeddings.token_type_embeddings.weight")[c];
    x = layerNorm(x, W("embeddings.LayerNorm.weight"), W("embeddings.LayerNorm.bias"), kEps);
    SwitchReference ref;
    const auto capacity = static_cast<std::size_t>(std::ceil(static_cast<double>(n) / static_cast<double>(experts) * capacityFactor));
    for (int l = 0; l < layers; ++l) {
        const std::string p = "encoder.layer." + std::to_string(l) + ".";
        auto lin = [&](const Matrix& in, const std::string& base, std::size_t i, std::size_t o) {
            return affine(in, W(p + base + ".weight"), W(p + base + ".bias"), i, o, false);
        };
        std::vector<Matrix> weights;
        const Matrix ctx = attention(lin(x, "attention.self.query", h, h), lin(x, "attention.self.key", h, h),
                                     lin(x, "attention.self.value", h, h), heads, false, weights);
        ref.attention.push_back(weights);
        const Matrix a = layerNorm(add(x, lin(ctx, "attention.output.dense", h, h)), W(p + "attention.output.LayerNorm.weight"),
                                   W(p + "attention.output.LayerNorm.bias"), kEps);
        const std::vector<float>& router = W(p + "mlp.router.classifier.weight");
        Matrix ffn = zeros(n, h);
        std::vector<std::size_t> used(experts, 0);
        ref.expert.emplace_back();
        ref.kept.emplace_back();
        for (std::size_t t = 0; t < n; ++t) {
            std::vector<double> logit(experts, 0.0);
            for (std::size_t e = 0; e < experts; ++e)
                for (std::size_t c = 0; c < h; ++c) logit[e] += a[t][c] * router[e * h + c];
            const double top = *std::max_element(logit.begin(), logit.end());
            double sum = 0;
            for (double v : logit) sum += std::exp(v - top);
            const std::size_t e = static_cast<std::size_t>(std::max_element(logit.begin(), logit.end()) - logit.begin());
            const double gate = std::exp(logit[e] - top) / sum;
            const bool keep = ++used[e] <= capacity;
            ref.expert.back().push_back(static_cast<std::int64_t>(e));
            ref.kept.back().push_back(keep ? 1 : 0);
            if (!keep) continue;
            const std::string ex = p + "mlp.experts.expert_" + std::to_string(e) + ".";
            Matrix inner = affine(Matrix{a[t]}, W(ex + "intermediate.dense.weight"), W(ex + "intermediate.dense.bias"), h, inter, false);
            for (double& v : inner[0]) v = gelu(v, false);
            const Matrix out = affine(inner, W(ex + "output.dense.weight"), W(ex + "output.dense.bias"), inter, h, false);
            for (std::size_t c = 0; c < h; ++c) ffn[t][c] = gate * out[0][c];
        }
        x = layerNorm(add(a, ffn), W(p + "output.LayerNorm.weight"), W(p + "output.LayerNorm.bias"), kEps);
    }
    ref.hidden = x;
    return ref;
}

}  // namespace

TEST_F(SwitchModelTest, TrainedFolderReopensAndAgreesWithADoublePrecisionRecomputation) {
    const TrainOptions o = small("switch");
    auto report = m_engine->train(o);
    ASSERT_TRUE(report.ok()) << report.error().message;
    auto info = m_engine->openModel(report->folder);
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->arch, "roberta");
    EXPECT_EQ(info->experts, 3);
    EXPECT_DOUBLE_EQ(info->capacityFactor, 0.5);

    ModelInput input;
    input.ids = report->probeIds;
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    const PlainTensor& last = pass.value()->hidden.back();
    ASSERT_EQ(last.f32.size(), report->probeHidden.size());
    for (std::size_t i = 0; i < last.f32.size(); ++i) ASSERT_NEAR(last.f32[i], report->probeHidden[i], 1e-4) << i;

    auto weights = readWeights(report->folder);
    const auto ref = recompute(weights, report->probeIds, o.layers, 16, 2, 3, 0.5);
    const std::int64_t n = pass.value()->n;
    for (std::int64_t t = 0; t < n; ++t)
        for (std::size_t c = 0; c < 16; ++c)
            ASSERT_NEAR(last.f32[static_cast<std::size_t>(t) * 16 + c], ref.hidden[static_cast<std::size_t>(t)][c], 1e-4)
                << "token " << t << " column " << c;
    // The engine's router logits, routed, give the recomputation's experts and drops.
    ASSERT_EQ(pass.value()->routerLogits.size(), 2u);
    int dropped = 0;
    for (int l = 0; l < o.layers; ++l) {
        RouterOptions router;
        router.capacityFactor = 0.5;
        auto routing = routeTokens(pass.value()->routerLogits[static_cast<std::size_t>(l)], router);
        ASSERT_TRUE(routing.ok());
        EXPECT_EQ(routing->expert, ref.expert[static_cast<std::size_t>(l)]) << "layer " << l;
        for (std::int64_t t = 0; t < n; ++t) {
            EXPECT_EQ(int{routing->kept[static_cast<std::size_t>(t)]}, ref.kept[static_cast<std::size_t>(l)][static_cast<std::size_t>(t)]);
            dropped += 1 - ref.kept[static_cast<std::size_t>(l)][static_cast<std::size_t>(t)];
        }
    }
    // three experts of ceil(n / 3 · 0.5) slots leave n - 3 · that many tokens without one in each layer
    const std::int64_t slots = static_cast<std::int64_t>(std::ceil(static_cast<double>(n) / 3.0 * 0.5));
    EXPECT_GE(dropped, 2 * (n - 3 * slots));
    EXPECT_GT(n - 3 * slots, 0);
    // The model's own attention of every layer (text through the folder's byte-level vocabulary)
    for (int l = 0; l < o.layers; ++l) {
        RunRequest request;
        request.source = ModelLayerSource{report->folder, l, true, {}, InputSpec{"abcd"}};
        auto run = m_engine->run(request);
        ASSERT_TRUE(run.ok()) << run.error().message;
        ASSERT_EQ(run.value()->ownAttention, 0);
        std::vector<std::int64_t> ids;
        for (const Token& t : run.value()->input.tokens) ids.push_back(t.id);
        const auto own = recompute(weights, ids, o.layers, 16, 2, 3, 0.5);
        const std::int64_t m = std::int64_t(ids.size());
        for (int h = 0; h < 2; ++h) {
            const WeightTile tile = run.value()->results[0].weights->tile(h, 0, m, 0, m);
            for (std::int64_t i = 0; i < m; ++i)
                for (std::int64_t j = 0; j < m; ++j)
                    ASSERT_NEAR(tile.at(i, j), own.attention[std::size_t(l)][std::size_t(h)][std::size_t(i)][std::size_t(j)], 1e-5)
                        << "layer " << l << " head " << h;
        }
    }
}

// The trainer's layer against the router the engine routes with: the same experts, gates, slots
// and drops per sequence, and the balancing losses of the definitions.
TEST_F(SwitchModelTest, TrainingLayerFollowsTheRoutersRules) {
    const std::int64_t b = 2, n = 7, d = 5, experts = 3;
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    auto random = [&](std::vector<std::int64_t> shape) {
        at::Tensor t = at::empty(shape, at::kFloat);
        for (std::int64_t i = 0; i < t.numel(); ++i) t.data_ptr<float>()[i] = normal(rng);
        return t;
    };
    std::map<std::string, at::Tensor> params;
    params["p.mlp.router.classifier.weight"] = random({experts, d});
    for (std::int64_t e = 0; e < experts; ++e) {
        const std::string base = "p.mlp.experts.expert_" + std::to_string(e) + ".";
        params[base + "intermediate.dense.weight"] = random({2 * d, d});
        params[base + "intermediate.dense.bias"] = random({2 * d});
        params[base + "output.dense.weight"] = random({d, 2 * d});
        params[base + "output.dense.bias"] = random({d});
    }
    const at::Tensor x = random({b, n, d});
    const auto weight = [&](const std::string& name) -> const at::Tensor& { return params.at(name); };
    const SwitchFfnOutput out =
        switchFeedForward(x, weight, "p.", experts, 1.0, [](const at::Tensor& t) { return at::relu(t); });

    double aux = 0, z = 0;
    for (std::int64_t s = 0; s < b; ++s) {
        const at::Tensor xs = x[s].contiguous();
        const at::Tensor logits = at::linear(xs, params.at("p.mlp.router.classifier.weight")).contiguous();
        PlainTensor plain = PlainTensor::fromF32({n, experts}, std::vector<float>(logits.data_ptr<float>(), logits.data_ptr<float>() + n * experts));
        RouterOptions router;
        router.capacityFactor = 1.0;
        auto routing = routeTokens(plain, router);
        ASSERT_TRUE(routing.ok());
        EXPECT_EQ(routing->capacity, switchCapacity(n, experts, 1.0));
        aux += routing->auxLoss / b;
        z += routing->zLoss / b;
        for (std::int64_t t = 0; t < n; ++t) {
            const bool kept = routing->kept[static_cast<std::size_t>(t)] != 0;
            EXPECT_EQ(out.kept[s][t].item<bool>(), kept) << s << "," << t;
            const std::int64_t e = routing->expert[static_cast<std::size_t>(t)];
            const std::string base = "p.mlp.experts.expert_" + std::to_string(e) + ".";
            at::Tensor expected = at::zeros({d});
            if (kept) {
                const at::Tensor hidden = at::relu(at::linear(xs[t], params.at(base + "intermediate.dense.weight"),
                                                              params.at(base + "intermediate.dense.bias")));
                expected = at::linear(hidden, params.at(base + "output.dense.weight"), params.at(base + "output.dense.bias")) *
                           routing->gate[static_cast<std::size_t>(t)];
            }
            EXPECT_TRUE(at::allclose(out.out[s][t], expected, 1e-5, 1e-5)) << s << "," << t;
        }
    }
    EXPECT_NEAR(out.aux.item<double>(), aux, 1e-5);
    EXPECT_NEAR(out.z.item<double>(), z, 1e-4);
}

TEST_F(SwitchModelTest, RefusalsNameTheProblem) {
    TrainOptions o = small("refused");
    o.experts = 0;
    auto zero = m_engine->train(o);
    ASSERT_FALSE(zero.ok());
    EXPECT_NE(zero.error().message.find("--experts"), std::string::npos) << zero.error().message;
    o.experts = 2;
    o.capacityFactor = -1;
    auto negative = m_engine->train(o);
    ASSERT_FALSE(negative.ok());
    EXPECT_NE(negative.error().message.find("--capacity-factor"), std::string::npos) << negative.error().message;

    // A folder whose config names more experts than its weights hold.
    o = small("mismatch");
    auto report = m_engine->train(o);
    ASSERT_TRUE(report.ok()) << report.error().message;
    const fs::path config = fs::path(report->folder) / "config.json";
    std::stringstream text;
    text << std::ifstream(config).rdbuf();
    auto json = nlohmann::json::parse(text.str());
    json["num_experts"] = 4;
    std::ofstream(config, std::ios::trunc) << json.dump(2);
    auto opened = m_engine->openModel(report->folder);
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.error().message.find("router.classifier.weight' has shape [3, 16], expected [4, 16]"), std::string::npos)
        << opened.error().message;
    // and a roberta_switch config without experts
    json["num_experts"] = 0;
    std::ofstream(config, std::ios::trunc) << json.dump(2);
    auto none = m_engine->openModel(report->folder);
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().message.find("num_experts"), std::string::npos) << none.error().message;
}

// The shipped sample (samples/switch-moby, scripts/make-switch-sample.sh): its layer-1 routers
// split Moby-Dick's bytes by class — one expert takes the vowels, one the consonants, one the
// spaces — which the Experts figures in README.md show.
TEST_F(SwitchModelTest, ShippedSampleRoutesBytesByClass) {
    auto info = m_engine->openModel(std::string(ATTNSCOPE_SOURCE_DIR) + "/samples/switch-moby");
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->experts, 4);
    ModelInput input;
    input.text = "Call me Ishmael. Some years ago, never mind how long precisely, having little money in my purse";
    input.keepAttention = false;
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    RouterOptions router;
    router.capacityFactor = info->capacityFactor;
    auto routing = routeTokens(pass.value()->routerLogits[1], router);
    ASSERT_TRUE(routing.ok());
    const auto& tokens = pass.value()->input.tokens;
    ASSERT_EQ(static_cast<std::int64_t>(tokens.size()), routing->n);
    enum Class { Vowel, Consonant, Space, Other };
    std::vector<std::array<int, 4>> counts(4, {0, 0, 0, 0});
    for (std::int64_t t = 0; t < routing->n; ++t) {
        const std::string& text = tokens[static_cast<std::size_t>(t)].text;
        const char c = text.size() == 1 ? static_cast<char>(std::tolower(static_cast<unsigned char>(text[0]))) : '\0';
        const Class k = c == ' ' ? Space : std::isalpha(static_cast<unsigned char>(c)) ? (std::strchr("aeiou", c) ? Vowel : Consonant) : Other;
        ++counts[static_cast<std::size_t>(routing->expert[static_cast<std::size_t>(t)])][k];
    }
    // For each class, the expert holding most of it, and that class's share of the expert's tokens.
    auto purest = [&](Class k) {
        double best = 0;
        for (const auto& c : counts) {
            const int total = c[0] + c[1] + c[2] + c[3];
            if (total >= 5) best = std::max(best, static_cast<double>(c[k]) / total);
        }
        return best;
    };
    EXPECT_GE(purest(Vowel), 0.8);
    EXPECT_GE(purest(Consonant), 0.8);
    EXPECT_GE(purest(Space), 0.7);
}
