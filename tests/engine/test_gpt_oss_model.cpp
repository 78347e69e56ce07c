// GPT-OSS checkpoints: random folders of three layers in Hugging Face naming whose every layer's own
// attention (sinks included), sink shares, router logits, expert choices and hidden states agree
// with a double-precision forward written here from the definitions — q/k/v/o biases, YaRN without
// truncation, a sliding window on layers 0 and 2, each head's sink logit in the softmax, the router's
// bias, the top 2 of 4 experts soft-maxed, the clamped SwiGLU with its biases and interleaved gate
// and up — with the experts in F32, in BF16, and in MXFP4 blocks and scales dequantized from the
// format's definition; MXFP4 blocks worked by hand; configs and files it does not read refused.

#include <attnscope/engine.h>
#include <attnscope/model_checkpoint.h>
#include <attnscope/safetensors.h>

#include "../support/decoder_reference.h"
#include "../support/tiny_llama.h"
#include "../support/tiny_model.h"
#include "io/checkpoint/mxfp4.h"

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

constexpr std::int64_t kVocab = 50, kHidden = 32, kHeads = 4, kKvHeads = 2, kHeadDim = 8, kInner = 32, kLayers = 3;
constexpr std::int64_t kExperts = 4, kTopK = 2, kWindow = 3;
constexpr double kLimit = 1.5;  // tight, so the clamps bite
constexpr double kYarnFactor = 4, kOldContext = 16;

enum class Experts { F32, BF16, MXFP4 };

struct Folder {
    TensorMap weights;            // floats as the forward reads them (BF16-rounded when stored so)
    std::map<std::string, std::vector<std::uint8_t>> packed;  // MXFP4 blocks and scales
    Experts experts = Experts::F32;
};

std::string configJson() {
    return "{\"model_type\": \"gpt_oss\", \"vocab_size\": " + std::to_string(kVocab) + ", \"hidden_size\": " + std::to_string(kHidden) +
           ", \"intermediate_size\": " + std::to_string(kInner) + ", \"num_hidden_layers\": " + std::to_string(kLayers) +
           ", \"num_attention_heads\": " + std::to_string(kHeads) + ", \"num_key_value_heads\": " + std::to_string(kKvHeads) +
           ", \"head_dim\": " + std::to_string(kHeadDim) + ", \"num_local_experts\": " + std::to_string(kExperts) +
           ", \"num_experts_per_tok\": " + std::to_string(kTopK) + ", \"sliding_window\": " + std::to_string(kWindow) +
           ", \"swiglu_limit\": " + std::to_string(kLimit) +
           ", \"max_position_embeddings\": 64, \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, \"rope_scaling\": "
           "{\"rope_type\": \"yarn\", \"factor\": 4.0, \"beta_fast\": 32.0, \"beta_slow\": 1.0, \"truncate\": false, "
           "\"original_max_position_embeddings\": 16}, \"hidden_act\": \"silu\", \"attention_bias\": true, \"bos_token_id\": 1}";
}

