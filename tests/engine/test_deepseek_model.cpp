// DeepSeek-V2 and V3 checkpoints (multi-head latent attention): random folders of three layers in
// Hugging Face naming whose every layer's own attention, Q and K, router logits, expert choices and
// hidden states agree with a double-precision forward written here from the definitions — queries
// through q_proj or q_a_proj → norm → q_b_proj, keys and values from the normed latent through
// kv_b_proj, one rotary key shared by every head beside each head's non-rotary key, rotary pairs
// (2i, 2i + 1) or halves, YaRN with the softmax scale's mscale², a dense first layer, then routed
// experts (V2: softmax, groups by their best, scaled; V3: sigmoid plus the correction bias, groups
// by their two best, renormalised and scaled) beside the shared experts — and configs the forward
// does not compute refused by field.

#include <attnscope/engine.h>
#include <attnscope/model_checkpoint.h>

#include "../support/decoder_reference.h"
#include "../support/tiny_llama.h"
#include "../support/tiny_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>

namespace fs = std::filesystem;
using namespace attnscope::engine;
using namespace attnscope::testing;
using namespace attnscope::testing::reference;

namespace {

constexpr std::int64_t kVocab = 50, kHidden = 32, kHeads = 4, kLatent = 12, kNope = 6, kRope = 4, kV = 5, kLayers = 3;
constexpr std::int64_t kInner = 20, kExpertInner = 8, kExperts = 4, kTopK = 2;
constexpr std::int64_t kQk = kNope + kRope;

struct Spec {
    bool v3 = false;
    std::int64_t qRank = 0;  // q_lora_rank; 0: null (one q_proj)
    bool interleave = true;
    bool yarn = true;
    bool bias = false;  // attention_bias
};

// 0: V2-Lite's shape: q_proj, softmax router over 2 groups (their best), scale 1.5, yarn with
// mscale_all_dim; 1: V3: low-rank queries, biases, sigmoid router with the correction bias, groups
// by their two best, renormalised, scale 2.5; 2: V3 with rotary halves and no scaling.
Spec specOf(int index) {
    Spec s;
    if (index >= 1) {
        s.v3 = true;
        s.qRank = 10;
        s.bias = index == 1;
    }
    if (index == 2) {
        s.interleave = false;
        s.yarn = false;
    }
    return s;
}

std::string configJson(const Spec& s) {
    std::string c = std::string("{\"model_type\": \"") + (s.v3 ? "deepseek_v3" : "deepseek_v2") + "\", \"vocab_size\": " + std::to_string(kVocab) +
                    ", \"hidden_size\": " + std::to_string(kHidden) + ", \"intermediate_size\": " + std::to_string(kInner) +
                    ", \"moe_intermediate_size\": " + std::to_string(kExpertInner) + ", \"num_hidden_layers\": " + std::to_string(kLayers) +
                    ", \"num_attention_heads\": " + std::to_string(kHeads) + ", \"num_key_value_heads\": " + std::to_string(kHeads) +
                    ", \"q_lora_rank\": " + (s.qRank > 0 ? std::to_string(s.qRank) : std::string("null")) +
                    ", \"kv_lora_rank\": " + std::to_string(kLatent) + ", \"qk_nope_head_dim\": " + std::to_string(kNope) +
                    ", \"qk_rope_head_dim\": " + std::to_string(kRope) + ", \"v_head_dim\": " + std::to_string(kV) +
                    ", \"n_routed_experts\": " + std::to_string(kExperts) + ", \"num_experts_per_tok\": " + std::to_string(kTopK) +
                    ", \"n_shared_experts\": 1, \"first_k_dense_replace\": 1, \"moe_layer_freq\": 1, \"n_group\": 2, \"topk_group\": 1" +
                    ", \"routed_scaling_factor\": " + (s.v3 ? "2.5" : "1.5") + ", \"norm_topk_prob\": " + (s.v3 ? "true" : "false") +
                    ", \"attention_bias\": " + (s.bias ? "true" : "false") + ", \"hidden_act\": \"silu\", \"max_position_embeddings\": 64" +
                    ", \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0";
    if (!s.v3) c += ", \"topk_method\": \"group_limited_greedy\", \"scoring_func\": \"softmax\"";
    if (s.v3) c += std::string(", \"rope_interleave\": ") + (s.interleave ? "true" : "false");
    c += s.yarn ? ", \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 4.0, \"original_max_position_embeddings\": 16, "
                  "\"beta_fast\": 32, \"beta_slow\": 1, \"mscale\": 0.707, \"mscale_all_dim\": 0.707}"
                : ", \"rope_scaling\": null";
    return c + "}";
}

bool sparse(std::int64_t layer) { return layer >= 1; }

TensorMap makeWeights(const Spec& s) {
    std::mt19937_64 rng(5);
    TensorMap t;
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, double stddev, double mean = 0.0) {
        std::normal_distribution<float> normal{float(mean), float(stddev)};
        PlainTensor x = PlainTensor::zeros(DType::F32, shape);
        for (float& v : x.f32) v = normal(rng);
        t[name] = std::move(x);
    };
    auto linear = [&](const std::string& name, std::int64_t rows, std::int64_t cols, bool bias) {
        add(name + ".weight", {rows, cols}, 1.0 / std::sqrt(double(cols)));
        if (bias) add(name + ".bias", {rows}, 0.1);
    };
    auto swiglu = [&](const std::string& p, std::int64_t width) {
        linear(p + "gate_proj", width, kHidden, false);
        linear(p + "up_proj", width, kHidden, false);
        linear(p + "down_proj", kHidden, width, false);
    };
    add("embed_tokens.weight", {kVocab, kHidden}, 1.0);
    for (std::int64_t l = 0; l < kLayers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".", a = p + "self_attn.";
        add(p + "input_layernorm.weight", {kHidden}, 0.1, 1.0);
        add(p + "post_attention_layernorm.weight", {kHidden}, 0.1, 1.0);
        if (s.qRank > 0) {
            linear(a + "q_a_proj", s.qRank, kHidden, s.bias);
            add(a + "q_a_layernorm.weight", {s.qRank}, 0.1, 1.0);
            linear(a + "q_b_proj", kHeads * kQk, s.qRank, false);
        } else {
            linear(a + "q_proj", kHeads * kQk, kHidden, false);
        }
        linear(a + "kv_a_proj_with_mqa", kLatent + kRope, kHidden, s.bias);
        add(a + "kv_a_layernorm.weight", {kLatent}, 0.1, 1.0);
        linear(a + "kv_b_proj", kHeads * (kNope + kV), kLatent, false);
        linear(a + "o_proj", kHidden, kHeads * kV, s.bias);
        if (!sparse(l)) {
            swiglu(p + "mlp.", kInner);
            continue;
        }
        add(p + "mlp.gate.weight", {kExperts, kHidden}, 1.0);
        if (s.v3) add(p + "mlp.gate.e_score_correction_bias", {kExperts}, 0.3);
        for (std::int64_t e = 0; e < kExperts; ++e) swiglu(p + "mlp.experts." + std::to_string(e) + ".", kExpertInner);
        swiglu(p + "mlp.shared_experts.", kExpertInner);
    }
    add("norm.weight", {kHidden}, 0.1, 1.0);
    return t;
}

