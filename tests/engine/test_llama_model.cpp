// Llama-family checkpoints (Hugging Face `llama`, `mistral`, `mixtral`, `qwen2`, `qwen3`, `qwen2_moe`,
// `olmoe`): random folders written here in HF naming whose hidden states, attention and rotated Q
// agree with a double-precision recomputation from the definitions — RMS norms, rotary positions
// (default, linear, llama3, yarn), grouped key/value heads, sliding windows on every layer or from
// max_window_layers on, q/k norms per head and over the projection, OLMoE's clip, SwiGLU experts
// with and without renormalised gates, Qwen2-MoE's gated shared expert and dense layers between
// sparse ones, BF16 and F16 weights — the tokenizer.model through SentencePiece with <s> first, a model
// over the memory budget refused at open, and configs the forward pass does not compute refused by name.

#include <attnscope/engine.h>
#include <attnscope/model_checkpoint.h>
#include <attnscope/neuron_terms.h>
#include <attnscope/safetensors.h>

#include "../support/decoder_reference.h"
#include "../support/tiny_llama.h"
#include "../support/tiny_model.h"
#include "../support/tiny_switch_transformers.h"
#include "torch/model/model_pass_bytes.h"
#include "torch/model/rotary_positions.h"
#include "torch/model/rotary_profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;
using namespace attnscope::testing;