// Random weights; the experts' matrices as the file holds them: [E, in, out] (F32, BF16) or MXFP4
// blocks [E, out, in / 32, 16] and scales [E, out, in / 32] (kept in `packed`, dequantized into
// `weights` under the [E, in, out] name by the format's definition, for the reference).
Folder makeWeights(Experts kind) {
    std::mt19937_64 rng(11);
    Folder f;
    f.experts = kind;
    const std::string halfType = kind == Experts::BF16 ? "BF16" : "";
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, double stddev, double mean = 0.0) {
        std::normal_distribution<float> normal{float(mean), float(stddev)};
        PlainTensor x = PlainTensor::zeros(DType::F32, shape);
        for (float& v : x.f32) v = roundedAs(halfType, normal(rng));
        f.weights[name] = std::move(x);
    };
    const std::int64_t q = kHeads * kHeadDim, kv = kKvHeads * kHeadDim;
    add("embed_tokens.weight", {kVocab, kHidden}, 1.0);
    for (std::int64_t l = 0; l < kLayers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".", a = p + "self_attn.", e = p + "mlp.experts.";
        add(p + "input_layernorm.weight", {kHidden}, 0.1, 1.0);
        add(p + "post_attention_layernorm.weight", {kHidden}, 0.1, 1.0);
        for (const auto& [name, rows, cols] : {std::tuple<const char*, std::int64_t, std::int64_t>{"q_proj", q, kHidden},
                                               {"k_proj", kv, kHidden}, {"v_proj", kv, kHidden}, {"o_proj", kHidden, q}}) {
            add(a + name + ".weight", {rows, cols}, 1.0 / std::sqrt(double(cols)));
            add(a + name + ".bias", {rows}, 0.1);
        }
        add(a + "sinks", {kHeads}, 1.0);
        add(p + "mlp.router.weight", {kExperts, kHidden}, 1.0);
        add(p + "mlp.router.bias", {kExperts}, 0.5);
        add(e + "gate_up_proj_bias", {kExperts, 2 * kInner}, 0.1);
        add(e + "down_proj_bias", {kExperts, kHidden}, 0.1);
        for (const auto& [name, in, out] : {std::tuple<const char*, std::int64_t, std::int64_t>{"gate_up_proj", kHidden, 2 * kInner},
                                            {"down_proj", kInner, kHidden}}) {
            if (kind != Experts::MXFP4) {
                add(e + name, {kExperts, in, out}, 1.0 / std::sqrt(double(in)));
                continue;
            }
            // codes uniformly at random, scales 2^-4 … 2^-2: values up to 6 · 2^-2
            std::uniform_int_distribution<int> byte(0, 255), scale(123, 125);
            std::vector<std::uint8_t> blocks(std::size_t(kExperts * out * in / 2)), scales(std::size_t(kExperts * out * in / 32));
            for (auto& b : blocks) b = std::uint8_t(byte(rng));
            for (auto& s : scales) s = std::uint8_t(scale(rng));
            PlainTensor w = PlainTensor::zeros(DType::F32, {kExperts, in, out});  // [E, in, out], as the reference reads it
            static const double kCodes[16] = {0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6};
            for (std::int64_t ex = 0; ex < kExperts; ++ex)
                for (std::int64_t o = 0; o < out; ++o)
                    for (std::int64_t i = 0; i < in; ++i) {
                        const std::size_t row = std::size_t((ex * out + o) * in);
                        const std::uint8_t pair = blocks[(row + std::size_t(i)) / 2];
                        const int code = i % 2 == 0 ? (pair & 0x0F) : (pair >> 4);
                        const int exponent = int(scales[(row + std::size_t(i)) / 32]) - 127;
                        w.f32[std::size_t((ex * in + i) * out + o)] = float(kCodes[code] * std::pow(2.0, exponent));
                    }
            f.weights[e + name] = std::move(w);
            f.packed[e + name + "_blocks"] = blocks;
            f.packed[e + name + "_scales"] = scales;
        }
    }
    add("norm.weight", {kHidden}, 0.1, 1.0);
    return f;
}