// ---- the reference, in double ---------------------------------------------------------------

Vec normRow(Vec row, const PlainTensor& w, double eps) {
    double sq = 0;
    for (double v : row) sq += v * v;
    const double scale = 1.0 / std::sqrt(sq / double(row.size()) + eps);
    for (std::size_t c = 0; c < row.size(); ++c) row[c] *= scale * w.f32[c];
    return row;
}

Mat normRows(const Mat& x, const PlainTensor& w, double eps) {
    Mat y;
    for (const Vec& r : x) y.push_back(normRow(r, w, eps));
    return y;
}

double mscale(double factor, double k) { return 0.1 * k * std::log(factor) + 1; }

// YaRN over the rotary dims with truncation (HF _compute_yarn_parameters); cos and sin times
// m(4, 0.707) / m(4, 0.707) = 1.
Vec ropeFrequencies(const Spec& s) {
    Vec f = defaultFrequencies(10000.0, kRope);
    if (!s.yarn) return f;
    auto correction = [](double turns) { return double(kRope) * std::log(16.0 / (turns * 2 * M_PI)) / (2 * std::log(10000.0)); };
    const double lo = std::max(0.0, std::floor(correction(32))), hi = std::min(double(kRope - 1), std::ceil(correction(1)));
    for (std::size_t i = 0; i < f.size(); ++i) {
        const double ramp = std::clamp((double(i) - lo) / (hi - lo), 0.0, 1.0);
        f[i] = f[i] / 4.0 * ramp + f[i] * (1 - ramp);
    }
    return f;
}

