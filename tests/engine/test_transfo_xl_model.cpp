// A Transformer-XL checkpoint (Hugging Face TransfoXL names, no adaptive embeddings) read segment
// by segment with memory: the model's attention against a float64 recomputation written here
// from the reference's definitions (MemTransformerLM, RelPartialLearnableMultiHeadAttn) across
// three segments, the `transformer_xl` variant on a layer's Q, K, V reproducing it, and folders
// the reader refuses.

#include <attnscope/engine.h>
#include <attnscope/transfo_xl_eval_speed.h>

#include "../support/tiny_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;

namespace {

struct XlSpec {
    std::int64_t vocab = 256, d = 8, heads = 2, dh = 3, inner = 10, layers = 2, mem = 3, tgt = 4, clamp = 5;
    bool untieR = true, preLnorm = false, sameLength = false;
};

using Tensors = std::map<std::string, PlainTensor>;  // names without "transformer."

Tensors makeWeights(const XlSpec& s, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.4f);
    Tensors t;
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float offset = 0.0f) {
        PlainTensor p = PlainTensor::zeros(DType::F32, shape);
        for (auto& x : p.f32) x = offset + normal(rng);
        t[name] = std::move(p);
    };
    add("word_emb.emb_layers.0.weight", {s.vocab, s.d});
    if (!s.untieR) {
        add("r_w_bias", {s.heads, s.dh});
        add("r_r_bias", {s.heads, s.dh});
    }
    for (std::int64_t l = 0; l < s.layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        add(p + "dec_attn.qkv_net.weight", {3 * s.heads * s.dh, s.d});
        add(p + "dec_attn.r_net.weight", {s.heads * s.dh, s.d});
        add(p + "dec_attn.o_net.weight", {s.d, s.heads * s.dh});
        add(p + "dec_attn.layer_norm.weight", {s.d}, 1.0f);
        add(p + "dec_attn.layer_norm.bias", {s.d});
        if (s.untieR) {
            add(p + "dec_attn.r_w_bias", {s.heads, s.dh});
            add(p + "dec_attn.r_r_bias", {s.heads, s.dh});
        }
        add(p + "pos_ff.CoreNet.0.weight", {s.inner, s.d});
        add(p + "pos_ff.CoreNet.0.bias", {s.inner});
        add(p + "pos_ff.CoreNet.3.weight", {s.d, s.inner});
        add(p + "pos_ff.CoreNet.3.bias", {s.d});
        add(p + "pos_ff.layer_norm.weight", {s.d}, 1.0f);
        add(p + "pos_ff.layer_norm.bias", {s.d});
    }
    return t;
}

std::string configJson(const XlSpec& s, const std::string& extra = "") {
    auto flag = [](bool b) { return b ? "true" : "false"; };
    return "{\"model_type\": \"transfo-xl\", \"vocab_size\": " + std::to_string(s.vocab) + ", \"d_model\": " +
           std::to_string(s.d) + ", \"d_embed\": " + std::to_string(s.d) + ", \"n_head\": " + std::to_string(s.heads) +
           ", \"d_head\": " + std::to_string(s.dh) + ", \"d_inner\": " + std::to_string(s.inner) + ", \"n_layer\": " +
           std::to_string(s.layers) + ", \"mem_len\": " + std::to_string(s.mem) + ", \"tgt_len\": " + std::to_string(s.tgt) +
           ", \"clamp_len\": " + std::to_string(s.clamp) + ", \"same_length\": " + flag(s.sameLength) +
           ", \"untie_r\": " + flag(s.untieR) + ", \"pre_lnorm\": " + flag(s.preLnorm) +
           ", \"div_val\": 1, \"cutoffs\": [], \"layer_norm_epsilon\": 1e-05" + extra + "}";
}

