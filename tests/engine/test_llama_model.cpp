// Llama-family checkpoints (Hugging Face `llama`, `mistral`, `mixtral`): random folders written here in HF
// naming whose hidden states, attention and rotated Q agree with a double-precision
// recomputation from the definitions — RMS norms, rotary positions (default, linear, llama3), grouped
// key/value heads, Mistral's sliding window, SwiGLU — the tokenizer.model through SentencePiece
// with <s> first, and configs the forward pass does not compute refused by name.

#include <attnscope/engine.h>
#include <attnscope/model_checkpoint.h>
#include <attnscope/safetensors.h>

#include "../support/tiny_switch_transformers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;
using namespace attnscope::testing;

namespace {

using Vec = std::vector<double>;
using Mat = std::vector<Vec>;

struct LlamaSpec {
    std::string type = "llama";
    std::int64_t vocab = 50, hidden = 24, heads = 4, kvHeads = 2, headDim = 8, inner = 40, layers = 2;
    bool bias = false;
    std::int64_t window = 0;  // mistral's sliding_window
    std::string rope = "null";  // the rope_scaling JSON
    double theta = 10000;
    std::string prefix = "model.";
    std::int64_t experts = 0, topK = 2;  // mixtral's num_local_experts, num_experts_per_tok
    std::string configJson(const std::string& extra = "") const {
        return "{\"model_type\": \"" + type + "\", \"vocab_size\": " + std::to_string(vocab) + ", \"hidden_size\": " +
               std::to_string(hidden) + ", \"num_attention_heads\": " + std::to_string(heads) +
               ", \"num_key_value_heads\": " + std::to_string(kvHeads) + ", \"head_dim\": " + std::to_string(headDim) +
               ", \"intermediate_size\": " + std::to_string(inner) + ", \"num_hidden_layers\": " + std::to_string(layers) +
               ", \"max_position_embeddings\": 64, \"rms_norm_eps\": 1e-05, \"rope_theta\": " + std::to_string(theta) +
               ", \"rope_scaling\": " + rope + ", \"attention_bias\": " + (bias ? "true" : "false") +
               ", \"hidden_act\": \"silu\", \"bos_token_id\": 1, \"eos_token_id\": 2" +
               (window > 0 ? ", \"sliding_window\": " + std::to_string(window) : std::string()) +
               (experts > 0 ? ", \"num_local_experts\": " + std::to_string(experts) + ", \"num_experts_per_tok\": " +
                                  std::to_string(topK)
                            : std::string()) +
               extra + "}";
    }
};

TensorMap llamaTensors(const LlamaSpec& s) {
    std::mt19937_64 rng(9);
    TensorMap t;
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, double stddev, double mean = 0.0) {
        std::normal_distribution<float> normal(static_cast<float>(mean), static_cast<float>(stddev));
        PlainTensor x = PlainTensor::zeros(DType::F32, shape);
        for (float& v : x.f32) v = normal(rng);
        t[name] = std::move(x);
    };
    const std::int64_t q = s.heads * s.headDim, kv = s.kvHeads * s.headDim;
    add("embed_tokens.weight", {s.vocab, s.hidden}, 1.0);
    for (std::int64_t l = 0; l < s.layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        add(p + "input_layernorm.weight", {s.hidden}, 0.1, 1.0);
        add(p + "post_attention_layernorm.weight", {s.hidden}, 0.1, 1.0);
        for (const auto& [name, rows, cols] : {std::tuple<const char*, std::int64_t, std::int64_t>{"self_attn.q_proj", q, s.hidden},
                                               {"self_attn.k_proj", kv, s.hidden}, {"self_attn.v_proj", kv, s.hidden},
                                               {"self_attn.o_proj", s.hidden, q}}) {
            add(p + name + ".weight", {rows, cols}, 1.0 / std::sqrt(double(cols)));
            if (s.bias) add(p + name + ".bias", {rows}, 0.1);
        }
        if (s.experts > 0) {
            add(p + "block_sparse_moe.gate.weight", {s.experts, s.hidden}, 1.0);
            for (std::int64_t e = 0; e < s.experts; ++e) {
                const std::string x = p + "block_sparse_moe.experts." + std::to_string(e) + ".";
                add(x + "w1.weight", {s.inner, s.hidden}, 1.0 / std::sqrt(double(s.hidden)));
                add(x + "w3.weight", {s.inner, s.hidden}, 1.0 / std::sqrt(double(s.hidden)));
                add(x + "w2.weight", {s.hidden, s.inner}, 1.0 / std::sqrt(double(s.inner)));
            }
            continue;
        }
        add(p + "mlp.gate_proj.weight", {s.inner, s.hidden}, 1.0 / std::sqrt(double(s.hidden)));
        add(p + "mlp.up_proj.weight", {s.inner, s.hidden}, 1.0 / std::sqrt(double(s.hidden)));
        add(p + "mlp.down_proj.weight", {s.hidden, s.inner}, 1.0 / std::sqrt(double(s.inner)));
    }
    add("norm.weight", {s.hidden}, 0.1, 1.0);
    return t;
}