// Pairs (2i, 2i + 1) turned by position · f_i, or halves (i, i + r/2) as Llama.
Vec rotatePairs(const Vec& x, std::size_t position, const Vec& f, bool interleave) {
    if (!interleave) return rotate(x, position, f, 1.0);
    Vec y = x;
    for (std::size_t i = 0; i < f.size(); ++i) {
        const double a = double(position) * f[i];
        y[2 * i] = x[2 * i] * std::cos(a) - x[2 * i + 1] * std::sin(a);
        y[2 * i + 1] = x[2 * i + 1] * std::cos(a) + x[2 * i] * std::sin(a);
    }
    return y;
}

Vec swigluRow(const TensorMap& w, const std::string& p, const Vec& x) {
    const Mat g = matmulT(Mat{x}, w.at(p + "gate_proj.weight"), nullptr), u = matmulT(Mat{x}, w.at(p + "up_proj.weight"), nullptr);
    Mat h = g;
    for (std::size_t c = 0; c < h[0].size(); ++c) h[0][c] = g[0][c] / (1 + std::exp(-g[0][c])) * u[0][c];
    return matmulT(h, w.at(p + "down_proj.weight"), nullptr)[0];
}

// DeepSeek's router for one token: scores (V2 softmax, V3 sigmoid); choice scores (V3 + bias);
// the best of 2 groups by max (V2) or top-2 sum (V3), the other group's choice scores 0; top 2
// (ties: the lower); gates the scores (V3 renormalised), times the scale.
std::vector<std::pair<std::int64_t, double>> routeOne(const Spec& s, const Vec& logits, const PlainTensor* bias) {
    Vec score(logits.size()), choice(logits.size());
    double top = *std::max_element(logits.begin(), logits.end()), total = 0;
    for (double l : logits) total += std::exp(l - top);
    for (std::size_t e = 0; e < logits.size(); ++e) {
        score[e] = s.v3 ? 1 / (1 + std::exp(-logits[e])) : std::exp(logits[e] - top) / total;
        choice[e] = score[e] + (bias ? bias->f32[e] : 0.0);
    }
    auto groupScore = [&](std::size_t g) {
        const double a = choice[2 * g], b = choice[2 * g + 1];
        return s.v3 ? a + b : std::max(a, b);
    };
    const std::size_t kept = groupScore(1) > groupScore(0) ? 1 : 0;
    for (std::size_t e = 0; e < choice.size(); ++e)
        if (e / 2 != kept) choice[e] = 0;
    std::vector<std::int64_t> order(choice.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return choice[std::size_t(a)] > choice[std::size_t(b)]; });
    double sum = 0;
    for (std::int64_t c = 0; c < kTopK; ++c) sum += score[std::size_t(order[std::size_t(c)])];
    std::vector<std::pair<std::int64_t, double>> out;
    for (std::int64_t c = 0; c < kTopK; ++c) {
        const std::int64_t e = order[std::size_t(c)];
        out.push_back({e, (s.v3 ? score[std::size_t(e)] / sum : score[std::size_t(e)]) * (s.v3 ? 2.5 : 1.5)});
    }
    return out;
}

struct Reference {
    std::vector<Mat> hidden, routerLogits;
    std::vector<std::vector<Mat>> attention, q, k;  // [layer][head]
};

