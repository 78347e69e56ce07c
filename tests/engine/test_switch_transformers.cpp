// Switch Transformers checkpoints (Hugging Face's switch_transformers encoder): T5's relative
// position buckets against hand-worked distances, a random folder written here whose hidden
// states, attention, router logits and routing agree with a double-precision recomputation from
// the definitions, its SentencePiece tokenizer, and folders that disagree with their config
// refused by name.

#include <attnscope/engine.h>
#include <attnscope/moe_router.h>

#include "../support/tiny_switch_transformers.h"
#include "torch/forwards/switch_transformers/t5_forward_buckets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;
using namespace attnscope::testing;

namespace {

using Vec = std::vector<double>;
using Mat = std::vector<Vec>;

class SwitchTransformersTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("attnscope-switch-t5-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        auto engine = Engine::create();
        ASSERT_TRUE(engine.ok());
        m_engine = std::move(engine.value());
    }
    void TearDown() override { fs::remove_all(m_dir); }
    fs::path m_dir;
    std::unique_ptr<Engine> m_engine;
};

// ---- the reference, in double, from the definitions ----------------------------------------

// T5's bidirectional bucket of distance key - query: half the buckets per direction, the first
// half of those exact, the rest logarithmic up to maxDistance.
std::int64_t bucketOf(std::int64_t relative, std::int64_t buckets, std::int64_t maxDistance) {
    const std::int64_t half = buckets / 2, exact = half / 2, base = relative > 0 ? half : 0;
    const std::int64_t distance = std::abs(relative);
    if (distance < exact) return base + distance;
    const auto large = exact + static_cast<std::int64_t>(std::log(double(distance) / double(exact)) /
                                                         std::log(double(maxDistance) / double(exact)) * double(half - exact));
    return base + std::min(large, half - 1);
}

Mat matmulT(const Mat& x, const PlainTensor& w) {  // x W^T, W [out, in]
    const std::int64_t out = w.shape[0], in = w.shape[1];
    Mat y(x.size(), Vec(static_cast<std::size_t>(out), 0.0));
    for (std::size_t r = 0; r < x.size(); ++r)
        for (std::int64_t o = 0; o < out; ++o)
            for (std::int64_t i = 0; i < in; ++i) y[r][o] += x[r][i] * double(w.f32[o * in + i]);
    return y;
}

Mat rms(const Mat& x, const PlainTensor& w) {
    Mat y = x;
    for (auto& row : y) {
        double square = 0;
        for (double v : row) square += v * v;
        const double scale = 1.0 / std::sqrt(square / double(row.size()) + 1e-6);
        for (std::size_t c = 0; c < row.size(); ++c) row[c] *= scale * w.f32[c];
    }
    return y;
}

Mat reluFfn(const Mat& x, const PlainTensor& wi, const PlainTensor& wo) {
    Mat h = matmulT(x, wi);
    for (auto& row : h)
        for (double& v : row) v = std::max(v, 0.0);
    return matmulT(h, wo);
}

struct Reference {
    std::vector<Mat> hidden;             // layers + 1
    std::vector<std::vector<Mat>> attention;  // [layer][head] n x n
    Mat logits;                          // the sparse layer's router logits
    std::vector<std::int64_t> expert;
    std::vector<int> kept;
};