void writeFolder(const fs::path& dir, const Folder& f) {
    fs::create_directories(dir);
    writeText(dir / "config.json", configJson());
    std::map<std::string, PlainTensor> packed;
    for (const auto& [name, bytes] : f.packed) {
        const bool blocks = name.size() > 7 && name.compare(name.size() - 7, 7, "_blocks") == 0;
        const bool gateUp = name.find("gate_up_proj") != std::string::npos;
        const std::int64_t out = gateUp ? 2 * kInner : kHidden, in = gateUp ? kHidden : kInner;
        packed["model." + name] = blocks ? PlainTensor::fromU8({kExperts, out, in / 32, 16}, bytes)
                                         : PlainTensor::fromU8({kExperts, out, in / 32}, bytes);
    }
    if (f.experts == Experts::BF16) {
        std::map<std::string, const PlainTensor*> named;
        for (const auto& [name, t] : f.weights) named["model." + name] = &t;
        writeHalfSafetensors(dir / "model.safetensors", "BF16", named);
        return;
    }
    std::vector<StWriteItem> items;
    for (const auto& [name, t] : f.weights) {
        const bool expertMatrix = f.experts == Experts::MXFP4 && (name.size() > 12 && name.compare(name.size() - 12, 12, "gate_up_proj") == 0 ||
                                                                  name.size() > 9 && name.compare(name.size() - 9, 9, "down_proj") == 0);
        if (!expertMatrix) items.push_back(StWriteItem("model." + name, &t));
    }
    for (const auto& [name, t] : packed) items.push_back(StWriteItem(name, &t));
    auto written = writeSafetensors((dir / "model.safetensors").string(), items, {{"format", "pt"}});
    if (!written) throw std::runtime_error(written.error().message);
}

// ---- the reference, in double ---------------------------------------------------------------

// YaRN without truncation (HF _compute_yarn_parameters): the ramp between the dims turning 32
// times and once over the old context, unrounded; cos and sin times 0.1 ln 4 + 1.
Vec yarnFrequencies() {
    Vec f = defaultFrequencies(10000.0, kHeadDim);
    auto correction = [](double turns) { return double(kHeadDim) * std::log(kOldContext / (turns * 2 * M_PI)) / (2 * std::log(10000.0)); };
    const double lo = std::max(0.0, correction(32)), hi = std::min(double(kHeadDim - 1), correction(1));
    for (std::size_t i = 0; i < f.size(); ++i) {
        const double ramp = std::clamp((double(i) - lo) / (hi - lo), 0.0, 1.0);
        f[i] = f[i] / kYarnFactor * ramp + f[i] * (1 - ramp);
    }
    return f;
}

struct Reference {
    std::vector<Mat> hidden;
    std::vector<std::vector<Mat>> attention;  // [layer][head][i][j]
    std::vector<Mat> sinkShare;               // [layer][head][i]
    std::vector<Mat> routerLogits;            // [layer][token][expert]
    std::vector<std::vector<std::vector<std::int64_t>>> chosen;  // [layer][token]: experts, by logit
};

bool slides(std::int64_t layer) { return layer % 2 == 0; }

// Row i of a head: softmax over the visible keys' scores and the sink z; the sink's share returned.
Vec sinkRow(const Mat& q, const Mat& k, std::size_t i, std::int64_t layer, double z, double& share) {
    Vec s(q.size(), -INFINITY);
    double top = z;
    for (std::size_t j = 0; j <= i; ++j) {
        if (slides(layer) && i - j >= std::size_t(kWindow)) continue;
        s[j] = 0;
        for (std::size_t c = 0; c < q[i].size(); ++c) s[j] += q[i][c] * k[j][c];
        s[j] /= std::sqrt(double(kHeadDim));
        top = std::max(top, s[j]);
    }
    double sum = std::exp(z - top);
    for (double v : s) sum += std::isinf(v) ? 0.0 : std::exp(v - top);
    Vec w(q.size(), 0.0);
    for (std::size_t j = 0; j < q.size(); ++j) w[j] = std::isinf(s[j]) ? 0.0 : std::exp(s[j] - top) / sum;
    share = std::exp(z - top) / sum;
    return w;
}