Reference recompute(const TensorMap& w, const Spec& s, const std::vector<std::int64_t>& ids) {
    const std::size_t n = ids.size();
    const Vec f = ropeFrequencies(s);
    const double scale = (s.yarn ? mscale(4.0, 0.707) * mscale(4.0, 0.707) : 1.0) / std::sqrt(double(kQk));
    auto bias = [&](const std::string& name) { return s.bias ? &w.at(name + ".bias") : nullptr; };
    Reference ref;
    Mat x(n, Vec(std::size_t(kHidden)));
    for (std::size_t t = 0; t < n; ++t)
        for (std::size_t c = 0; c < std::size_t(kHidden); ++c) x[t][c] = w.at("embed_tokens.weight").f32[std::size_t(ids[t]) * kHidden + c];
    ref.hidden.push_back(x);
    for (std::int64_t l = 0; l < kLayers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".", a = p + "self_attn.";
        const Mat h = normRows(x, w.at(p + "input_layernorm.weight"), 1e-5);
        const Mat q = s.qRank > 0 ? matmulT(normRows(matmulT(h, w.at(a + "q_a_proj.weight"), bias(a + "q_a_proj")),
                                                     w.at(a + "q_a_layernorm.weight"), 1e-6),
                                            w.at(a + "q_b_proj.weight"), nullptr)
                                  : matmulT(h, w.at(a + "q_proj.weight"), nullptr);
        const Mat compressed = matmulT(h, w.at(a + "kv_a_proj_with_mqa.weight"), bias(a + "kv_a_proj_with_mqa"));
        Mat latent;
        for (const Vec& row : compressed) latent.push_back(normRow(Vec(row.begin(), row.begin() + kLatent), w.at(a + "kv_a_layernorm.weight"), 1e-6));
        const Mat kv = matmulT(latent, w.at(a + "kv_b_proj.weight"), nullptr);  // per head [nope | v]
        Mat context(n, Vec(std::size_t(kHeads * kV), 0.0));
        ref.attention.emplace_back();
        ref.q.emplace_back();
        ref.k.emplace_back();
        for (std::size_t head = 0; head < std::size_t(kHeads); ++head) {
            Mat qh(n), kh(n);
            for (std::size_t t = 0; t < n; ++t) {
                const auto qs = q[t].begin() + long(head * kQk);
                Vec qRow(qs, qs + kNope);
                const Vec qRope = rotatePairs(Vec(qs + kNope, qs + kQk), t, f, s.interleave);
                qRow.insert(qRow.end(), qRope.begin(), qRope.end());
                const auto ks = kv[t].begin() + long(head * (kNope + kV));
                Vec kRow(ks, ks + kNope);
                const Vec kRope = rotatePairs(Vec(compressed[t].begin() + kLatent, compressed[t].end()), t, f, s.interleave);
                kRow.insert(kRow.end(), kRope.begin(), kRope.end());
                qh[t] = qRow;
                kh[t] = kRow;
            }
            Mat weights(n, Vec(n, 0.0));
            for (std::size_t i = 0; i < n; ++i) {
                double top = -1e300, sum = 0;
                Vec score(i + 1);
                for (std::size_t j = 0; j <= i; ++j) {
                    for (std::size_t c = 0; c < std::size_t(kQk); ++c) score[j] += qh[i][c] * kh[j][c];
                    score[j] *= scale;
                    top = std::max(top, score[j]);
                }
                for (std::size_t j = 0; j <= i; ++j) sum += std::exp(score[j] - top);
                for (std::size_t j = 0; j <= i; ++j) {
                    weights[i][j] = std::exp(score[j] - top) / sum;
                    for (std::size_t c = 0; c < std::size_t(kV); ++c)
                        context[i][head * kV + c] += weights[i][j] * kv[j][head * (kNope + kV) + kNope + c];
                }
            }
            ref.attention.back().push_back(weights);
            ref.q.back().push_back(qh);
            ref.k.back().push_back(kh);
        }
        const Mat o = matmulT(context, w.at(a + "o_proj.weight"), bias(a + "o_proj"));
        for (std::size_t t = 0; t < n; ++t)
            for (std::size_t c = 0; c < std::size_t(kHidden); ++c) x[t][c] += o[t][c];
        const Mat m = normRows(x, w.at(p + "post_attention_layernorm.weight"), 1e-5);
        if (!sparse(l)) {
            for (std::size_t t = 0; t < n; ++t) {
                const Vec y = swigluRow(w, p + "mlp.", m[t]);
                for (std::size_t c = 0; c < std::size_t(kHidden); ++c) x[t][c] += y[c];
            }
        } else {
            const Mat logits = matmulT(m, w.at(p + "mlp.gate.weight"), nullptr);
            ref.routerLogits.push_back(logits);
            for (std::size_t t = 0; t < n; ++t) {
                const auto choices = routeOne(s, logits[t], s.v3 ? &w.at(p + "mlp.gate.e_score_correction_bias") : nullptr);
                Vec y = swigluRow(w, p + "mlp.shared_experts.", m[t]);
                for (const auto& [e, gate] : choices) {
                    const Vec ye = swigluRow(w, p + "mlp.experts." + std::to_string(e) + ".", m[t]);
                    for (std::size_t c = 0; c < y.size(); ++c) y[c] += gate * ye[c];
                }
                for (std::size_t c = 0; c < std::size_t(kHidden); ++c) x[t][c] += y[c];
            }
        }
        ref.hidden.push_back(l + 1 == kLayers ? normRows(x, w.at("norm.weight"), 1e-5) : x);
    }
    return ref;
}