void writeFolder(const fs::path& dir, const std::string& config, const Tensors& tensors) {
    fs::create_directories(dir);
    attnscope::testing::writeText(dir / "config.json", config);
    std::vector<StWriteItem> items;
    PlainTensor head = PlainTensor::zeros(DType::F32, {4, 8});  // an LM head the reader ignores
    items.push_back(StWriteItem("crit.out_layers.0.bias", &head));
    for (const auto& [name, t] : tensors) items.push_back(StWriteItem("transformer." + name, &t));
    auto written = writeSafetensors((dir / "model.safetensors").string(), items, {{"format", "pt"}});
    if (!written) throw std::runtime_error(written.error().message);
}

// ---- the reference, in double --------------------------------------------------------------

using Vec = std::vector<double>;

Vec linear(const PlainTensor& w, const Vec& x, const PlainTensor* b = nullptr) {
    const std::int64_t out = w.shape[0], in = w.shape[1];
    Vec y(static_cast<std::size_t>(out), 0.0);
    for (std::int64_t o = 0; o < out; ++o) {
        double acc = b ? b->f32[o] : 0.0;
        for (std::int64_t i = 0; i < in; ++i) acc += double(w.f32[o * in + i]) * x[i];
        y[o] = acc;
    }
    return y;
}

Vec layerNorm(const Vec& x, const PlainTensor& w, const PlainTensor& b) {
    double mean = 0, var = 0;
    for (double v : x) mean += v;
    mean /= x.size();
    for (double v : x) var += (v - mean) * (v - mean);
    var /= x.size();
    Vec y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) / std::sqrt(var + 1e-5) * w.f32[i] + b.f32[i];
    return y;
}

Vec add(Vec a, const Vec& b) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    return a;
}

// attention[layer][head][i][j] of the whole text
using Attention = std::vector<std::vector<std::vector<Vec>>>;