Reference recompute(const TensorMap& w, const TinySwitchSpec& s, const std::vector<std::int64_t>& ids) {
    const std::size_t n = ids.size(), heads = std::size_t(s.heads), dk = std::size_t(s.dkv);
    Reference ref;
    Mat x(n, Vec(std::size_t(s.d)));
    for (std::size_t t = 0; t < n; ++t)
        for (std::int64_t c = 0; c < s.d; ++c) x[t][c] = w.at("shared.weight").f32[ids[t] * s.d + c];
    ref.hidden.push_back(x);
    const PlainTensor& bias = w.at("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
    for (std::int64_t l = 0; l < s.layers; ++l) {
        const std::string a = "encoder.block." + std::to_string(l) + ".layer.0.";
        const std::string f = "encoder.block." + std::to_string(l) + ".layer.1.";
        const Mat normed = rms(x, w.at(a + "layer_norm.weight"));
        const Mat q = matmulT(normed, w.at(a + "SelfAttention.q.weight"));
        const Mat k = matmulT(normed, w.at(a + "SelfAttention.k.weight"));
        const Mat v = matmulT(normed, w.at(a + "SelfAttention.v.weight"));
        Mat context(n, Vec(heads * dk, 0.0));
        ref.attention.emplace_back();
        for (std::size_t h = 0; h < heads; ++h) {
            Mat p(n, Vec(n));
            for (std::size_t i = 0; i < n; ++i) {
                double top = -1e300, sum = 0;
                for (std::size_t j = 0; j < n; ++j) {
                    double score = bias.f32[bucketOf(std::int64_t(j) - std::int64_t(i), s.buckets, s.maxDistance) * s.heads + h];
                    for (std::size_t c = 0; c < dk; ++c) score += q[i][h * dk + c] * k[j][h * dk + c];  // no 1/sqrt(d)
                    p[i][j] = score;
                    top = std::max(top, score);
                }
                for (double& e : p[i]) sum += (e = std::exp(e - top));
                for (std::size_t j = 0; j < n; ++j) {
                    p[i][j] /= sum;
                    for (std::size_t c = 0; c < dk; ++c) context[i][h * dk + c] += p[i][j] * v[j][h * dk + c];
                }
            }
            ref.attention.back().push_back(p);
        }
        const Mat out = matmulT(context, w.at(a + "SelfAttention.o.weight"));
        for (std::size_t t = 0; t < n; ++t)
            for (std::int64_t c = 0; c < s.d; ++c) x[t][c] += out[t][c];
        const Mat ffIn = rms(x, w.at(f + "layer_norm.weight"));
        Mat ffn(n, Vec(std::size_t(s.d), 0.0));
        if (s.sparse(l)) {
            // top-1: the argmax of softmax(logits) (ties: the lower), slots claimed in sequence order
            ref.logits = matmulT(ffIn, w.at(f + "mlp.router.classifier.weight"));
            std::vector<std::int64_t> used(std::size_t(s.experts), 0);
            for (std::size_t t = 0; t < n; ++t) {
                const Vec& z = ref.logits[t];
                const auto e = std::size_t(std::max_element(z.begin(), z.end()) - z.begin());
                double sum = 0;
                for (double v : z) sum += std::exp(v - z[e]);
                const bool keep = ++used[e] <= s.capacity;
                ref.expert.push_back(std::int64_t(e));
                ref.kept.push_back(keep);
                if (!keep) continue;  // dropped: the expert adds nothing, the residual carries it
                const std::string ex = f + "mlp.experts.expert_" + std::to_string(e) + ".";
                const Mat y = reluFfn(Mat{ffIn[t]}, w.at(ex + "wi.weight"), w.at(ex + "wo.weight"));
                for (std::int64_t c = 0; c < s.d; ++c) ffn[t][c] = y[0][c] / sum;  // gate = p_e = 1 / Σ exp(z - z_e)
            }
        } else {
            ffn = reluFfn(ffIn, w.at(f + "mlp.wi.weight"), w.at(f + "mlp.wo.weight"));
        }
        for (std::size_t t = 0; t < n; ++t)
            for (std::int64_t c = 0; c < s.d; ++c) x[t][c] += ffn[t][c];
        ref.hidden.push_back(l + 1 == s.layers ? rms(x, w.at("encoder.final_layer_norm.weight")) : x);
    }
    return ref;
}

void expectNear(const PlainTensor& got, const Mat& want, double tolerance, const std::string& what) {
    const std::size_t cols = want[0].size();
    ASSERT_EQ(got.f32.size(), want.size() * cols) << what;
    for (std::size_t r = 0; r < want.size(); ++r)
        for (std::size_t c = 0; c < cols; ++c)
            ASSERT_NEAR(got.f32[r * cols + c], want[r][c], tolerance) << what << " [" << r << ", " << c << "]";
}

}  // namespace