void writeFolder(const fs::path& dir, const Spec& s, const TensorMap& weights) {
    fs::create_directories(dir);
    writeText(dir / "config.json", configJson(s));
    std::vector<StWriteItem> items;
    for (const auto& [name, t] : weights) items.push_back(StWriteItem("model." + name, &t));
    auto written = writeSafetensors((dir / "model.safetensors").string(), items, {{"format", "pt"}});
    if (!written) throw std::runtime_error(written.error().message);
}

class DeepseekModel : public LlamaFolder<::testing::TestWithParam<int>> {};

// Every layer's own attention as `run --model DIR --layer L` asks for it (the scale with yarn's
// mscale²), against the recomputation on the same tokens.
TEST_P(DeepseekModel, OwnAttentionOfEveryLayerIsTheRecomputedOne) {
    const Spec spec = specOf(GetParam());
    const TensorMap weights = makeWeights(spec);
    writeFolder(m_dir, spec, weights);
    writeTinyTokenizerJson(m_dir);
    for (int layer = 0; layer < kLayers; ++layer) {
        RunRequest request;
        request.source = ModelLayerSource{m_dir.string(), layer, true, {}, InputSpec{"the cat sat on the mat, a dog ran ."}};
        auto run = m_engine->run(request);
        ASSERT_TRUE(run.ok()) << run.error().message;
        const RunResult& r = *run.value();
        EXPECT_EQ(r.modelFamily, spec.v3 ? "deepseek_v3" : "deepseek_v2");
        EXPECT_NE(r.ownAttentionSummary.find("latent"), std::string::npos) << r.ownAttentionSummary;
        const AttentionResult& own = r.results[std::size_t(r.ownAttention)];
        std::vector<std::int64_t> ids;
        for (const Token& t : r.input.tokens) ids.push_back(t.id);
        const Reference ref = recompute(weights, spec, ids);
        const std::int64_t n = std::int64_t(ids.size());
        for (int h = 0; h < kHeads; ++h) {
            const WeightTile tile = own.weights->tile(h, 0, n, 0, n);
            for (std::int64_t i = 0; i < n; ++i)
                for (std::int64_t j = 0; j < n; ++j)
                    ASSERT_NEAR(tile.at(i, j), ref.attention[std::size_t(layer)][std::size_t(h)][std::size_t(i)][std::size_t(j)], 2e-5)
                        << "layer " << layer << " head " << h << " " << i << "," << j;
        }
        // the latent page: 13 tokens × 4 heads' 6 non-rotary features, made from a 12-wide latent,
        // have at most 12 non-zero singular values; each head's score split into its two products
        ASSERT_TRUE(r.latentProfile.has_value());
        const LatentAttentionProfile& latent = *r.latentProfile;
        EXPECT_EQ(latent.latentRank, kLatent);
        ASSERT_EQ(latent.keySingularValues.size(), std::size_t(n));
        EXPECT_GT(latent.keySingularValues[11], 1e-3 * latent.keySingularValues[0]);
        EXPECT_LT(latent.keySingularValues[12], 1e-4 * latent.keySingularValues[0]);
        for (std::size_t h = 0; h < std::size_t(kHeads); ++h) {
            double nope = 0, rope = 0;
            const Mat& qh = ref.q[std::size_t(layer)][h];
            const Mat& kh = ref.k[std::size_t(layer)][h];
            for (std::size_t i = 0; i < std::size_t(n); ++i)
                for (std::size_t j = 0; j <= i; ++j) {
                    double a = 0, b = 0;
                    for (std::size_t c = 0; c < std::size_t(kQk); ++c) (c < std::size_t(kNope) ? a : b) += qh[i][c] * kh[j][c];
                    nope += std::abs(a);
                    rope += std::abs(b);
                }
            const double pairs = double(n) * double(n + 1) / 2;
            EXPECT_NEAR(latent.nopeTerm[h], nope / pairs, 1e-4 * std::max(1.0, nope / pairs));
            EXPECT_NEAR(latent.ropeTerm[h], rope / pairs, 1e-4 * std::max(1.0, rope / pairs));
        }
        ASSERT_EQ(r.modelRouting.has_value(), sparse(layer));
        if (r.modelRouting) {  // the Experts tab routes with the model's own rules
            EXPECT_EQ(r.modelRouting->scoring, spec.v3 ? "sigmoid" : "softmax");
            EXPECT_EQ(r.modelRouting->expertGroups, 2);
            EXPECT_EQ(r.modelRouting->keptGroups, 1);
            EXPECT_EQ(r.modelRouting->groupScore, spec.v3 ? "top2" : "max");
            EXPECT_DOUBLE_EQ(r.modelRouting->gateScale, spec.v3 ? 2.5 : 1.5);
            ASSERT_EQ(r.modelRouting->layerChoiceBias.size(), std::size_t(kLayers));
            EXPECT_EQ(r.modelRouting->layerChoiceBias[std::size_t(layer)],
                      spec.v3 ? weights.at("layers." + std::to_string(layer) + ".mlp.gate.e_score_correction_bias").f32 : std::vector<float>{});
        }
    }
}