TensorMap writeLlamaFolder(const fs::path& dir, const LlamaSpec& s) {
    fs::create_directories(dir);
    writeText(dir / "config.json", s.configJson());
    TensorMap tensors = llamaTensors(s);
    const PlainTensor head = PlainTensor::zeros(DType::F32, {s.vocab, s.hidden});  // the LM head, not read
    std::vector<StWriteItem> items{StWriteItem("lm_head.weight", &head)};
    for (const auto& [name, t] : tensors) items.push_back(StWriteItem(s.prefix + name, &t));
    auto written = writeSafetensors((dir / "model.safetensors").string(), items, {{"format", "pt"}});
    if (!written) throw std::runtime_error(written.error().message);
    return tensors;
}

// ---- the reference, in double -------------------------------------------------------------

Mat matmulT(const Mat& x, const PlainTensor& w, const PlainTensor* b) {
    const std::int64_t out = w.shape[0], in = w.shape[1];
    Mat y(x.size(), Vec(std::size_t(out), 0.0));
    for (std::size_t r = 0; r < x.size(); ++r)
        for (std::int64_t o = 0; o < out; ++o) {
            double acc = b ? b->f32[o] : 0.0;
            for (std::int64_t i = 0; i < in; ++i) acc += x[r][i] * double(w.f32[o * in + i]);
            y[r][o] = acc;
        }
    return y;
}

Mat rms(const Mat& x, const PlainTensor& w) {
    Mat y = x;
    for (auto& row : y) {
        double sq = 0;
        for (double v : row) sq += v * v;
        const double scale = 1.0 / std::sqrt(sq / double(row.size()) + 1e-5);
        for (std::size_t c = 0; c < row.size(); ++c) row[c] *= scale * w.f32[c];
    }
    return y;
}

// θ^(-2i/d), then the scaling's rule (HF modeling_rope_utils, written from its definitions)
Vec frequencies(const LlamaSpec& s, double factor, const std::string& type, double oldContext, double low, double high) {
    Vec f(std::size_t(s.headDim / 2));
    for (std::size_t i = 0; i < f.size(); ++i) {
        f[i] = std::pow(s.theta, -2.0 * double(i) / double(s.headDim));
        if (type == "linear") f[i] /= factor;
        if (type == "llama3") {
            const double wavelength = 2 * M_PI / f[i];
            if (wavelength > oldContext / low) f[i] /= factor;
            else if (wavelength >= oldContext / high) {
                const double smooth = (oldContext / wavelength - low) / (high - low);
                f[i] = (1 - smooth) * f[i] / factor + smooth * f[i];
            }
        }
    }
    return f;
}

// feature c pairs with c + d/2: (x_c, x_{c+d/2}) turned by the angle position · f_c
Vec rotate(const Vec& x, std::size_t position, const Vec& f) {
    const std::size_t half = f.size();
    Vec y(x.size());
    for (std::size_t c = 0; c < half; ++c) {
        const double a = double(position) * f[c];
        y[c] = x[c] * std::cos(a) - x[c + half] * std::sin(a);
        y[c + half] = x[c + half] * std::cos(a) + x[c] * std::sin(a);
    }
    return y;
}

struct Reference {
    std::vector<Mat> hidden;
    std::vector<std::vector<Mat>> attention, q;  // [layer][head]
    std::vector<Mat> routerLogits;               // Mixtral: per layer [n, E]
};

Mat swiglu(const Mat& m, const PlainTensor& gate, const PlainTensor& up, const PlainTensor& down) {
    Mat g = matmulT(m, gate, nullptr);
    const Mat u = matmulT(m, up, nullptr);
    for (std::size_t t = 0; t < g.size(); ++t)
        for (std::size_t c = 0; c < g[t].size(); ++c) g[t][c] = g[t][c] / (1 + std::exp(-g[t][c])) * u[t][c];
    return matmulT(g, down, nullptr);
}