TEST(T5RelativePosition, BucketsOfHandWorkedDistances) {
    // 32 buckets, max distance 128, bidirectional: 16 per side, 8 exact, then
    // 8 + floor(log(d / 8) / log(16) · 8): d = 20 → 8 + floor(2.64) = 10, d = 127 → 15.
    const at::Tensor b = t5RelativeBuckets(201, true, 32, 128);
    auto at = [&](std::int64_t query, std::int64_t key) { return b[query][key].item<std::int64_t>(); };
    EXPECT_EQ(at(100, 100), 0);
    EXPECT_EQ(at(100, 99), 1);    // one before
    EXPECT_EQ(at(100, 101), 17);  // one after: the second half
    EXPECT_EQ(at(100, 93), 7);
    EXPECT_EQ(at(100, 92), 8);    // the first logarithmic bucket, log 1 = 0
    EXPECT_EQ(at(100, 80), 10);
    EXPECT_EQ(at(100, 120), 26);
    EXPECT_EQ(at(127, 0), 15);
    EXPECT_EQ(at(200, 0), 15);    // beyond max_distance: the last bucket of the side
    EXPECT_EQ(at(0, 200), 31);
    // Causal (the decoder's): later keys fall in bucket 0; 16 exact, d = 20 → 16 + floor(1.72) = 17.
    const at::Tensor c = t5RelativeBuckets(30, false, 32, 128);
    EXPECT_EQ(c[5][10].item<std::int64_t>(), 0);
    EXPECT_EQ(c[10][5].item<std::int64_t>(), 5);
    EXPECT_EQ(c[25][5].item<std::int64_t>(), 17);
}

TEST_F(SwitchTransformersTest, RandomFolderAgreesWithADoublePrecisionRecomputation) {
    const TinySwitchSpec spec;
    const TensorMap weights = writeTinySwitchFolder(m_dir / "switch", spec);
    auto info = m_engine->openModel((m_dir / "switch").string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->arch, "switch_transformers");
    EXPECT_EQ(info->headDim, 4);
    EXPECT_EQ(info->experts, 4);
    EXPECT_EQ(info->expertCapacity, 3);
    EXPECT_EQ(info->expertLayers, (std::vector<std::int64_t>{1}));
    EXPECT_EQ(info->tokenizer, "sentencepiece");
    EXPECT_FALSE(info->causal);

    ModelInput input;
    input.ids = {3, 17, 5, 5, 28, 9, 1, 33, 12, 7, 20, 1};
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    const ModelForward& f = *pass.value();
    const Reference ref = recompute(weights, spec, input.ids);
    ASSERT_EQ(f.hidden.size(), 4u);
    for (std::size_t l = 0; l < f.hidden.size(); ++l) expectNear(f.hidden[l], ref.hidden[l], 1e-4, "hidden " + std::to_string(l));
    ASSERT_EQ(f.attention.size(), 3u);
    const std::size_t n = input.ids.size();
    for (std::size_t l = 0; l < 3; ++l)
        for (std::size_t h = 0; h < 3; ++h) {
            PlainTensor head = PlainTensor::fromF32({std::int64_t(n), std::int64_t(n)},
                                                    std::vector<float>(f.attention[l].f32.begin() + h * n * n,
                                                                       f.attention[l].f32.begin() + (h + 1) * n * n));
            expectNear(head, ref.attention[l][h], 1e-5, "attention " + std::to_string(l) + "/" + std::to_string(h));
        }
    // Q comes scaled by sqrt(d_kv): the views' 1/sqrt(d) then gives T5's unscaled q·k.
    EXPECT_EQ(f.headDim, 4);
    // Routers only in the sparse block; the engine's routing is the recomputation's.
    ASSERT_EQ(f.routerLogits.size(), 3u);
    EXPECT_TRUE(f.routerLogits[0].f32.empty());
    EXPECT_TRUE(f.routerLogits[2].f32.empty());
    expectNear(f.routerLogits[1], ref.logits, 1e-4, "router logits");
    RouterOptions router;
    router.expertCapacity = info->expertCapacity;
    auto routing = routeTokens(f.routerLogits[1], router);
    ASSERT_TRUE(routing.ok()) << routing.error().message;
    EXPECT_EQ(routing->expert, ref.expert);
    std::vector<int> kept(routing->kept.begin(), routing->kept.end());
    EXPECT_EQ(kept, ref.kept);
    EXPECT_GT(std::count(kept.begin(), kept.end(), 0), 0) << "the case should drop tokens (4 experts of 3 slots, 12 tokens)";
}