Attention referenceAttention(const XlSpec& s, const Tensors& w, const std::vector<int>& ids) {
    const std::int64_t n = static_cast<std::int64_t>(ids.size()), hd = s.heads * s.dh;
    const auto W = [&](std::int64_t l, const std::string& leaf) -> const PlainTensor& {
        return w.at("layers." + std::to_string(l) + "." + leaf);
    };
    std::vector<std::vector<Vec>> hidden(static_cast<std::size_t>(s.layers + 1), std::vector<Vec>(static_cast<std::size_t>(n)));
    for (std::int64_t i = 0; i < n; ++i) {
        Vec e(static_cast<std::size_t>(s.d));
        for (std::int64_t c = 0; c < s.d; ++c) e[c] = w.at("word_emb.emb_layers.0.weight").f32[ids[i] * s.d + c] * std::sqrt(double(s.d));
        hidden[0][i] = e;
    }
    const auto encoding = [&](std::int64_t delta) {
        const double p = double(s.clamp > 0 ? std::min(delta, s.clamp) : delta);
        Vec r(static_cast<std::size_t>(s.d));
        for (std::int64_t k = 0; k < s.d / 2; ++k) {
            const double f = std::pow(10000.0, -2.0 * k / double(s.d));
            r[k] = std::sin(p * f);
            r[s.d / 2 + k] = std::cos(p * f);
        }
        return r;
    };
    Attention att(static_cast<std::size_t>(s.layers),
                  std::vector<std::vector<Vec>>(static_cast<std::size_t>(s.heads), std::vector<Vec>(static_cast<std::size_t>(n), Vec(static_cast<std::size_t>(n), 0.0))));
    for (std::int64_t start = 0; start < n; start += s.tgt) {
        const std::int64_t qlen = std::min(s.tgt, n - start), memStart = std::max<std::int64_t>(0, start - s.mem);
        const std::int64_t mlen = start - memStart, klen = mlen + qlen;
        for (std::int64_t l = 0; l < s.layers; ++l) {
            const PlainTensor& u = s.untieR ? W(l, "dec_attn.r_w_bias") : w.at("r_w_bias");
            const PlainTensor& v = s.untieR ? W(l, "dec_attn.r_r_bias") : w.at("r_r_bias");
            std::vector<Vec> k(static_cast<std::size_t>(klen)), val(static_cast<std::size_t>(klen)), q(static_cast<std::size_t>(qlen));
            for (std::int64_t b = 0; b < klen; ++b) {
                Vec in = hidden[l][memStart + b];
                if (s.preLnorm) in = layerNorm(in, W(l, "dec_attn.layer_norm.weight"), W(l, "dec_attn.layer_norm.bias"));
                const Vec heads = linear(W(l, "dec_attn.qkv_net.weight"), in);
                k[b] = Vec(heads.begin() + hd, heads.begin() + 2 * hd);
                val[b] = Vec(heads.begin() + 2 * hd, heads.end());
                if (b >= mlen) q[b - mlen] = Vec(heads.begin(), heads.begin() + hd);
            }
            for (std::int64_t a = 0; a < qlen; ++a) {
                const std::int64_t i = start + a;
                Vec context(static_cast<std::size_t>(hd), 0.0);
                for (std::int64_t h = 0; h < s.heads; ++h) {
                    Vec score(static_cast<std::size_t>(klen), -INFINITY);
                    double mx = -INFINITY;
                    for (std::int64_t b = 0; b < klen; ++b) {
                        // the reference's mask: triu(1 + mlen), and with same_length tril(−mask_shift_len)
                        bool masked = b > a + mlen;
                        if (s.sameLength) {
                            const std::int64_t maskLen = klen - s.mem, shift = maskLen > 0 ? qlen - maskLen : qlen;
                            masked = masked || b <= a - shift;
                        }
                        if (masked) continue;
                        const Vec r = linear(W(l, "dec_attn.r_net.weight"), encoding(mlen + a - b));
                        double sc = 0;
                        for (std::int64_t c = 0; c < s.dh; ++c) {
                            const double qc = q[a][h * s.dh + c];
                            sc += (qc + u.f32[h * s.dh + c]) * k[b][h * s.dh + c] + (qc + v.f32[h * s.dh + c]) * r[h * s.dh + c];
                        }
                        score[b] = sc / std::sqrt(double(s.dh));
                        mx = std::max(mx, score[b]);
                    }
                    double z = 0;
                    for (double x : score) z += std::isfinite(x) ? std::exp(x - mx) : 0.0;
                    for (std::int64_t b = 0; b < klen; ++b) {
                        const double p = std::isfinite(score[b]) ? std::exp(score[b] - mx) / z : 0.0;
                        att[l][h][i][memStart + b] = p;
                        for (std::int64_t c = 0; c < s.dh; ++c) context[h * s.dh + c] += p * val[b][h * s.dh + c];
                    }
                }
                const Vec attnOut = linear(W(l, "dec_attn.o_net.weight"), context);
                Vec out = add(hidden[l][i], attnOut);
                if (!s.preLnorm) out = layerNorm(out, W(l, "dec_attn.layer_norm.weight"), W(l, "dec_attn.layer_norm.bias"));
                const auto core = [&](const Vec& x) {
                    Vec inner = linear(W(l, "pos_ff.CoreNet.0.weight"), x, &W(l, "pos_ff.CoreNet.0.bias"));
                    for (double& e : inner) e = std::max(e, 0.0);
                    return linear(W(l, "pos_ff.CoreNet.3.weight"), inner, &W(l, "pos_ff.CoreNet.3.bias"));
                };
                const PlainTensor& nw = W(l, "pos_ff.layer_norm.weight");
                const PlainTensor& nb = W(l, "pos_ff.layer_norm.bias");
                hidden[l + 1][i] = s.preLnorm ? add(out, core(layerNorm(out, nw, nb))) : layerNorm(add(out, core(out)), nw, nb);
            }
        }
    }
    return att;
}