// Mixtral's block: p = softmax(m · gateᵀ), the top k (ties: the lower), renormalised,
// Σ p_e / Σ p · w2(silu(w1 m) ⊙ w3 m) of those experts.
Mat mixtral(const TensorMap& w, const LlamaSpec& s, const std::string& p, const Mat& m, Reference& ref) {
    const Mat logits = matmulT(m, w.at(p + "block_sparse_moe.gate.weight"), nullptr);
    ref.routerLogits.push_back(logits);
    Mat out(m.size(), Vec(m[0].size(), 0.0));
    for (std::size_t t = 0; t < m.size(); ++t) {
        std::vector<std::size_t> order(std::size_t(s.experts));
        for (std::size_t e = 0; e < order.size(); ++e) order[e] = e;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return logits[t][a] > logits[t][b]; });
        double chosen = 0;
        for (std::int64_t c = 0; c < s.topK; ++c) chosen += std::exp(logits[t][order[c]] - logits[t][order[0]]);
        for (std::int64_t c = 0; c < s.topK; ++c) {
            const std::string x = p + "block_sparse_moe.experts." + std::to_string(order[c]) + ".";
            const Mat y = swiglu(Mat{m[t]}, w.at(x + "w1.weight"), w.at(x + "w3.weight"), w.at(x + "w2.weight"));
            const double gate = std::exp(logits[t][order[c]] - logits[t][order[0]]) / chosen;
            for (std::size_t d = 0; d < out[t].size(); ++d) out[t][d] += gate * y[0][d];
        }
    }
    return out;
}

Reference recompute(const TensorMap& w, const LlamaSpec& s, const std::vector<std::int64_t>& ids, const Vec& f) {
    const std::size_t n = ids.size(), dh = std::size_t(s.headDim), group = std::size_t(s.heads / s.kvHeads);
    auto bias = [&](const std::string& name) { return s.bias ? &w.at(name + ".bias") : nullptr; };
    Reference ref;
    Mat x(n, Vec(std::size_t(s.hidden)));
    for (std::size_t t = 0; t < n; ++t)
        for (std::int64_t c = 0; c < s.hidden; ++c) x[t][c] = w.at("embed_tokens.weight").f32[ids[t] * s.hidden + c];
    ref.hidden.push_back(x);
    for (std::int64_t l = 0; l < s.layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        const Mat a = rms(x, w.at(p + "input_layernorm.weight"));
        const Mat q = matmulT(a, w.at(p + "self_attn.q_proj.weight"), bias(p + "self_attn.q_proj"));
        const Mat k = matmulT(a, w.at(p + "self_attn.k_proj.weight"), bias(p + "self_attn.k_proj"));
        const Mat v = matmulT(a, w.at(p + "self_attn.v_proj.weight"), bias(p + "self_attn.v_proj"));
        auto headOf = [&](const Mat& m, std::size_t h, std::size_t t) { return Vec(m[t].begin() + h * dh, m[t].begin() + (h + 1) * dh); };
        Mat context(n, Vec(std::size_t(s.heads) * dh, 0.0));
        ref.attention.emplace_back();
        ref.q.emplace_back();
        for (std::size_t h = 0; h < std::size_t(s.heads); ++h) {
            const std::size_t g = h / group;  // query head h reads key/value head h / group
            Mat qh(n), kh(n);
            for (std::size_t t = 0; t < n; ++t) {
                qh[t] = rotate(headOf(q, h, t), t, f);
                kh[t] = rotate(headOf(k, g, t), t, f);
            }
            Mat p(n, Vec(n, 0.0));
            for (std::size_t i = 0; i < n; ++i) {
                double top = -1e300, sum = 0;
                Vec score(n, -INFINITY);
                for (std::size_t j = 0; j <= i; ++j) {
                    if (s.window > 0 && i - j >= std::size_t(s.window)) continue;
                    score[j] = 0;
                    for (std::size_t c = 0; c < dh; ++c) score[j] += qh[i][c] * kh[j][c];
                    score[j] /= std::sqrt(double(dh));
                    top = std::max(top, score[j]);
                }
                for (std::size_t j = 0; j < n; ++j) sum += (p[i][j] = std::isinf(score[j]) ? 0.0 : std::exp(score[j] - top));
                for (std::size_t j = 0; j < n; ++j) {
                    p[i][j] /= sum;
                    for (std::size_t c = 0; c < dh; ++c) context[i][h * dh + c] += p[i][j] * v[j][g * dh + c];
                }
            }
            ref.attention.back().push_back(p);
            ref.q.back().push_back(qh);
        }
        const Mat o = matmulT(context, w.at(p + "self_attn.o_proj.weight"), bias(p + "self_attn.o_proj"));
        for (std::size_t t = 0; t < n; ++t)
            for (std::int64_t c = 0; c < s.hidden; ++c) x[t][c] += o[t][c];
        const Mat m = rms(x, w.at(p + "post_attention_layernorm.weight"));
        const Mat down = s.experts > 0 ? mixtral(w, s, p, m, ref)
                                       : swiglu(m, w.at(p + "mlp.gate_proj.weight"), w.at(p + "mlp.up_proj.weight"),
                                                w.at(p + "mlp.down_proj.weight"));
        for (std::size_t t = 0; t < n; ++t)
            for (std::int64_t c = 0; c < s.hidden; ++c) x[t][c] += down[t][c];
        ref.hidden.push_back(l + 1 == s.layers ? rms(x, w.at("norm.weight")) : x);
    }
    return ref;
}

