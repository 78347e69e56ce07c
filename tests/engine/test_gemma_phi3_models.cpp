// Gemma 2, Gemma 3 (text, and the text tower of a multimodal `gemma3` folder) and Phi-3 checkpoints:
// random folders of three layers in Hugging Face naming whose every layer's own attention, hidden
// states and rotated Q agree with a double-precision forward written here from the definitions —
// Gemma's (1 + w) RMS norms (four per layer), embeddings times √hidden, query_pre_attn_scalar,
// soft-capped scores, sliding and global layers alternating, Gemma 3's q/k norms and local rotary
// base beside the global one's linear scaling, the GeGLU MLP; Phi-3's fused qkv_proj and
// gate_up_proj, LongRoPE (short factors within the trained context, long ones past it, the
// attention factor √(1 + ln s / ln L)), partial rotary positions and its window — and configs
// the forward does not compute refused by field.

#include <attnscope/engine.h>
#include <attnscope/model_checkpoint.h>

#include "../support/decoder_reference.h"
#include "../support/tiny_llama.h"
#include "../support/tiny_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace attnscope::engine;
using namespace attnscope::testing;
using namespace attnscope::testing::reference;

namespace {

double geluTanh(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
double silu(double x) { return x / (1 + std::exp(-x)); }

const Vec kShortFactors = {1.0, 1.5}, kLongFactors = {2.0, 5.0};

struct Case {
    LlamaSpec spec;
    bool multimodal = false;  // a `gemma3` config with the text tower's under text_config
    double linearFactor = 1;  // Gemma 3: the global layers' linear rope scaling
};

// 0: Gemma 2, scores soft-capped at 1.5, query_pre_attn_scalar 12 (head_dim 8), a window of 3 on
// layers 0 and 2; 1: Gemma 3, q/k norms, layers 0 and 2 sliding (window 4) turning by base 100, layer
// 1 global by 10⁴ with linear scaling 2; 2: the same as a multimodal gemma3 folder (text_config,
// model.language_model. prefix); 3: Phi-3, fused projections, half the features rotary, LongRoPE past
// an old context of 8 (13 tokens: the long factors; attention factor √2), a window of 5; 4: Phi-3
// within an old context of 32 (the short factors), all features rotary; 5: Gemma 2 in BF16.
Case caseOf(int index) {
    Case c;
    LlamaSpec& s = c.spec;
    s.layers = 3;
    if (index == 0 || index == 5) {
        s.type = "gemma2";
        s.window = 3;
        s.softcap = 1.5;
        if (index == 5) s.halfType = "BF16";
    } else if (index == 1 || index == 2) {
        s.type = "gemma3_text";
        s.window = 4;
        s.bias = true;
        s.rope = "{\"rope_type\": \"linear\", \"factor\": 2.0}";
        c.linearFactor = 2;
        c.multimodal = index == 2;
        if (c.multimodal) s.prefix = "model.language_model.";
    } else if (index == 3 || index == 4) {
        s.type = "phi3";
        s.partial = index == 3 ? 0.5 : 1.0;
        const Vec shortFactors = index == 3 ? kShortFactors : Vec{1.0, 1.5, 2.0, 3.0};
        const Vec longFactors = index == 3 ? kLongFactors : Vec{2.0, 5.0, 7.0, 9.0};
        auto list = [](const Vec& v) {
            std::string out;
            for (double x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
            return "[" + out + "]";
        };
        s.rope = "{\"rope_type\": \"longrope\", \"short_factor\": " + list(shortFactors) + ", \"long_factor\": " + list(longFactors) + "}";
        s.originalContext = index == 3 ? 8 : 32;
        if (index == 3) s.window = 5;
    }
    return c;
}

// The frequencies and cos/sin factor layer l turns by, for n tokens.
std::pair<Vec, double> layerRope(const Case& c, std::int64_t layer, std::size_t n) {
    const LlamaSpec& s = c.spec;
    if (s.type == "gemma3_text") {
        if (s.slides(layer)) return {defaultFrequencies(s.localBase, std::size_t(s.headDim)), 1.0};
        Vec f = defaultFrequencies(s.theta, std::size_t(s.headDim));
        for (double& x : f) x /= c.linearFactor;
        return {f, 1.0};
    }
    if (s.type == "phi3") {
        const std::size_t dims = std::size_t(double(s.headDim) * s.partial);
        Vec f = defaultFrequencies(s.theta, dims);
        const Vec& divisors = n > std::size_t(s.originalContext) ? (f.size() == 2 ? kLongFactors : Vec{2.0, 5.0, 7.0, 9.0})
                                                                 : (f.size() == 2 ? kShortFactors : Vec{1.0, 1.5, 2.0, 3.0});
        for (std::size_t i = 0; i < f.size(); ++i) f[i] /= divisors[i];
        const double factor = double(s.positions) / double(s.originalContext);
        return {f, std::sqrt(1 + std::log(factor) / std::log(double(s.originalContext)))};
    }
    return {defaultFrequencies(s.theta, std::size_t(s.headDim)), 1.0};
}

struct Reference {
    std::vector<Mat> hidden;
    std::vector<std::vector<Mat>> attention, q;  // [layer][head]
    std::vector<Vec> saturation;                  // [layer][head]: share of scores with |s| ≥ 0.9 · cap
};

// Softmax of the causal row i (within the window on a sliding layer) of scale · q·k, soft-capped;
// counts the scores seen and those within 10 % of the cap.
Vec attentionRow(const LlamaSpec& s, std::int64_t layer, const Mat& q, const Mat& k, std::size_t i, double& seen, double& saturated) {
    const double scale = s.gemma() ? 1 / std::sqrt(s.queryScalar) : 1 / std::sqrt(double(s.headDim));
    Vec p(q.size(), 0.0);
    double top = -1e300, sum = 0;
    for (std::size_t j = 0; j <= i; ++j) {
        if (s.slides(layer) && i - j >= std::size_t(s.window)) continue;
        double score = 0;
        for (std::size_t c = 0; c < q[i].size(); ++c) score += q[i][c] * k[j][c];
        score *= scale;
        if (s.softcap > 0) score = s.softcap * std::tanh(score / s.softcap);
        seen += 1;
        if (s.softcap > 0 && std::abs(score) >= 0.9 * s.softcap) saturated += 1;
        p[j] = score;
        top = std::max(top, score);
    }
    for (std::size_t j = 0; j <= i; ++j) {
        if (s.slides(layer) && i - j >= std::size_t(s.window)) continue;
        sum += (p[j] = std::exp(p[j] - top));
    }
    for (double& v : p) v /= sum;
    return p;
}

// The gated MLP: Gemma down(gelu(gate m) · up m), Phi-3 the same with silu from one gate_up_proj.
Mat feedForward(const TensorMap& w, const LlamaSpec& s, const std::string& p, const Mat& m) {
    Mat gate, up;
    if (s.fused()) {
        const Mat both = matmulT(m, w.at(p + "mlp.gate_up_proj.weight"), nullptr);
        for (const Vec& row : both) {
            gate.emplace_back(row.begin(), row.begin() + s.inner);
            up.emplace_back(row.begin() + s.inner, row.end());
        }
    } else {
        gate = matmulT(m, w.at(p + "mlp.gate_proj.weight"), nullptr);
        up = matmulT(m, w.at(p + "mlp.up_proj.weight"), nullptr);
    }
    for (std::size_t t = 0; t < gate.size(); ++t)
        for (std::size_t c = 0; c < gate[t].size(); ++c) gate[t][c] = (s.gemma() ? geluTanh(gate[t][c]) : silu(gate[t][c])) * up[t][c];
    return matmulT(gate, w.at(p + "mlp.down_proj.weight"), nullptr);
}

// q, k, v rows [n, heads · head_dim] of the layer (Phi-3: q's, k's, v's columns of one projection).
std::array<Mat, 3> projections(const TensorMap& w, const LlamaSpec& s, const std::string& p, const Mat& a) {
    auto bias = [&](const std::string& name) { return s.qkvBias() ? &w.at(name + ".bias") : nullptr; };
    if (!s.fused())
        return {matmulT(a, w.at(p + "self_attn.q_proj.weight"), bias(p + "self_attn.q_proj")),
                matmulT(a, w.at(p + "self_attn.k_proj.weight"), bias(p + "self_attn.k_proj")),
                matmulT(a, w.at(p + "self_attn.v_proj.weight"), bias(p + "self_attn.v_proj"))};
    const std::size_t q = std::size_t(s.heads * s.headDim), kv = std::size_t(s.kvHeads * s.headDim);
    std::array<Mat, 3> out;
    for (const Vec& row : matmulT(a, w.at(p + "self_attn.qkv_proj.weight"), nullptr)) {
        out[0].emplace_back(row.begin(), row.begin() + long(q));
        out[1].emplace_back(row.begin() + long(q), row.begin() + long(q + kv));
        out[2].emplace_back(row.begin() + long(q + kv), row.end());
    }
    return out;
}

Reference recompute(const TensorMap& w, const Case& cs, const std::vector<std::int64_t>& ids) {
    const LlamaSpec& s = cs.spec;
    const bool g = s.gemma();
    const std::size_t n = ids.size(), dh = std::size_t(s.headDim), group = std::size_t(s.heads / s.kvHeads);
    Reference ref;
    Mat x(n, Vec(std::size_t(s.hidden)));
    for (std::size_t t = 0; t < n; ++t)
        for (std::int64_t c = 0; c < s.hidden; ++c)
            x[t][std::size_t(c)] = w.at("embed_tokens.weight").f32[std::size_t(ids[t] * s.hidden + c)] * (g ? std::sqrt(double(s.hidden)) : 1.0);
    ref.hidden.push_back(x);
    for (std::int64_t l = 0; l < s.layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        const auto [q, k, v] = projections(w, s, p, rms(x, w.at(p + "input_layernorm.weight"), g));
        const auto [f, ropeScale] = layerRope(cs, l, n);
        Mat context(n, Vec(std::size_t(s.heads) * dh, 0.0));
        ref.attention.emplace_back();
        ref.q.emplace_back();
        ref.saturation.emplace_back();
        for (std::size_t h = 0; h < std::size_t(s.heads); ++h) {
            const std::size_t kvHead = h / group;
            Mat qh(n), kh(n);
            for (std::size_t t = 0; t < n; ++t) {
                Vec qRow(q[t].begin() + long(h * dh), q[t].begin() + long((h + 1) * dh));
                Vec kRow(k[t].begin() + long(kvHead * dh), k[t].begin() + long((kvHead + 1) * dh));
                if (s.perHeadNorm()) {  // Gemma 3: each head normed, (1 + w)
                    qRow = rmsRow(qRow, w.at(p + "self_attn.q_norm.weight"), true);
                    kRow = rmsRow(kRow, w.at(p + "self_attn.k_norm.weight"), true);
                }
                qh[t] = rotate(qRow, t, f, ropeScale);
                kh[t] = rotate(kRow, t, f, ropeScale);
            }
            Mat weights;
            double seen = 0, saturated = 0;
            for (std::size_t i = 0; i < n; ++i) {
                weights.push_back(attentionRow(s, l, qh, kh, i, seen, saturated));
                for (std::size_t j = 0; j < n; ++j)
                    for (std::size_t c = 0; c < dh; ++c) context[i][h * dh + c] += weights[i][j] * v[j][kvHead * dh + c];
            }
            ref.attention.back().push_back(weights);
            ref.q.back().push_back(qh);
            ref.saturation.back().push_back(saturated / seen);
        }
        Mat o = matmulT(context, w.at(p + "self_attn.o_proj.weight"), s.outputBias() ? &w.at(p + "self_attn.o_proj.bias") : nullptr);
        if (g) o = rms(o, w.at(p + "post_attention_layernorm.weight"), true);
        for (std::size_t t = 0; t < n; ++t)
            for (std::size_t c = 0; c < std::size_t(s.hidden); ++c) x[t][c] += o[t][c];
        const Mat m = rms(x, w.at(p + (g ? "pre_feedforward_layernorm.weight" : "post_attention_layernorm.weight")), g);
        Mat ff = feedForward(w, s, p, m);
        if (g) ff = rms(ff, w.at(p + "post_feedforward_layernorm.weight"), true);
        for (std::size_t t = 0; t < n; ++t)
            for (std::size_t c = 0; c < std::size_t(s.hidden); ++c) x[t][c] += ff[t][c];
        ref.hidden.push_back(l + 1 == s.layers ? rms(x, w.at("norm.weight"), g) : x);
    }
    return ref;
}

TensorMap writeCase(const fs::path& dir, const Case& c) {
    TensorMap weights = writeLlamaFolder(dir, c.spec);
    if (c.multimodal)
        std::ofstream(dir / "config.json") << "{\"model_type\": \"gemma3\", \"image_token_index\": 262144, \"text_config\": " +
                                                  c.spec.configJson() + "}";
    return weights;
}

class TodayDecoder : public LlamaFolder<::testing::TestWithParam<int>> {};

// Every layer's own attention, as the window and `run --model DIR --layer L` ask for it (text
// through the folder's tokenizer), against the recomputation on the same tokens; its terms
// (window, scale, soft-cap) are the layer's.
TEST_P(TodayDecoder, OwnAttentionOfEveryLayerIsTheRecomputedOne) {
    const Case c = caseOf(GetParam());
    const TensorMap weights = writeCase(m_dir, c);
    writeTinyTokenizerJson(m_dir);
    for (int layer = 0; layer < c.spec.layers; ++layer) {
        RunRequest request;
        request.source = ModelLayerSource{m_dir.string(), layer, true, {}, InputSpec{"the cat sat on the mat, a dog ran ."}};
        auto run = m_engine->run(request);
        ASSERT_TRUE(run.ok()) << run.error().message;
        const RunResult& r = *run.value();
        ASSERT_EQ(r.ownAttention, 0);
        EXPECT_EQ(r.modelFamily, c.spec.type);
        const AttentionResult& own = r.results[0];
        EXPECT_EQ(own.variantId, "model_softmax");
        std::vector<std::int64_t> ids;
        for (const Token& t : r.input.tokens) ids.push_back(t.id);
        ASSERT_EQ(ids.size(), 13u);
        const Reference ref = recompute(weights, c, ids);
        EXPECT_EQ(std::get<std::int64_t>(own.params.at("window")), c.spec.slides(layer) ? c.spec.window : 0) << layer;
        EXPECT_NEAR(std::get<double>(own.params.at("softcap")), c.spec.softcap, 1e-12);
        if (c.spec.gemma()) EXPECT_NEAR(std::get<double>(own.params.at("scale")), 1 / std::sqrt(c.spec.queryScalar), 1e-12);
        const std::int64_t n = std::int64_t(ids.size());
        // the cap at work: per head, the share of scores within 10 % of it (none without a cap)
        const auto saturation = own.diagnostics.find("softcap_saturation");
        ASSERT_EQ(saturation != own.diagnostics.end(), c.spec.softcap > 0);
        if (c.spec.softcap > 0) {
            double any = 0;
            for (int h = 0; h < c.spec.heads; ++h) {
                EXPECT_NEAR(saturation->second.f32[std::size_t(h)], ref.saturation[std::size_t(layer)][std::size_t(h)], 1e-6) << h;
                any += ref.saturation[std::size_t(layer)][std::size_t(h)];
            }
            EXPECT_GT(any, 0) << "the test's cap should saturate some scores";
        }
        for (int h = 0; h < c.spec.heads; ++h) {
            const WeightTile tile = own.weights->tile(h, 0, n, 0, n);
            for (std::int64_t i = 0; i < n; ++i)
                for (std::int64_t j = 0; j < n; ++j)
                    ASSERT_NEAR(tile.at(i, j), ref.attention[std::size_t(layer)][std::size_t(h)][std::size_t(i)][std::size_t(j)], 2e-5)
                        << "layer " << layer << " head " << h << " " << i << "," << j;
        }
    }
}

TEST_P(TodayDecoder, AgreesWithADoublePrecisionForward) {
    const Case c = caseOf(GetParam());
    const TensorMap weights = writeCase(m_dir, c);
    auto info = m_engine->openModel(m_dir.string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->arch, c.spec.type);
    EXPECT_TRUE(info->causal);
    ModelInput input;
    input.ids = {1, 7, 33, 2, 19, 19, 48, 5, 11, 0, 3, 44, 9};
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    const ModelForward& f = *pass.value();
    const Reference ref = recompute(weights, c, input.ids);
    const std::size_t n = input.ids.size(), layers = std::size_t(c.spec.layers), dh = std::size_t(c.spec.headDim);
    ASSERT_EQ(f.hidden.size(), layers + 1);
    for (std::size_t l = 0; l <= layers; ++l)
        for (std::size_t t = 0; t < n; ++t)
            for (std::size_t ch = 0; ch < std::size_t(c.spec.hidden); ++ch)
                ASSERT_NEAR(f.hidden[l].f32[t * std::size_t(c.spec.hidden) + ch], ref.hidden[l][t][ch],
                            2e-4 * std::max(1.0, std::abs(ref.hidden[l][t][ch])))
                    << "hidden " << l << " " << t << " " << ch;
    for (std::size_t l = 0; l < layers; ++l)
        for (std::size_t h = 0; h < std::size_t(c.spec.heads); ++h)
            for (std::size_t i = 0; i < n; ++i) {
                for (std::size_t j = 0; j < n; ++j)
                    ASSERT_NEAR(f.attention[l].f32[(h * n + i) * n + j], ref.attention[l][h][i][j], 2e-5) << "attention " << l << "/" << h;
                for (std::size_t ch = 0; ch < dh; ++ch)  // the Q the views run on: normed and rotated
                    ASSERT_NEAR(f.qkv[l].q.f32[(h * n + i) * dh + ch], ref.q[l][h][i][ch], 1e-4) << "q " << l << "/" << h;
            }
}

INSTANTIATE_TEST_SUITE_P(Families, TodayDecoder, ::testing::Range(0, 6));

std::string refusal(const std::string& config) {
    auto parsed = parseModelConfig(config, "config.json");
    return parsed.ok() ? std::string() : parsed.error().message;
}

TEST(TodayDecoderConfig, LayerPatternsAndScalesComeFromTheConfigClassesDefaults) {
    // Gemma 2: sliding from layer 0 on, every other; caps 50 and 30 when absent
    auto gemma2 = parseModelConfig("{\"model_type\": \"gemma2\", \"num_hidden_layers\": 4}", "config.json");
    ASSERT_TRUE(gemma2.ok()) << gemma2.error().message;
    EXPECT_EQ(gemma2->llama.slidingWindow, 4096);
    EXPECT_EQ(gemma2->llama.slidingLayers, (std::vector<std::uint8_t>{1, 0, 1, 0}));
    EXPECT_EQ(gemma2->gemma.attnSoftcap, 50);
    EXPECT_EQ(gemma2->gemma.finalSoftcap, 30);
    EXPECT_EQ(gemma2->headSize, 256);
    EXPECT_EQ(gemma2->activation, Activation::GeluTanh);
    // Gemma 3: five of six sliding, no caps, the local base 10⁴ against the global 10⁶
    auto gemma3 = parseModelConfig("{\"model_type\": \"gemma3_text\", \"num_hidden_layers\": 7}", "config.json");
    ASSERT_TRUE(gemma3.ok()) << gemma3.error().message;
    EXPECT_EQ(gemma3->llama.slidingLayers, (std::vector<std::uint8_t>{1, 1, 1, 1, 1, 0, 1}));
    EXPECT_EQ(gemma3->gemma.attnSoftcap, 0);
    EXPECT_EQ(gemma3->llama.rope.theta, 1e6);
    EXPECT_EQ(gemma3->gemma.localRope.theta, 1e4);
    // layer_types wins over the pattern
    auto typed = parseModelConfig("{\"model_type\": \"gemma3_text\", \"num_hidden_layers\": 2, "
                                  "\"layer_types\": [\"full_attention\", \"sliding_attention\"]}",
                                  "config.json");
    ASSERT_TRUE(typed.ok()) << typed.error().message;
    EXPECT_EQ(typed->llama.slidingLayers, (std::vector<std::uint8_t>{0, 1}));
    // Phi-3's LongRoPE: factor 131072 / 4096 = 32
    auto phi3 = parseModelConfig("{\"model_type\": \"phi3\", \"hidden_size\": 16, \"num_attention_heads\": 4, "
                                 "\"max_position_embeddings\": 131072, \"original_max_position_embeddings\": 4096, "
                                 "\"rope_scaling\": {\"type\": \"su\", \"short_factor\": [1, 1], \"long_factor\": [2, 3]}}",
                                 "config.json");
    ASSERT_TRUE(phi3.ok()) << phi3.error().message;
    EXPECT_EQ(phi3->llama.rope.scaling, "longrope");
    EXPECT_EQ(phi3->llama.rope.factor, 32);
    EXPECT_TRUE(phi3->llama.fusedProjections);
}

TEST(TodayDecoderConfig, WhatTheForwardDoesNotComputeIsRefusedByField) {
    auto has = [](const std::string& message, const std::string& part) {
        return message.find(part) != std::string::npos;
    };
    EXPECT_TRUE(has(refusal("{\"model_type\": \"gemma2\", \"hidden_activation\": \"silu\"}"),
                    "field 'hidden_activation' must be a GeLU"));
    EXPECT_TRUE(has(refusal("{\"model_type\": \"gemma2\", \"query_pre_attn_scalar\": 0}"), "field 'query_pre_attn_scalar' must be in"));
    EXPECT_TRUE(has(refusal("{\"model_type\": \"gemma2\", \"attn_logit_softcapping\": \"50\"}"), "field 'attn_logit_softcapping' must be a number"));
    EXPECT_TRUE(has(refusal("{\"model_type\": \"gemma3_text\", \"num_hidden_layers\": 2, \"layer_types\": [\"full_attention\"]}"),
                    "field 'layer_types' must list one entry per layer (2)"));
    EXPECT_TRUE(has(refusal("{\"model_type\": \"gemma3_text\", \"sliding_window_pattern\": 0}"), "field 'sliding_window_pattern' must be in"));
    EXPECT_TRUE(has(refusal("{\"model_type\": \"gemma3\", \"text_config\": [1]}"), "config.json: field 'text_config' must be an object"));
    EXPECT_TRUE(has(refusal("{\"model_type\": \"gemma3\", \"text_config\": {\"head_dim\": 7}}"),
                    "config.json: text_config: field 'head_dim' must be even"));
    const std::string phi = "{\"model_type\": \"phi3\", \"hidden_size\": 32, \"num_attention_heads\": 4";
    const std::string phi4 = "{\"model_type\": \"phi3\", \"hidden_size\": 16, \"num_attention_heads\": 4";  // 2 frequencies
    EXPECT_TRUE(has(refusal(phi4 + ", \"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": [1], \"long_factor\": [2, 3]}}"),
                    "rope_scaling: field 'short_factor' must list 2 numbers (one per rotary frequency)"));
    EXPECT_TRUE(has(refusal(phi4 + ", \"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": [1, -1], \"long_factor\": [2, 3]}}"),
                    "'short_factor' entries must be positive numbers, got -1"));
    EXPECT_EQ(refusal(phi + ", \"partial_rotary_factor\": 0.75}"), "");  // 6 of 8 features turn
    EXPECT_TRUE(has(refusal(phi + ", \"partial_rotary_factor\": 0.125}"),
                    "field 'partial_rotary_factor' must turn an even number of features of a head (head_dim 8 gives 1)"));
}

}  // namespace