class TransfoXlModel : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        if (GetParam() == 1) {
            m_spec.untieR = false;
            m_spec.preLnorm = true;
            m_spec.sameLength = true;
            m_spec.clamp = -1;
        }
        m_dir = fs::temp_directory_path() / ("attnscope-transfo-xl-" + std::to_string(GetParam()) + "-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        m_weights = makeWeights(m_spec, 40 + GetParam());
        writeFolder(m_dir, configJson(m_spec), m_weights);
        auto engine = Engine::create();
        ASSERT_TRUE(engine.ok());
        m_engine = std::move(engine.value());
    }
    void TearDown() override { fs::remove_all(m_dir); }

    XlSpec m_spec;
    Tensors m_weights;
    fs::path m_dir;
    std::unique_ptr<Engine> m_engine;
};

const std::string kText = "segment one";  // 11 bytes: segments of 4, 4 and 3

}  // namespace

TEST_P(TransfoXlModel, AttentionMatchesTheReferenceAcrossThreeSegments) {
    auto info = m_engine->openModel(m_dir.string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->arch, "transfo-xl");
    EXPECT_EQ(info->tokenizer, "bytes");
    EXPECT_EQ(info->headDim, m_spec.dh);
    ModelInput input;
    input.text = kText;
    auto forward = m_engine->forwardModel(input);
    ASSERT_TRUE(forward.ok()) << forward.error().message;
    std::vector<int> ids(kText.begin(), kText.end());
    const Attention ref = referenceAttention(m_spec, m_weights, ids);
    const std::size_t n = ids.size();
    double worst = 0;
    for (std::size_t l = 0; l < 2; ++l)
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < n; ++j)
                    worst = std::max(worst, std::abs(forward.value()->attention[l].f32[(h * n + i) * n + j] - ref[l][h][i][j]));
    EXPECT_LT(worst, 1e-5);
    // memory is used: query 4 (first of the second segment) sees key 2, cached from the first
    EXPECT_GT(ref[1][0][4][2], 0.0);
}

TEST_P(TransfoXlModel, TheVariantOnALayersQkvReproducesTheModel) {
    std::vector<int> ids(kText.begin(), kText.end());
    const Attention ref = referenceAttention(m_spec, m_weights, ids);
    for (int layer : {0, 1}) {
        RunRequest request;
        request.source = ModelLayerSource{m_dir.string(), layer, false, {}, InputSpec{kText}};
        request.variants.push_back(VariantRequest{"transformer_xl", {}});  // L, M, same_length from the model
        auto run = m_engine->run(request);
        ASSERT_TRUE(run.ok()) << run.error().message;
        const AttentionResult& r = run.value()->results[0];
        EXPECT_EQ(std::get<std::int64_t>(r.params.at("segment")), m_spec.tgt);
        EXPECT_EQ(std::get<std::int64_t>(r.params.at("memory")), m_spec.mem);
        EXPECT_EQ(std::get<bool>(r.params.at("same_length")), m_spec.sameLength);
        EXPECT_EQ(r.diagnostics.at("pos_keys").shape, (std::vector<std::int64_t>{2, m_spec.mem + m_spec.tgt, m_spec.dh}));
        double worst = 0;
        for (int h = 0; h < 2; ++h)
            for (std::int64_t i = 0; i < r.n; ++i)
                for (std::int64_t j = 0; j < r.n; ++j) worst = std::max(worst, std::abs(r.weightAt(h, i, j) - ref[layer][h][i][j]));
        EXPECT_LT(worst, 1e-5) << "layer " << layer;
    }
}