class LlamaModel : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("attnscope-llama-" + std::to_string(::getpid()) + "-" + std::to_string(GetParam()));
        fs::remove_all(m_dir);
        auto engine = Engine::create();
        ASSERT_TRUE(engine.ok());
        m_engine = std::move(engine.value());
    }
    void TearDown() override { fs::remove_all(m_dir); }
    fs::path m_dir;
    std::unique_ptr<Engine> m_engine;
};

// 0: Llama, grouped heads, default rotary; 1: Mistral, a window of 3 keys, biases, no prefix;
// 2: llama3 scaling whose 4 frequencies fall in all three of its regimes (wavelengths 6.3, 63:
// kept; 628: blended; 6283: divided); 3: linear scaling, one key/value head for all; 4: Mixtral,
// 4 SwiGLU experts, top 2 renormalised.
LlamaSpec specOf(int index, std::string& type, double& factor) {
    LlamaSpec s;
    factor = 1;
    type = "";
    if (index == 1) {
        s.type = "mistral";
        s.window = 3;
        s.bias = true;
        s.prefix = "";
    } else if (index == 2) {
        s.rope = "{\"rope_type\": \"llama3\", \"factor\": 8.0, \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, "
                 "\"original_max_position_embeddings\": 1000}";
        type = "llama3";
        factor = 8;
    } else if (index == 3) {
        s.rope = "{\"type\": \"linear\", \"factor\": 2.0}";
        s.kvHeads = 1;
        type = "linear";
        factor = 2;
    } else if (index == 4) {
        s.type = "mixtral";
        s.experts = 4;
        s.topK = 2;
    }
    return s;
}

}  // namespace

TEST_P(LlamaModel, AgreesWithADoublePrecisionRecomputation) {
    std::string type;
    double factor = 1;
    const LlamaSpec spec = specOf(GetParam(), type, factor);
    const TensorMap weights = writeLlamaFolder(m_dir, spec);
    auto info = m_engine->openModel(m_dir.string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->arch, "llama");
    EXPECT_EQ(info->heads, 4);
    EXPECT_EQ(info->headDim, 8);
    EXPECT_TRUE(info->causal);
    ModelInput input;
    input.ids = {1, 7, 33, 2, 19, 19, 48, 5, 11, 0};
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    const ModelForward& f = *pass.value();
    const Reference ref = recompute(weights, spec, input.ids, frequencies(spec, factor, type, 1000, 1, 4));
    const std::size_t n = input.ids.size();
    ASSERT_EQ(f.hidden.size(), 3u);
    for (std::size_t l = 0; l < 3; ++l)
        for (std::size_t t = 0; t < n; ++t)
            for (std::size_t c = 0; c < 24; ++c)
                ASSERT_NEAR(f.hidden[l].f32[t * 24 + c], ref.hidden[l][t][c], 1e-4) << "hidden " << l << " " << t << " " << c;
    if (spec.experts > 0) {  // the router the model routed with, every layer
        EXPECT_EQ(info->experts, spec.experts);
        EXPECT_EQ(info->routerK, 2);
        EXPECT_TRUE(info->routerNormalize);
        ASSERT_EQ(f.routerLogits.size(), 2u);
        for (std::size_t l = 0; l < 2; ++l)
            for (std::size_t t = 0; t < n; ++t)
                for (std::int64_t e = 0; e < spec.experts; ++e)
                    ASSERT_NEAR(f.routerLogits[l].f32[t * 4 + std::size_t(e)], ref.routerLogits[l][t][std::size_t(e)], 1e-4);
    }
    for (std::size_t l = 0; l < 2; ++l)
        for (std::size_t h = 0; h < 4; ++h)
            for (std::size_t i = 0; i < n; ++i) {
                for (std::size_t j = 0; j < n; ++j)
                    ASSERT_NEAR(f.attention[l].f32[(h * n + i) * n + j], ref.attention[l][h][i][j], 1e-5)
                        << "attention " << l << "/" << h << " " << i << "," << j;
                for (std::size_t c = 0; c < 8; ++c)  // the Q the views run on: after rotation
                    ASSERT_NEAR(f.qkv[l].q.f32[(h * n + i) * 8 + c], ref.q[l][h][i][c], 1e-4) << "q " << l << "/" << h;
            }
}