// One token through expert e: gu = x·W + b ([E, in, out] layout), gate even / up odd outputs.
Vec expertOf(const TensorMap& w, const std::string& p, std::size_t e, const Vec& x) {
    const PlainTensor& gu = w.at(p + "mlp.experts.gate_up_proj");
    const PlainTensor& down = w.at(p + "mlp.experts.down_proj");
    Vec glu(static_cast<std::size_t>(kInner));
    for (std::size_t c = 0; c < glu.size(); ++c) {
        double gate = w.at(p + "mlp.experts.gate_up_proj_bias").f32[e * 2 * kInner + 2 * c];
        double up = w.at(p + "mlp.experts.gate_up_proj_bias").f32[e * 2 * kInner + 2 * c + 1];
        for (std::size_t i = 0; i < x.size(); ++i) {
            gate += x[i] * gu.f32[(e * kHidden + i) * 2 * kInner + 2 * c];
            up += x[i] * gu.f32[(e * kHidden + i) * 2 * kInner + 2 * c + 1];
        }
        gate = std::min(gate, kLimit);
        up = std::clamp(up, -kLimit, kLimit);
        glu[c] = (up + 1) * gate / (1 + std::exp(-1.702 * gate));
    }
    Vec y(static_cast<std::size_t>(kHidden));
    for (std::size_t o = 0; o < y.size(); ++o) {
        y[o] = w.at(p + "mlp.experts.down_proj_bias").f32[e * kHidden + o];
        for (std::size_t c = 0; c < glu.size(); ++c) y[o] += glu[c] * down.f32[(e * kInner + c) * kHidden + o];
    }
    return y;
}

Reference recompute(const TensorMap& w, const std::vector<std::int64_t>& ids) {
    const std::size_t n = ids.size(), dh = kHeadDim, group = kHeads / kKvHeads;
    const Vec f = yarnFrequencies();
    const double ropeScale = 0.1 * std::log(kYarnFactor) + 1;
    Reference ref;
    Mat x(n, Vec(std::size_t(kHidden)));
    for (std::size_t t = 0; t < n; ++t)
        for (std::size_t c = 0; c < std::size_t(kHidden); ++c) x[t][c] = w.at("embed_tokens.weight").f32[std::size_t(ids[t]) * kHidden + c];
    ref.hidden.push_back(x);
    for (std::int64_t l = 0; l < kLayers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".", a = p + "self_attn.";
        const Mat normed = rms(x, w.at(p + "input_layernorm.weight"));
        const Mat q = matmulT(normed, w.at(a + "q_proj.weight"), &w.at(a + "q_proj.bias"));
        const Mat k = matmulT(normed, w.at(a + "k_proj.weight"), &w.at(a + "k_proj.bias"));
        const Mat v = matmulT(normed, w.at(a + "v_proj.weight"), &w.at(a + "v_proj.bias"));
        Mat context(n, Vec(std::size_t(kHeads) * dh, 0.0));
        ref.attention.emplace_back();
        ref.sinkShare.emplace_back();
        for (std::size_t h = 0; h < std::size_t(kHeads); ++h) {
            const std::size_t g = h / group;
            Mat qh(n), kh(n);
            for (std::size_t t = 0; t < n; ++t) {
                qh[t] = rotate(Vec(q[t].begin() + long(h * dh), q[t].begin() + long((h + 1) * dh)), t, f, ropeScale);
                kh[t] = rotate(Vec(k[t].begin() + long(g * dh), k[t].begin() + long((g + 1) * dh)), t, f, ropeScale);
            }
            Mat weights;
            Vec shares;
            for (std::size_t i = 0; i < n; ++i) {
                double share = 0;
                weights.push_back(sinkRow(qh, kh, i, l, w.at(a + "sinks").f32[h], share));
                shares.push_back(share);
                for (std::size_t j = 0; j < n; ++j)
                    for (std::size_t c = 0; c < dh; ++c) context[i][h * dh + c] += weights[i][j] * v[j][g * dh + c];
            }
            ref.attention.back().push_back(weights);
            ref.sinkShare.back().push_back(shares);
        }
        const Mat o = matmulT(context, w.at(a + "o_proj.weight"), &w.at(a + "o_proj.bias"));
        for (std::size_t t = 0; t < n; ++t)
            for (std::size_t c = 0; c < std::size_t(kHidden); ++c) x[t][c] += o[t][c];
        const Mat m = rms(x, w.at(p + "post_attention_layernorm.weight"));
        const Mat logits = matmulT(m, w.at(p + "mlp.router.weight"), &w.at(p + "mlp.router.bias"));
        ref.routerLogits.push_back(logits);
        ref.chosen.emplace_back();
        for (std::size_t t = 0; t < n; ++t) {
            std::vector<std::int64_t> order(kExperts);
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](std::int64_t x1, std::int64_t x2) { return logits[t][x1] > logits[t][x2]; });
            order.resize(kTopK);
            ref.chosen.back().push_back(order);
            // the top k's logits soft-maxed
            double total = 0;
            for (std::int64_t e : order) total += std::exp(logits[t][e] - logits[t][order[0]]);
            for (std::int64_t e : order) {
                const Vec y = expertOf(w, p, std::size_t(e), m[t]);
                const double gate = std::exp(logits[t][e] - logits[t][order[0]]) / total;
                for (std::size_t c = 0; c < std::size_t(kHidden); ++c) x[t][c] += gate * y[c];
            }
        }
        ref.hidden.push_back(l + 1 == kLayers ? rms(x, w.at("norm.weight")) : x);
    }
    return ref;
}