TEST_P(DeepseekModel, AgreesWithADoublePrecisionForward) {
    const Spec spec = specOf(GetParam());
    const TensorMap weights = makeWeights(spec);
    writeFolder(m_dir, spec, weights);
    auto info = m_engine->openModel(m_dir.string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->headDim, kQk);
    EXPECT_EQ(info->expertLayers, (std::vector<std::int64_t>{1, 2}));
    // what `route --model` routes with: the model's own rules and, per layer, its choice bias
    EXPECT_EQ(info->routerScoring, spec.v3 ? "sigmoid" : "softmax");
    EXPECT_EQ(info->routerGroups, 2);
    EXPECT_EQ(info->routerKeptGroups, 1);
    EXPECT_DOUBLE_EQ(info->routerScale, spec.v3 ? 2.5 : 1.5);
    ModelInput input;
    input.ids = {1, 7, 33, 2, 19, 19, 48, 5, 11, 0, 3, 44, 9};
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    const ModelForward& f = *pass.value();
    const Reference ref = recompute(weights, spec, input.ids);
    const std::size_t n = input.ids.size();
    for (std::size_t l = 0; l < std::size_t(kLayers); ++l)
        for (std::size_t h = 0; h < std::size_t(kHeads); ++h)
            for (std::size_t i = 0; i < n; ++i) {
                for (std::size_t j = 0; j < n; ++j)
                    ASSERT_NEAR(f.attention[l].f32[(h * n + i) * n + j], ref.attention[l][h][i][j], 2e-5) << l << "/" << h;
                for (std::size_t c = 0; c < std::size_t(kQk); ++c) {  // [nope | rope], rotated in place
                    ASSERT_NEAR(f.qkv[l].q.f32[(h * n + i) * kQk + c], ref.q[l][h][i][c], 1e-4) << "q " << l << "/" << h << " " << c;
                    ASSERT_NEAR(f.qkv[l].k.f32[(h * n + i) * kQk + c], ref.k[l][h][i][c], 1e-4) << "k " << l << "/" << h << " " << c;
                }
            }
    ASSERT_EQ(f.routerChoiceBias.size(), std::size_t(kLayers));
    EXPECT_EQ(f.routerChoiceBias[2], spec.v3 ? weights.at("layers.2.mlp.gate.e_score_correction_bias").f32 : std::vector<float>{});
    for (std::size_t s = 0; s < 2; ++s) {  // the sparse layers 1 and 2: logits and choices
        const PlainTensor& logits = f.routerLogits[s + 1];
        for (std::size_t t = 0; t < n; ++t) {
            for (std::size_t e = 0; e < std::size_t(kExperts); ++e)
                ASSERT_NEAR(logits.f32[t * kExperts + e], ref.routerLogits[s][t][e], 1e-4);
        }
    }
    for (std::size_t l = 0; l <= std::size_t(kLayers); ++l)
        for (std::size_t t = 0; t < n; ++t)
            for (std::size_t c = 0; c < std::size_t(kHidden); ++c)
                ASSERT_NEAR(f.hidden[l].f32[t * kHidden + c], ref.hidden[l][t][c], 2e-4 * std::max(1.0, std::abs(ref.hidden[l][t][c])))
                    << "hidden " << l << " " << t << " " << c;
}