// The model's own attention, as the window and `run --model` ask for it (no variant named): the
// memory across three segments, the relative terms, same_length, against the reference.
TEST_P(TransfoXlModel, OwnAttentionOfEveryLayerIsTheReferences) {
    std::vector<int> ids(kText.begin(), kText.end());
    const Attention ref = referenceAttention(m_spec, m_weights, ids);
    for (int layer : {0, 1}) {
        RunRequest request;
        request.source = ModelLayerSource{m_dir.string(), layer, true, {}, InputSpec{kText}};
        auto run = m_engine->run(request);
        ASSERT_TRUE(run.ok()) << run.error().message;
        ASSERT_EQ(run.value()->ownAttention, 0);
        ASSERT_EQ(run.value()->results.size(), 1u);
        const AttentionResult& r = run.value()->results[0];
        EXPECT_EQ(r.variantId, "transformer_xl");
        EXPECT_EQ(std::get<std::int64_t>(r.params.at("segment")), m_spec.tgt);
        EXPECT_EQ(std::get<std::int64_t>(r.params.at("memory")), m_spec.mem);
        EXPECT_NE(run.value()->ownAttentionSummary.find("memory"), std::string::npos);
        for (int h = 0; h < 2; ++h) {
            const WeightTile tile = r.weights->tile(h, 0, r.n, 0, r.n);
            for (std::int64_t i = 0; i < r.n; ++i)
                for (std::int64_t j = 0; j < r.n; ++j)
                    ASSERT_NEAR(tile.at(i, j), ref[std::size_t(layer)][std::size_t(h)][std::size_t(i)][std::size_t(j)], 1e-5)
                        << "layer " << layer << " head " << h << " " << i << "," << j;
        }
    }
}

TEST_P(TransfoXlModel, ReceptiveFieldRollsOutTheModelsAttentionAcrossSegments) {
    ASSERT_TRUE(m_engine->openModel(m_dir.string()).ok());
    auto bands = m_engine->modelAttentionBands(kText);
    ASSERT_TRUE(bands.ok()) << bands.error().message;
    const ModelAttentionBands& b = *bands.value();
    EXPECT_EQ(b.layout.segment, m_spec.tgt);
    EXPECT_EQ(b.layout.memory, m_spec.mem);
    ASSERT_EQ(b.layers.size(), 2u);
    std::vector<int> ids(kText.begin(), kText.end());
    const Attention ref = referenceAttention(m_spec, m_weights, ids);
    const std::size_t n = ids.size();
    // the rollout of the last query, from the reference's attention in double: Ã = ½ mean + ½ I
    std::vector<double> expected(n, 0.0);
    expected[n - 1] = 1.0;
    for (int l = 1; l >= 0; --l) {
        std::vector<double> next(n, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            double total = 0;
            std::vector<double> row(n);
            for (std::size_t j = 0; j < n; ++j)
                total += row[j] = 0.25 * (ref[static_cast<std::size_t>(l)][0][i][j] + ref[static_cast<std::size_t>(l)][1][i][j]) + (i == j ? 0.5 : 0.0);
            for (std::size_t j = 0; j < n; ++j) next[j] += expected[i] * row[j] / total;
        }
        expected = next;
    }
    auto field = receptiveField(b.layout, static_cast<std::int64_t>(n) - 1, b.layers);
    ASSERT_TRUE(field.ok()) << field.error().message;
    for (std::size_t j = 0; j < n; ++j) EXPECT_NEAR(field.value().flow[2][j], expected[j], 1e-5) << "position " << j;
    // through two layers the last segment (8 … 10) draws on positions before it, down to reach[2]
    // (1 with memory 3; 6 with same_length, which steps back M − 1 per layer)
    const std::int64_t reach = field.value().reach[2];
    EXPECT_EQ(reach, m_spec.sameLength ? 6 : 1);
    EXPECT_GT(field.value().flow[2][static_cast<std::size_t>(reach)], 0.0);
}

TEST(TransfoXlReceptiveField, RefusedWithoutATransformerXlModel) {
    auto engine = Engine::create();
    ASSERT_TRUE(engine.ok());
    auto none = engine.value()->modelAttentionBands("text");
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().message.find("no model is open"), std::string::npos);
    auto tooLong = [&] {
        XlSpec spec;
        const fs::path dir = fs::temp_directory_path() / ("attnscope-xl-rf-" + std::to_string(::getpid()));
        writeFolder(dir, configJson(spec), makeWeights(spec, 3));
        EXPECT_TRUE(engine.value()->openModel(dir.string()).ok());
        auto r = engine.value()->modelAttentionBands(std::string(Engine::kMaxReceptiveFieldTokens + 1, 'a'));
        fs::remove_all(dir);
        return r;
    }();
    ASSERT_FALSE(tooLong.ok());
    EXPECT_NE(tooLong.error().message.find("at most 4096 tokens"), std::string::npos) << tooLong.error().message;
}