INSTANTIATE_TEST_SUITE_P(Architectures, LlamaModel, ::testing::Values(0, 1, 2, 3, 4));

// Llama's and Mixtral's folders alike (Mixtral's routing besides).
class LlamaTokenizer : public ::testing::TestWithParam<const char*> {};

TEST_P(LlamaTokenizer, TokenizerModelPutsTheBeginningTokenFirst) {
    const fs::path dir = fs::temp_directory_path() / ("attnscope-llama-tok-" + std::to_string(::getpid()) + GetParam());
    fs::remove_all(dir);
    LlamaSpec spec;
    spec.type = GetParam();
    if (spec.type == "mixtral") spec.experts = 4;
    writeLlamaFolder(dir, spec);
    writeTinySpiece(dir);  // spiece.model: the same format as tokenizer.model
    fs::rename(dir / "spiece.model", dir / "tokenizer.model");
    auto engine = Engine::create();
    ASSERT_TRUE(engine.ok());
    auto info = (*engine)->openModel(dir.string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->tokenizer, "sentencepiece");
    ModelInput input;
    input.text = "the cat sat";
    auto pass = (*engine)->forwardModel(input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    const auto& tokens = pass.value()->input.tokens;
    const std::vector<std::int64_t> expected = spmEncodeIds(dir, input.text, "tokenizer.model");
    ASSERT_EQ(tokens.size(), expected.size() + 1);
    EXPECT_EQ(tokens.front().id, 1);  // <s>
    for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(tokens[i + 1].id, expected[i]);
    // `full`, causal, on layer 1's rotated Q and shared K gives the model's own weights
    RunRequest request;
    request.input.text = input.text;
    request.model = ModelLayerSource{dir.string(), 1};
    request.variants.push_back(VariantRequest{"full", {{"causal", true}}});
    auto run = (*engine)->run(request);
    ASSERT_TRUE(run.ok()) << run.error().message;
    const AttentionResult& r = run.value()->results[0];
    const std::int64_t n = r.n;
    ASSERT_EQ(n, static_cast<std::int64_t>(tokens.size()));
    const PlainTensor& own = pass.value()->attention[1];
    double worst = 0;
    for (int h = 0; h < 4; ++h)
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                worst = std::max(worst, std::abs(double(r.weightAt(h, i, j)) - own.f32[static_cast<std::size_t>((h * n + i) * n + j)]));
    EXPECT_LT(worst, 1e-5);
    // Mixtral: the run carries the layer's router with its top-2, renormalised, dropless
    if (spec.experts > 0) {
        ASSERT_TRUE(run.value()->modelRouting.has_value());
        EXPECT_EQ(run.value()->modelRouting->k, 2);
        EXPECT_TRUE(run.value()->modelRouting->normalize);
        EXPECT_EQ(run.value()->modelRouting->expertCapacity, 0);
    }
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Types, LlamaTokenizer, ::testing::Values("llama", "mixtral"));

TEST(LlamaCheckpoint, ConfigsItDoesNotComputeAreRefusedByName) {
    const auto refused = [](const std::string& config) {
        auto parsed = parseModelConfig(config, "config.json");
        return parsed.ok() ? std::string() : parsed.error().message;
    };
    LlamaSpec s;
    s.kvHeads = 3;
    EXPECT_NE(refused(s.configJson()).find("num_key_value_heads' must divide num_attention_heads (4)"), std::string::npos);
    s = LlamaSpec{};
    s.rope = "{\"rope_type\": \"longrope\", \"factor\": 4.0}";
    EXPECT_NE(refused(s.configJson()).find("rope_scaling type 'longrope' is not computed"), std::string::npos);
    s.rope = "{\"rope_type\": \"llama3\", \"factor\": 8.0}";
    EXPECT_NE(refused(s.configJson()).find("original_max_position_embeddings"), std::string::npos);
    s = LlamaSpec{};
    s.headDim = 7;
    EXPECT_NE(refused(s.configJson()).find("head_dim' must be even"), std::string::npos);
    EXPECT_NE(refused("{\"model_type\": \"llama\", \"hidden_act\": \"gelu\"}").find("must be silu"), std::string::npos);
}