class GptOssModel : public LlamaFolder<::testing::TestWithParam<Experts>> {};

// Every layer's own attention as the window and `run --model DIR --layer L` ask for it: the tiles
// (rows summing to 1 minus the sink's share), the sink shares, and the layer's router.
TEST_P(GptOssModel, OwnAttentionWithSinksOfEveryLayerIsTheRecomputedOne) {
    const Folder folder = makeWeights(GetParam());
    writeFolder(m_dir, folder);
    writeTinyTokenizerJson(m_dir);
    for (int layer = 0; layer < kLayers; ++layer) {
        RunRequest request;
        request.source = ModelLayerSource{m_dir.string(), layer, true, {}, InputSpec{"the cat sat on the mat, a dog ran ."}};
        auto run = m_engine->run(request);
        ASSERT_TRUE(run.ok()) << run.error().message;
        const RunResult& r = *run.value();
        EXPECT_EQ(r.modelFamily, "gpt_oss");
        const AttentionResult& own = r.results[std::size_t(r.ownAttention)];
        EXPECT_EQ(std::get<std::int64_t>(own.params.at("window")), slides(layer) ? kWindow : 0);
        EXPECT_NE(r.ownAttentionSummary.find("a learned sink per head"), std::string::npos) << r.ownAttentionSummary;
        std::vector<std::int64_t> ids;
        for (const Token& t : r.input.tokens) ids.push_back(t.id);
        const Reference ref = recompute(folder.weights, ids);
        const std::int64_t n = std::int64_t(ids.size());
        const PlainTensor& shares = own.diagnostics.at("sink_share");
        for (int h = 0; h < kHeads; ++h) {
            const WeightTile tile = own.weights->tile(h, 0, n, 0, n);
            for (std::int64_t i = 0; i < n; ++i) {
                ASSERT_NEAR(shares.f32[std::size_t(h * n + i)], ref.sinkShare[std::size_t(layer)][std::size_t(h)][std::size_t(i)], 2e-5);
                for (std::int64_t j = 0; j < n; ++j)
                    ASSERT_NEAR(tile.at(i, j), ref.attention[std::size_t(layer)][std::size_t(h)][std::size_t(i)][std::size_t(j)], 2e-5)
                        << "layer " << layer << " head " << h << " " << i << "," << j;
            }
        }
        ASSERT_TRUE(r.modelRouting.has_value());
        EXPECT_EQ(r.modelRouting->k, kTopK);
        EXPECT_TRUE(r.modelRouting->normalize);
    }
}