INSTANTIATE_TEST_SUITE_P(Versions, DeepseekModel, ::testing::Range(0, 3));

TEST(DeepseekConfig, DefaultsAndRefusals) {
    auto v3 = parseModelConfig("{\"model_type\": \"deepseek_v3\", \"num_hidden_layers\": 5}", "config.json");
    ASSERT_TRUE(v3.ok()) << v3.error().message;
    EXPECT_EQ(v3->headSize, 192);
    EXPECT_EQ(v3->deepseek.qLoraRank, 1536);
    EXPECT_EQ(v3->moe.experts, 256);
    EXPECT_EQ(v3->moe.scoring, "sigmoid");
    EXPECT_EQ(v3->moe.expertGroups, 8);
    EXPECT_EQ(v3->moe.keptGroups, 4);
    EXPECT_EQ(v3->sparseLayers, (std::vector<std::uint8_t>{0, 0, 0, 1, 1}));
    auto lite = parseModelConfig("{\"model_type\": \"deepseek_v2\", \"q_lora_rank\": null, \"n_routed_experts\": 64}", "config.json");
    ASSERT_TRUE(lite.ok()) << lite.error().message;
    EXPECT_EQ(lite->deepseek.qLoraRank, 0);
    EXPECT_EQ(lite->moe.expertGroups, 1);  // greedy
    auto refused = [](const std::string& config) {
        auto parsed = parseModelConfig(config, "config.json");
        return parsed.ok() ? std::string() : parsed.error().message;
    };
    EXPECT_NE(refused("{\"model_type\": \"deepseek_v2\", \"n_routed_experts\": 8, \"norm_topk_prob\": true}")
                  .find("field 'norm_topk_prob' true is not computed for deepseek_v2"),
              std::string::npos);
    EXPECT_NE(refused("{\"model_type\": \"deepseek_v2\", \"n_routed_experts\": 8, \"topk_method\": \"noaux_tc\"}")
                  .find("field 'topk_method' must be greedy or group_limited_greedy"),
              std::string::npos);
    EXPECT_NE(refused("{\"model_type\": \"deepseek_v3\", \"n_group\": 3}").find("field 'n_group' must divide n_routed_experts (256)"),
              std::string::npos);
    EXPECT_NE(refused("{\"model_type\": \"deepseek_v3\", \"qk_rope_head_dim\": 7}").find("field 'qk_rope_head_dim' must be even"),
              std::string::npos);
    EXPECT_NE(refused("{\"model_type\": \"deepseek_v3\", \"v_head_dim\": 300}").find("field 'v_head_dim' must not exceed"),
              std::string::npos);
}

}  // namespace