INSTANTIATE_TEST_SUITE_P(Options, TransfoXlModel, ::testing::Values(0, 1));

TEST(TransfoXlModelFolder, RefusedWithTheReason) {
    const fs::path dir = fs::temp_directory_path() / ("attnscope-transfo-xl-bad-" + std::to_string(::getpid()));
    XlSpec spec;
    auto engine = Engine::create();
    ASSERT_TRUE(engine.ok());
    // adaptive embeddings: div_val 4, or cutoffs
    const auto replaced = [](std::string text, const std::string& from, const std::string& to) {
        return text.replace(text.find(from), from.size(), to);
    };
    for (const std::string& config : {replaced(configJson(spec), "\"div_val\": 1", "\"div_val\": 4"),
                                      replaced(configJson(spec), "\"cutoffs\": []", "\"cutoffs\": [100]")}) {
        fs::remove_all(dir);
        writeFolder(dir, config, makeWeights(spec, 3));
        auto adaptive = engine.value()->openModel(dir.string());
        ASSERT_FALSE(adaptive.ok());
        EXPECT_NE(adaptive.error().message.find("only div_val 1 without cutoffs"), std::string::npos) << adaptive.error().message;
    }
    // a missing tensor, named
    fs::remove_all(dir);
    Tensors missing = makeWeights(spec, 3);
    missing.erase("layers.1.dec_attn.r_net.weight");
    writeFolder(dir, configJson(spec), missing);
    auto noTensor = engine.value()->openModel(dir.string());
    ASSERT_FALSE(noTensor.ok());
    EXPECT_NE(noTensor.error().message.find("transformer.layers.1.dec_attn.r_net.weight"), std::string::npos)
        << noTensor.error().message;
    // a mis-shaped tensor, named
    fs::remove_all(dir);
    Tensors shaped = makeWeights(spec, 3);
    shaped["layers.0.dec_attn.r_r_bias"] = PlainTensor::zeros(DType::F32, {spec.heads, spec.dh + 1});
    writeFolder(dir, configJson(spec), shaped);
    auto badShape = engine.value()->openModel(dir.string());
    ASSERT_FALSE(badShape.ok());
    EXPECT_NE(badShape.error().message.find("layers.0.dec_attn.r_r_bias"), std::string::npos) << badShape.error().message;
    fs::remove_all(dir);
}

TEST(TransfoXlEvalSpeed, MeasuresBothModesAndRefusesBadSettings) {
    EvalSpeedSettings settings;
    settings.segment = 8;
    settings.tokens = 32;
    settings.windows = 3;
    auto point = measureTransfoXlEvalSpeed(settings, 16);
    ASSERT_TRUE(point.ok()) << point.error().message;
    EXPECT_EQ(point->length, 16);
    EXPECT_GT(point->memorySecondsPerToken, 0.0);
    EXPECT_GT(point->recomputeSecondsPerToken, 0.0);
    EXPECT_DOUBLE_EQ(point->ratio(), point->recomputeSecondsPerToken / point->memorySecondsPerToken);
    for (std::int64_t length : {std::int64_t{0}, EvalSpeedSettings::kMaxLength + 1}) {
        auto bad = measureTransfoXlEvalSpeed(settings, length);
        ASSERT_FALSE(bad.ok());
        EXPECT_EQ(bad.error().code, ErrorCode::InvalidArgument);
    }
    settings.windows = 0;
    EXPECT_FALSE(measureTransfoXlEvalSpeed(settings, 16).ok());
    settings.windows = 3;
    auto cancelled = measureTransfoXlEvalSpeed(settings, 16, [](const Progress&) { return false; });
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().code, ErrorCode::Cancelled);
}