TEST_P(GptOssModel, AgreesWithADoublePrecisionForward) {
    const Folder folder = makeWeights(GetParam());
    writeFolder(m_dir, folder);
    auto info = m_engine->openModel(m_dir.string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->arch, "gpt_oss");
    EXPECT_EQ(info->experts, kExperts);
    EXPECT_EQ(info->routerK, kTopK);
    EXPECT_EQ(info->expertLayers, (std::vector<std::int64_t>{0, 1, 2}));
    const bool mxfp4 = GetParam() == Experts::MXFP4;
    const bool warned = std::any_of(info->warnings.begin(), info->warnings.end(),
                                    [](const std::string& w) { return w.find("MXFP4") != std::string::npos; });
    EXPECT_EQ(warned, mxfp4);
    ModelInput input;
    input.ids = {1, 7, 33, 2, 19, 19, 48, 5, 11, 0, 3, 44, 9};
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    const ModelForward& f = *pass.value();
    const Reference ref = recompute(folder.weights, input.ids);
    const std::size_t n = input.ids.size();
    for (std::size_t l = 0; l < std::size_t(kLayers); ++l) {
        for (std::size_t h = 0; h < std::size_t(kHeads); ++h)
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < n; ++j)
                    ASSERT_NEAR(f.attention[l].f32[(h * n + i) * n + j], ref.attention[l][h][i][j], 2e-5) << l << "/" << h;
        // every expert choice: the router's logits, ranked as the model ranks them
        for (std::size_t t = 0; t < n; ++t) {
            for (std::size_t e = 0; e < std::size_t(kExperts); ++e)
                ASSERT_NEAR(f.routerLogits[l].f32[t * kExperts + e], ref.routerLogits[l][t][e], 1e-4) << l << " " << t;
            std::vector<std::int64_t> order(kExperts);
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
                return f.routerLogits[l].f32[t * kExperts + std::size_t(a)] > f.routerLogits[l].f32[t * kExperts + std::size_t(b)];
            });
            order.resize(kTopK);
            EXPECT_EQ(order, ref.chosen[l][t]) << "layer " << l << " token " << t;
        }
    }
    for (std::size_t l = 0; l <= std::size_t(kLayers); ++l)
        for (std::size_t t = 0; t < n; ++t)
            for (std::size_t c = 0; c < std::size_t(kHidden); ++c)
                ASSERT_NEAR(f.hidden[l].f32[t * kHidden + c], ref.hidden[l][t][c], 2e-4 * std::max(1.0, std::abs(ref.hidden[l][t][c])))
                    << "hidden " << l << " " << t << " " << c;
}

INSTANTIATE_TEST_SUITE_P(Experts, GptOssModel, ::testing::Values(Experts::F32, Experts::BF16, Experts::MXFP4),
                         [](const ::testing::TestParamInfo<Experts>& info) {
                             return std::string(info.param == Experts::F32 ? "F32" : info.param == Experts::BF16 ? "BF16" : "MXFP4");
                         });

// By hand: byte 0x21 holds codes 1 (low nibble, the even value: 0.5) and 2 (high: 1.0); 0xF9 codes 9
// (−0.5) and 15 (−6). Scale 128 doubles them, 125 quarters them.
TEST(Mxfp4, BlocksWorkedByHand) {
    std::vector<std::uint8_t> blocks(32, 0), scales = {128, 125};
    blocks[0] = 0x21;
    blocks[1] = 0xF9;
    blocks[16] = 0x7E;  // codes 14 (−4) and 7 (6)
    std::vector<float> out(64, -1.0f);
    dequantizeMxfp4(blocks.data(), scales.data(), 1, 2, out.data());
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], 2.0f);
    EXPECT_EQ(out[2], -1.0f);
    EXPECT_EQ(out[3], -12.0f);
    EXPECT_EQ(out[4], 0.0f);
    EXPECT_EQ(out[32], -1.0f);
    EXPECT_EQ(out[33], 1.5f);
    EXPECT_EQ(mxfp4CodeValue(8), 0.0f);
    EXPECT_TRUE(std::signbit(mxfp4CodeValue(8)));
}