// The model's own attention of every layer, as the window and `run --model` ask the engine for it:
// T5's relative bias and unscaled scores, against the recomputation on the text's own tokens.
TEST_F(SwitchTransformersTest, OwnAttentionOfEveryLayerIsTheRecomputedOne) {
    const TinySwitchSpec spec;
    const TensorMap weights = writeTinySwitchFolder(m_dir / "switch", spec);
    for (int layer = 0; layer < 3; ++layer) {
        RunRequest request;
        request.source = ModelLayerSource{(m_dir / "switch").string(), layer, true, {}, InputSpec{"the cat sat on a mat and the dog ran up the hill"}};
        auto run = m_engine->run(request);
        ASSERT_TRUE(run.ok()) << run.error().message;
        const RunResult& r = *run.value();
        ASSERT_EQ(r.ownAttention, 0);
        EXPECT_EQ(r.results[0].variantId, "model_softmax");
        EXPECT_NE(r.ownAttentionSummary.find("relative position bias"), std::string::npos) << r.ownAttentionSummary;
        std::vector<std::int64_t> ids;
        for (const Token& t : r.input.tokens) ids.push_back(t.id);
        const std::int64_t n = std::int64_t(ids.size());
        ASSERT_GT(n, 12);  // wider than the exact buckets: the logarithmic ones are used
        const Reference ref = recompute(weights, spec, ids);
        for (int h = 0; h < 3; ++h) {
            const WeightTile tile = r.results[0].weights->tile(h, 0, n, 0, n);
            for (std::int64_t i = 0; i < n; ++i)
                for (std::int64_t j = 0; j < n; ++j)
                    ASSERT_NEAR(tile.at(i, j), ref.attention[std::size_t(layer)][std::size_t(h)][std::size_t(i)][std::size_t(j)], 1e-5)
                        << "layer " << layer << " head " << h << " " << i << "," << j;
        }
        // `full` on the same Q/K leaves the bias out: it is not the model's attention
        RunRequest variant = request;
        variant.model()->ownAttention = false;
        variant.variants.push_back(VariantRequest{"full", {}});
        auto full = m_engine->run(variant);
        ASSERT_TRUE(full.ok());
        EXPECT_EQ(full.value()->ownAttention, -1);
        double apart = 0;
        for (std::int64_t j = 0; j < n; ++j)
            apart += std::abs(full.value()->results[0].weightAt(0, 2, j) - ref.attention[std::size_t(layer)][0][2][std::size_t(j)]);
        EXPECT_GT(apart, 1e-3);
    }
}

// A run on a layer's Q, K, V carries that layer's router when its FFN is a Switch layer (the
// Experts tab routes it): the model pass's own logits and the model's slots.
TEST_F(SwitchTransformersTest, ARunOnASparseLayerCarriesItsRouter) {
    writeTinySwitchFolder(m_dir / "switch");
    ASSERT_TRUE(m_engine->openModel((m_dir / "switch").string()).ok());
    ModelInput input;
    input.text = "the cat sat on a mat";
    input.keepAttention = false;
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    for (int layer : {0, 1}) {
        RunRequest request;
        request.source = ModelLayerSource{(m_dir / "switch").string(), layer, false, {}, InputSpec{input.text}};
        request.variants.push_back(VariantRequest{"full", {}});
        auto run = m_engine->run(request);
        ASSERT_TRUE(run.ok()) << run.error().message;
        if (layer == 0) {
            EXPECT_FALSE(run.value()->modelRouting.has_value());
            continue;
        }
        ASSERT_TRUE(run.value()->modelRouting.has_value());
        EXPECT_EQ(run.value()->modelRouting->expertCapacity, 3);
        EXPECT_EQ(run.value()->modelRouting->logits.shape, pass.value()->routerLogits[1].shape);
        EXPECT_EQ(run.value()->modelRouting->logits.f32, pass.value()->routerLogits[1].f32);
    }
}