namespace {

using namespace attnscope::testing::reference;

// ---- the reference, in double -------------------------------------------------------------

Mat clamp(Mat x, double bound) {
    for (auto& row : x)
        for (double& v : row) v = std::clamp(v, -bound, bound);
    return x;
}

// θ^(-2i/d), then the scaling's rule (HF modeling_rope_utils, written from its definitions)
Vec frequencies(const LlamaSpec& s, double factor, const std::string& type, double oldContext, double low, double high) {
    Vec f(std::size_t(s.headDim / 2));
    for (std::size_t i = 0; i < f.size(); ++i) {
        f[i] = std::pow(s.theta, -2.0 * double(i) / double(s.headDim));
        if (type == "linear") f[i] /= factor;
        if (type == "yarn") {
            // dims turning over beta_fast = 32 times in the old context keep f, under beta_slow = 1 get f / factor
            auto correction = [&](double turns) {
                return double(s.headDim) * std::log(oldContext / (turns * 2 * M_PI)) / (2 * std::log(s.theta));
            };
            const double lo = std::max(0.0, std::floor(correction(32))), hi = std::min(double(s.headDim - 1), std::ceil(correction(1)));
            const double ramp = std::clamp((double(i) - lo) / (hi - lo), 0.0, 1.0);
            f[i] = f[i] / factor * ramp + f[i] * (1 - ramp);
        }
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

struct Reference {
    std::vector<Mat> hidden;
    std::vector<std::vector<Mat>> attention, q;  // [layer][head]
    std::vector<std::vector<Mat>> k, qPlain, kPlain;  // [layer][head]: rotated keys, q and k before the rotation
    std::vector<Mat> routerLogits;               // Mixtral: per layer [n, E]
};

Mat swiglu(const Mat& m, const PlainTensor& gate, const PlainTensor& up, const PlainTensor& down) {
    Mat g = matmulT(m, gate, nullptr);
    const Mat u = matmulT(m, up, nullptr);
    for (std::size_t t = 0; t < g.size(); ++t)
        for (std::size_t c = 0; c < g[t].size(); ++c) g[t][c] = g[t][c] / (1 + std::exp(-g[t][c])) * u[t][c];
    return matmulT(g, down, nullptr);
}

// A sparse block: p = softmax(m · gateᵀ), the top k (ties: the lower), renormalised when the
// model says so (Mixtral always), Σ gate_e · down(silu(gate m) ⊙ up m) over those experts; Qwen2-MoE
// adds sigmoid(m · w_gate) · its shared expert.
Mat experts(const TensorMap& w, const LlamaSpec& s, const std::string& p, const Mat& m, Reference& ref) {
    const Mat logits = matmulT(m, w.at(s.routerName(p)), nullptr);
    ref.routerLogits.push_back(logits);
    const bool normalize = s.type == "mixtral" || s.normalize;
    Mat out(m.size(), Vec(m[0].size(), 0.0));
    for (std::size_t t = 0; t < m.size(); ++t) {
        std::vector<std::size_t> order(std::size_t(s.experts));
        for (std::size_t e = 0; e < order.size(); ++e) order[e] = e;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return logits[t][a] > logits[t][b]; });
        double chosen = 0, all = 0;
        for (std::int64_t c = 0; c < s.experts; ++c) {
            const double weight = std::exp(logits[t][order[c]] - logits[t][order[0]]);
            all += weight;
            if (c < s.topK) chosen += weight;
        }
        for (std::int64_t c = 0; c < s.topK; ++c) {
            const auto names = s.expertNames(p, std::int64_t(order[c]));
            const Mat y = swiglu(Mat{m[t]}, w.at(names[0]), w.at(names[1]), w.at(names[2]));
            const double gate = std::exp(logits[t][order[c]] - logits[t][order[0]]) / (normalize ? chosen : all);
            for (std::size_t d = 0; d < out[t].size(); ++d) out[t][d] += gate * y[0][d];
        }
        if (s.sharedInner == 0) continue;
        const Mat y = swiglu(Mat{m[t]}, w.at(p + "mlp.shared_expert.gate_proj.weight"), w.at(p + "mlp.shared_expert.up_proj.weight"),
                             w.at(p + "mlp.shared_expert.down_proj.weight"));
        const double gate = 1.0 / (1.0 + std::exp(-matmulT(Mat{m[t]}, w.at(p + "mlp.shared_expert_gate.weight"), nullptr)[0][0]));
        for (std::size_t d = 0; d < out[t].size(); ++d) out[t][d] += gate * y[0][d];
    }
    return out;
}

Reference recompute(const TensorMap& w, const LlamaSpec& s, const std::vector<std::int64_t>& ids, const Vec& f,
                    double ropeScale) {
    const std::size_t n = ids.size(), dh = std::size_t(s.headDim), group = std::size_t(s.heads / s.kvHeads);
    auto bias = [&](const std::string& name) { return s.qkvBias() ? &w.at(name + ".bias") : nullptr; };
    Reference ref;
    Mat x(n, Vec(std::size_t(s.hidden)));
    for (std::size_t t = 0; t < n; ++t)
        for (std::int64_t c = 0; c < s.hidden; ++c) x[t][c] = w.at("embed_tokens.weight").f32[ids[t] * s.hidden + c];
    ref.hidden.push_back(x);
    for (std::int64_t l = 0; l < s.layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        const Mat a = rms(x, w.at(p + "input_layernorm.weight"));
        Mat q = matmulT(a, w.at(p + "self_attn.q_proj.weight"), bias(p + "self_attn.q_proj"));
        Mat k = matmulT(a, w.at(p + "self_attn.k_proj.weight"), bias(p + "self_attn.k_proj"));
        Mat v = matmulT(a, w.at(p + "self_attn.v_proj.weight"), bias(p + "self_attn.v_proj"));
        if (s.wholeNorm()) {  // OLMoE: one norm over all heads' features
            q = rms(q, w.at(p + "self_attn.q_norm.weight"));
            k = rms(k, w.at(p + "self_attn.k_norm.weight"));
        }
        if (s.clip > 0) {
            q = clamp(q, s.clip);
            k = clamp(k, s.clip);
            v = clamp(v, s.clip);
        }
        auto headOf = [&](const Mat& m, std::size_t h, std::size_t t, const char* norm) {
            const Vec head(m[t].begin() + h * dh, m[t].begin() + (h + 1) * dh);
            return s.perHeadNorm() ? rmsRow(head, w.at(p + norm)) : head;  // Qwen3: each head on its own
        };
        Mat context(n, Vec(std::size_t(s.heads) * dh, 0.0));
        ref.attention.emplace_back();
        ref.q.emplace_back();
        ref.k.emplace_back();
        ref.qPlain.emplace_back();
        ref.kPlain.emplace_back();
        for (std::size_t h = 0; h < std::size_t(s.heads); ++h) {
            const std::size_t g = h / group;  // query head h reads key/value head h / group
            Mat qh(n), kh(n), qPlain(n), kPlain(n);
            for (std::size_t t = 0; t < n; ++t) {
                qPlain[t] = headOf(q, h, t, "self_attn.q_norm.weight");
                kPlain[t] = headOf(k, g, t, "self_attn.k_norm.weight");
                qh[t] = rotate(qPlain[t], t, f, ropeScale);
                kh[t] = rotate(kPlain[t], t, f, ropeScale);
            }
            ref.k.back().push_back(kh);
            ref.qPlain.back().push_back(qPlain);
            ref.kPlain.back().push_back(kPlain);
            Mat p(n, Vec(n, 0.0));
            for (std::size_t i = 0; i < n; ++i) {
                double top = -1e300, sum = 0;
                Vec score(n, -INFINITY);
                for (std::size_t j = 0; j <= i; ++j) {
                    if (s.slides(l) && i - j >= std::size_t(s.window)) continue;
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
        const Mat o = matmulT(context, w.at(p + "self_attn.o_proj.weight"),
                              s.outputBias() ? &w.at(p + "self_attn.o_proj.bias") : nullptr);
        for (std::size_t t = 0; t < n; ++t)
            for (std::int64_t c = 0; c < s.hidden; ++c) x[t][c] += o[t][c];
        const Mat m = rms(x, w.at(p + "post_attention_layernorm.weight"));
        const Mat down = s.sparse(l) ? experts(w, s, p, m, ref)
                                       : swiglu(m, w.at(p + "mlp.gate_proj.weight"), w.at(p + "mlp.up_proj.weight"),
                                                w.at(p + "mlp.down_proj.weight"));
        for (std::size_t t = 0; t < n; ++t)
            for (std::int64_t c = 0; c < s.hidden; ++c) x[t][c] += down[t][c];
        ref.hidden.push_back(l + 1 == s.layers ? rms(x, w.at("norm.weight")) : x);
    }
    return ref;
}

// The rotary profile's definition: at distance δ, the mean of q_i·k_{i−δ}/√d over i = δ … n − 1.
Vec meanScoreByDistance(const Mat& q, const Mat& k) {
    const std::size_t n = q.size(), d = q[0].size();
    Vec out(n, 0.0);
    for (std::size_t delta = 0; delta < n; ++delta) {
        for (std::size_t i = delta; i < n; ++i)
            for (std::size_t c = 0; c < d; ++c) out[delta] += q[i][c] * k[i - delta][c];
        out[delta] /= std::sqrt(double(d)) * double(n - delta);
    }
    return out;
}

at::Tensor tensorOf(const PlainTensor& t) {
    return at::from_blob(const_cast<float*>(t.f32.data()), t.shape, at::kFloat).clone();
}

// 0: Llama, grouped heads, default rotary; 1: Mistral, a window of 3 keys, biases, no prefix;
// 2: llama3 scaling whose 4 frequencies fall in all three of its regimes (wavelengths 6.3, 63:
// kept; 628: blended; 6283: divided); 3: linear scaling, one key/value head for all; 4: Mixtral,
// 4 SwiGLU experts, top 2 renormalised; 5: Qwen2, q/k/v biases without o's, a window of 3 keys on
// layer 1 only (max_window_layers 1); 6: Qwen3, q/k norms per head, all four biases, yarn with
// factor 4 over an old context of 1000 (ramp 0, 1/3, 2/3, 1 over the 4 frequencies; cos and sin
// times 0.1 ln 4 + 1); 7: Qwen2-MoE, layer 0 dense and layer 1 sparse (decoder_sparse_step 2), top
// 2 of 4 experts not renormalised, a gated shared expert; 8: OLMoE, q/k norms over the whole
// projection, q, k, v clipped to ±0.5, top 2 of 4 not renormalised, hidden 32 (its head_dim is hidden / heads); 9: Llama in BF16;
// 10: Qwen2 in F16.
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
    } else if (index == 5) {
        s.type = "qwen2";
        s.window = 3;
        s.windowFrom = 1;
    } else if (index == 6) {
        s.type = "qwen3";
        s.bias = true;
        s.rope = "{\"rope_type\": \"yarn\", \"factor\": 4.0, \"original_max_position_embeddings\": 1000}";
        type = "yarn";
        factor = 4;
    } else if (index == 7) {
        s.type = "qwen2_moe";
        s.experts = 4;
        s.normalize = false;
        s.expertInner = 12;
        s.sharedInner = 16;
        s.sparseStep = 2;
    } else if (index == 8) {
        s.type = "olmoe";
        s.hidden = 32;  // OLMoE's head_dim is hidden_size / heads
        s.experts = 4;
        s.normalize = false;
        s.expertInner = 12;
        s.clip = 0.5;
    } else if (index == 9) {
        s.halfType = "BF16";
    } else if (index == 10) {
        s.type = "qwen2";
        s.halfType = "F16";
    }
    return s;
}

}  // namespace

// The model's own attention of every layer, as the window and `run --model` ask the engine for it
// (text through the folder's tokenizer.json), against the recomputation on the same tokens:
// Mistral's and Qwen2's windows, grouped heads, q/k norms and scaled rotations included.
TEST_P(LlamaModel, OwnAttentionOfEveryLayerIsTheRecomputedOne) {
    std::string type;
    double factor = 1;
    const LlamaSpec spec = specOf(GetParam(), type, factor);
    const TensorMap weights = writeLlamaFolder(m_dir, spec);
    writeTinyTokenizerJson(m_dir);
    const double ropeScale = type == "yarn" ? 0.1 * std::log(factor) + 1 : 1.0;
    for (int layer = 0; layer < 2; ++layer) {
        RunRequest request;
        request.source = ModelLayerSource{m_dir.string(), layer, true, {}, InputSpec{"the cat sat on the mat, a dog ran ."}};
        auto run = m_engine->run(request);
        ASSERT_TRUE(run.ok()) << run.error().message;
        const RunResult& r = *run.value();
        ASSERT_EQ(r.ownAttention, 0);
        EXPECT_EQ(r.modelFamily, spec.type);
        EXPECT_EQ(r.results[0].variantId, "model_softmax");
        std::vector<std::int64_t> ids;
        for (const Token& t : r.input.tokens) ids.push_back(t.id);
        ASSERT_EQ(ids.size(), 13u);
        const Reference ref = recompute(weights, spec, ids, frequencies(spec, factor, type, 1000, 1, 4), ropeScale);
        const std::int64_t n = std::int64_t(ids.size());
        const bool slides = spec.window > 0 && layer >= spec.windowFrom;
        EXPECT_EQ(std::get<std::int64_t>(r.results[0].params.at("window")), slides ? spec.window : 0);
        for (int h = 0; h < 4; ++h) {
            const WeightTile tile = r.results[0].weights->tile(h, 0, n, 0, n);
            for (std::int64_t i = 0; i < n; ++i)
                for (std::int64_t j = 0; j < n; ++j)
                    ASSERT_NEAR(tile.at(i, j), ref.attention[std::size_t(layer)][std::size_t(h)][std::size_t(i)][std::size_t(j)], 1e-5)
                        << "layer " << layer << " head " << h << " " << i << "," << j;
            // The neuron view before the rotation: q and k as the double-precision forward has them
            // before it turns them; at the query's own position the turn cancels (YaRN's factor² aside).
            const std::size_t i = 9, l = std::size_t(layer);
            auto terms = neuronTerms(r, 0, h, std::int64_t(i), 0, n);
            ASSERT_TRUE(terms.ok()) << terms.error().message;
            ASSERT_TRUE(terms->hasRotation());
            for (std::size_t c = 0; c < 8; ++c)
                ASSERT_NEAR(terms->queryBeforeRotation[c], ref.qPlain[l][std::size_t(h)][i][c], 1e-4) << c;
            for (std::size_t j = 0; j < std::size_t(n); ++j) {
                double dot = 0;
                for (std::size_t c = 0; c < 8; ++c) dot += ref.qPlain[l][std::size_t(h)][i][c] * ref.kPlain[l][std::size_t(h)][j][c];
                ASSERT_NEAR(terms->keys[j].dotBeforeRotation, dot, 1e-4) << "key " << j;
            }
            EXPECT_NEAR(terms->keys[i].dot, terms->keys[i].dotBeforeRotation * ropeScale * ropeScale, 1e-4);
        }
    }
}

TEST_P(LlamaModel, AgreesWithADoublePrecisionRecomputation) {
    std::string type;
    double factor = 1;
    const LlamaSpec spec = specOf(GetParam(), type, factor);
    const TensorMap weights = writeLlamaFolder(m_dir, spec);
    auto info = m_engine->openModel(m_dir.string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->arch, spec.type);
    EXPECT_EQ(info->heads, 4);
    EXPECT_EQ(info->headDim, 8);
    EXPECT_TRUE(info->causal);
    ModelInput input;
    input.ids = {1, 7, 33, 2, 19, 19, 48, 5, 11, 0};
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    const ModelForward& f = *pass.value();
    const double ropeScale = type == "yarn" ? 0.1 * std::log(factor) + 1 : 1.0;
    const Reference ref = recompute(weights, spec, input.ids, frequencies(spec, factor, type, 1000, 1, 4), ropeScale);
    const std::size_t n = input.ids.size();
    ASSERT_EQ(f.hidden.size(), 3u);
    for (std::size_t l = 0; l < 3; ++l)
        for (std::size_t t = 0; t < n; ++t)
            for (std::size_t c = 0; c < std::size_t(spec.hidden); ++c)
                ASSERT_NEAR(f.hidden[l].f32[t * std::size_t(spec.hidden) + c], ref.hidden[l][t][c], 1e-4) << "hidden " << l << " " << t << " " << c;
    if (spec.experts > 0) {  // the router the model routed with, every sparse layer
        EXPECT_EQ(info->experts, spec.experts);
        EXPECT_EQ(info->routerK, 2);
        EXPECT_EQ(info->routerNormalize, spec.normalize);
        const std::vector<std::int64_t> sparse = spec.sparseStep == 2 ? std::vector<std::int64_t>{1} : std::vector<std::int64_t>{0, 1};
        EXPECT_EQ(info->expertLayers, sparse);
        // by layer: a dense layer's entry is empty (the reference keeps the sparse layers' in order)
        ASSERT_EQ(f.routerLogits.size(), 2u);
        ASSERT_EQ(ref.routerLogits.size(), sparse.size());
        if (spec.sparseStep == 2) EXPECT_TRUE(f.routerLogits[0].shape.empty());
        for (std::size_t s = 0; s < sparse.size(); ++s) {
            const PlainTensor& logits = f.routerLogits[std::size_t(sparse[s])];
            ASSERT_EQ(logits.shape, (std::vector<std::int64_t>{std::int64_t(n), spec.experts}));
            for (std::size_t t = 0; t < n; ++t)
                for (std::int64_t e = 0; e < spec.experts; ++e)
                    ASSERT_NEAR(logits.f32[t * 4 + std::size_t(e)], ref.routerLogits[s][t][std::size_t(e)], 1e-4);
        }
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
    // The Diagnostics' rotary profile: with the rotation, and with it undone (YaRN's factor too)
    std::ifstream configFile(m_dir / "config.json");
    const std::string configText((std::istreambuf_iterator<char>(configFile)), std::istreambuf_iterator<char>());
    auto config = parseModelConfig(configText, "config.json");
    ASSERT_TRUE(config.ok()) << config.error().message;
    for (std::size_t l = 0; l < 2; ++l) {
        const RotaryDistanceProfile profile =
            rotaryDistanceProfile(tensorOf(f.qkv[l].q), tensorOf(f.qkv[l].k), config->llama.rope, config->maxPositions);
        ASSERT_EQ(profile.heads, 4);
        ASSERT_EQ(profile.n, std::int64_t(n));
        EXPECT_NEAR(profile.attentionFactor, ropeScale, 1e-12);
        for (std::size_t h = 0; h < 4; ++h) {
            const Vec rotated = meanScoreByDistance(ref.q[l][h], ref.k[l][h]);
            const Vec plain = meanScoreByDistance(ref.qPlain[l][h], ref.kPlain[l][h]);
            for (std::size_t delta = 0; delta < n; ++delta) {
                ASSERT_NEAR(profile.rotatedAt(std::int64_t(h), std::int64_t(delta)), rotated[delta], 1e-4) << l << "/" << h << " " << delta;
                ASSERT_NEAR(profile.unrotatedAt(std::int64_t(h), std::int64_t(delta)), plain[delta], 1e-4) << l << "/" << h << " " << delta;
            }
            // R(0) is the identity: at distance 0 only YaRN's factor² separates the two
            EXPECT_NEAR(rotated[0], plain[0] * ropeScale * ropeScale, 1e-9);
            // the vectors before the rotation (the neuron view's), keys repeated per query head
            ASSERT_EQ(profile.headDim, 8);
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t c = 0; c < 8; ++c) {
                    ASSERT_NEAR(profile.unrotatedQ[(h * n + i) * 8 + c], ref.qPlain[l][h][i][c], 1e-4) << "q " << l << "/" << h;
                    ASSERT_NEAR(profile.unrotatedK[(h * n + i) * 8 + c], ref.kPlain[l][h][i][c], 1e-4) << "k " << l << "/" << h;
                }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Architectures, LlamaModel, ::testing::Range(0, 11));

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
    // A tokenizer.json of a shape not read here leaves the SentencePiece model to serve.
    std::ofstream(dir / "tokenizer.json") << R"({"model": {"type": "Unigram", "vocab": [["a", 0.0]], "unk_id": 0}})";
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
    request.source = ModelLayerSource{dir.string(), 1, false, {}, InputSpec{input.text}};
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
    s.rope = "{\"rope_type\": \"mrope\", \"factor\": 4.0}";
    EXPECT_NE(refused(s.configJson()).find("rope_scaling type 'mrope' is not computed (linear, dynamic, llama3, yarn and longrope are)"),
              std::string::npos);
    for (const char* type : {"linear", "dynamic", "llama3"}) {  // the reference requires their factor
        s.rope = std::string("{\"rope_type\": \"") + type + "\"}";
        EXPECT_NE(refused(s.configJson()).find(std::string("'factor' is needed by ") + type + " scaling"), std::string::npos)
            << refused(s.configJson());
    }
    s.rope = "{\"rope_type\": \"llama3\", \"factor\": 8.0}";
    EXPECT_NE(refused(s.configJson()).find("original_max_position_embeddings"), std::string::npos);
    s = LlamaSpec{};
    s.headDim = 7;
    EXPECT_NE(refused(s.configJson()).find("head_dim' must be even"), std::string::npos);
    EXPECT_NE(refused("{\"model_type\": \"llama\", \"hidden_act\": \"gelu\"}").find("must be silu"), std::string::npos);
    s = LlamaSpec{};
    s.type = "qwen2_moe";
    s.experts = 4;
    EXPECT_NE(refused(s.configJson(", \"use_sliding_window\": true")).find("'use_sliding_window' true is not computed for qwen2_moe"),
              std::string::npos);
    EXPECT_NE(refused(s.configJson(", \"mlp_only_layers\": [2]").replace(s.configJson().find("\"mlp_only_layers\": []"), 23, ""))
                  .find("'mlp_only_layers' entries must be layer indices in [0, 1], got 2"),
              std::string::npos);
    s = LlamaSpec{};
    s.type = "qwen2";
    s.window = 4;
    EXPECT_NE(refused(s.configJson(", \"layer_types\": [\"full_attention\"]")).find("'layer_types' must list one entry per layer (2)"),
              std::string::npos);
    s.rope = "{\"rope_type\": \"yarn\"}";
    EXPECT_NE(refused(s.configJson()).find("'factor' is needed by yarn scaling"), std::string::npos);
}

// YaRN, worked by hand (docs/VARIANTS.md): head_dim 8, θ 10⁴, factor 4, old context 1000. The
// dims turning 32 times and once over the old context sit at 8·ln(1000 / (32·2π)) / (2 ln 10⁴) =
// 0.70 and 8·ln(1000 / 2π) / (2 ln 10⁴) = 2.20, so the ramp runs from 0 to 3: (0, 1/3, 2/3, 1).
TEST(RotaryPositions, YarnFrequenciesOfAHandWorkedExample) {
    RopeSettings rope;
    rope.scaling = "yarn";
    rope.factor = 4;
    rope.originalMaxPositions = 1000;
    const at::Tensor f = ropeInverseFrequencies(rope, 8, 10, 64);
    const double expected[] = {1.0, 0.1 * (2.0 / 3 + 1.0 / 12), 0.01 * (1.0 / 3 + 2.0 / 12), 0.001 / 4};
    ASSERT_EQ(f.numel(), 4);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(f[i].item<float>(), expected[i], 1e-7 * std::max(1.0, expected[i] * 10)) << i;
    EXPECT_NEAR(ropeAttentionFactor(rope), 0.1 * std::log(4.0) + 1, 1e-12);
    rope.mscale = 1;
    rope.mscaleAllDim = 0.5;  // DeepSeek's form: m(4, 1) / m(4, 0.5)
    EXPECT_NEAR(ropeAttentionFactor(rope), (0.1 * std::log(4.0) + 1) / (0.05 * std::log(4.0) + 1), 1e-12);
    rope.attentionFactor = 1.5;  // given: wins
    EXPECT_DOUBLE_EQ(ropeAttentionFactor(rope), 1.5);
    rope.truncate = false;  // the ramp from 0.697 to 2.202 unrounded
    const at::Tensor g = ropeInverseFrequencies(rope, 8, 10, 64);
    const double r1 = (1 - 0.696670153321979) / (2.2018201316418846 - 0.696670153321979);
    EXPECT_NEAR(g[1].item<float>(), 0.1 / 4 * r1 + 0.1 * (1 - r1), 1e-7);
    EXPECT_NEAR(g[3].item<float>(), 0.001 / 4, 1e-10);
}

// Grouped-query heads in the atlas: heads 0-1 read key/value head 0, heads 2-3 head 1; each
// head's group similarity is the mean cosine of its attention rows with its group partner's.
TEST_F(LlamaWeights, AtlasGroupSimilarityComparesHeadsSharingAKeyValueHead) {
    const LlamaSpec spec;  // 4 query heads over 2 key/value heads
    const TensorMap weights = writeLlamaFolder(m_dir, spec);
    auto info = m_engine->openModel(m_dir.string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->kvHeads, 2);
    const std::vector<std::int64_t> ids = {1, 7, 33, 2, 19, 19, 48, 5};
    AtlasRequest request;
    request.ids = ids;
    request.settings.push_back(CoverageSetting{"", "full", {}});
    auto atlas = m_engine->analyzeModel(request);
    ASSERT_TRUE(atlas.ok()) << atlas.error().message;
    const Reference ref = recompute(weights, spec, ids, frequencies(spec, 1, "", 1000, 1, 4), 1.0);
    for (std::size_t l = 0; l < 2; ++l)
        for (std::size_t h = 0; h < 4; ++h) {
            const auto& a = ref.attention[l][h];
            const auto& b = ref.attention[l][h ^ 1];  // the other head of the pair
            double mean = 0;
            for (std::size_t i = 0; i < a.size(); ++i) {
                double dot = 0, na = 0, nb = 0;
                for (std::size_t j = 0; j < a.size(); ++j) {
                    dot += a[i][j] * b[i][j];
                    na += a[i][j] * a[i][j];
                    nb += b[i][j] * b[i][j];
                }
                mean += dot / std::sqrt(na * nb);
            }
            mean /= double(a.size());
            EXPECT_NEAR(atlas.value()->metrics[l * 4 + h].groupSimilarity, mean, 1e-5) << l << "/" << h;
        }
}