TEST(GptOssConfig, DefaultsAndRefusals) {
    auto c = parseModelConfig("{\"model_type\": \"gpt_oss\", \"num_hidden_layers\": 4}", "config.json");
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->llama.slidingWindow, 128);
    EXPECT_EQ(c->llama.slidingLayers, (std::vector<std::uint8_t>{1, 0, 1, 0}));
    EXPECT_EQ(c->llama.rope.scaling, "yarn");  // the config class's default rope_scaling
    EXPECT_EQ(c->llama.rope.factor, 32);
    EXPECT_FALSE(c->llama.rope.truncate);
    EXPECT_EQ(c->moe.experts, 128);
    EXPECT_EQ(c->moe.topK, 4);
    EXPECT_TRUE(c->llama.qkvBias);
    auto refused = [](const std::string& config) {
        auto parsed = parseModelConfig(config, "config.json");
        return parsed.ok() ? std::string() : parsed.error().message;
    };
    EXPECT_NE(refused("{\"model_type\": \"gpt_oss\", \"swiglu_limit\": -1}").find("field 'swiglu_limit' must be in"), std::string::npos);
    EXPECT_NE(refused("{\"model_type\": \"gpt_oss\", \"num_experts_per_tok\": 200}").find("field 'num_experts_per_tok' must be in [1, 128]"),
              std::string::npos);
}

class GptOssFile : public LlamaFolder<::testing::Test> {};

// The head atlas's learned-sink share: the mean over queries of each head's sink weight, per layer.
TEST_F(GptOssFile, AtlasSinkShareIsEachHeadsMeanWeightOnItsSink) {
    const Folder folder = makeWeights(Experts::F32);
    writeFolder(m_dir, folder);
    auto info = m_engine->openModel(m_dir.string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->layerWindows, (std::vector<std::int64_t>{kWindow, 0, kWindow}));
    AtlasRequest request;
    request.ids = {1, 7, 33, 2, 19, 19, 48, 5, 11};
    auto atlas = m_engine->analyzeModel(request);
    ASSERT_TRUE(atlas.ok()) << atlas.error().message;
    const Reference ref = recompute(folder.weights, request.ids);
    for (std::size_t l = 0; l < std::size_t(kLayers); ++l)
        for (std::size_t h = 0; h < std::size_t(kHeads); ++h) {
            double mean = 0;
            for (double share : ref.sinkShare[l][h]) mean += share / double(request.ids.size());
            EXPECT_NEAR(atlas.value()->metrics[l * kHeads + h].sinkShare, mean, 1e-5) << l << "/" << h;
        }
}

TEST_F(GptOssFile, MxfpScalesOfAnotherTypeAreRefusedByName) {
    Folder folder = makeWeights(Experts::MXFP4);
    writeFolder(m_dir, folder);
    // rewrite one scales tensor as F32
    auto file = SafetensorsFile::open((m_dir / "model.safetensors").string());
    ASSERT_TRUE(file.ok());
    std::map<std::string, PlainTensor> all;
    for (const StTensorInfo& t : file.value()->header().tensors) all[t.name] = file.value()->read(t.name).value();
    const std::string scales = "model.layers.1.mlp.experts.down_proj_scales";
    PlainTensor asFloat = PlainTensor::zeros(DType::F32, all.at(scales).shape);
    all[scales] = asFloat;
    file.value().reset();
    std::vector<StWriteItem> items;
    for (const auto& [name, t] : all) items.push_back(StWriteItem(name, &t));
    ASSERT_TRUE(writeSafetensors((m_dir / "model.safetensors").string(), items, {}).ok());
    auto info = m_engine->openModel(m_dir.string());
    ASSERT_FALSE(info.ok());
    EXPECT_NE(info.error().message.find("'" + scales + "' has dtype F32, expected U8 (MXFP4 blocks and scales)"), std::string::npos)
        << info.error().message;
}

}  // namespace