TEST_F(SwitchTransformersTest, TextGoesThroughItsSentencePieceModel) {
    TinySwitchSpec spec;
    spec.sharedEmbedding = false;  // an encoder-only export: the tied matrix under encoder.embed_tokens
    writeTinySwitchFolder(m_dir / "switch", spec);
    auto info = m_engine->openModel((m_dir / "switch").string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    const std::string text = "the cat sat on a mat";
    const std::vector<std::int64_t> expected = spmEncodeIds(m_dir / "switch", text);
    ASSERT_FALSE(expected.empty());
    ModelInput input;
    input.text = text;
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    const auto& tokens = pass.value()->input.tokens;
    ASSERT_EQ(tokens.size(), expected.size() + 1);
    for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(tokens[i].id, expected[i]) << i;
    EXPECT_EQ(tokens.back().id, 1);  // </s>, as T5's tokenizer appends it
    EXPECT_EQ(tokens.back().text, "</s>");
    // Every piece's span is the bytes it came from: "cat" spans " cat" or "cat".
    std::string rebuilt;
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i) rebuilt += text.substr(std::size_t(tokens[i].byteBegin), std::size_t(tokens[i].byteEnd - tokens[i].byteBegin));
    EXPECT_EQ(rebuilt, text);
    // Invalid UTF-8 is replaced with a notice, spans stay inside the input.
    input.text = "cat \xff dog";
    auto replaced = m_engine->forwardModel(input);
    ASSERT_TRUE(replaced.ok()) << replaced.error().message;
    ASSERT_FALSE(replaced.value()->notices.empty());
    EXPECT_NE(replaced.value()->notices.front().find("invalid UTF-8"), std::string::npos);
    for (const auto& t : replaced.value()->input.tokens) EXPECT_LE(t.byteEnd, 9);
}

TEST_F(SwitchTransformersTest, FoldersThatDisagreeWithTheirConfigAreRefusedByName) {
    const TinySwitchSpec spec;
    // The folder of `spec`, its config.json then rewritten from `config` (+ `extra` fields).
    auto refusal = [&](const std::string& name, const TinySwitchSpec& config, const std::string& extra = "",
                       const TensorMap& tensors = {}) {
        writeTinySwitchFolder(m_dir / name, spec, "", tensors);
        writeText(m_dir / name / "config.json", config.configJson(extra));
        auto opened = m_engine->openModel((m_dir / name).string());
        EXPECT_FALSE(opened.ok()) << name;
        return opened.ok() ? std::string() : opened.error().message;
    };
    auto with = [&](auto change) {
        TinySwitchSpec changed = spec;
        change(changed);
        return changed;
    };
    // more experts in the file than num_experts says
    TensorMap extra;
    extra["encoder.block.1.layer.1.mlp.experts.expert_4.wi.weight"] = PlainTensor::zeros(DType::F32, {spec.ff, spec.d});
    EXPECT_NE(refusal("extra", spec, "", extra).find("expert_4.wi.weight' is an expert outside the 4 experts (num_experts)"),
              std::string::npos);
    // fewer experts: the router's shape names it
    EXPECT_NE(refusal("fewer", with([](TinySwitchSpec& c) { c.experts = 5; })).find("router.classifier.weight' has shape [4, 16], expected [5, 16]"),
              std::string::npos);
    // the config makes every block sparse: block 0 has no router
    EXPECT_NE(refusal("step", with([](TinySwitchSpec& c) { c.sparseStep = 1; })).find("missing tensor 'encoder.block.0.layer.1.mlp.router.classifier.weight'"),
              std::string::npos);
    // a router where the config has a dense block
    TensorMap stray;
    stray["encoder.block.2.layer.1.mlp.router.classifier.weight"] = PlainTensor::zeros(DType::F32, {spec.experts, spec.d});
    EXPECT_NE(refusal("stray", spec, "", stray).find("puts experts in layer 2, which config.json makes dense (encoder_sparse_step 2)"),
              std::string::npos);
    EXPECT_NE(refusal("gated", spec, ", \"feed_forward_proj\": \"gated-gelu\"").find("gated-gelu"), std::string::npos);
    EXPECT_NE(refusal("capacity", with([](TinySwitchSpec& c) { c.capacity = 0; })).find("expert_capacity"), std::string::npos);
    EXPECT_NE(refusal("experts", with([](TinySwitchSpec& c) { c.experts = 0; })).find("num_experts"), std::string::npos);
}
