// The Star-Transformer's cycles against a float64 recomputation written here from fastNLP's
// definition (open and closed ring, padding, T = 1 and 4, several heads), the rows of every weight
// tensor summing to 1, the random model, and folders refused naming the tensor at fault.

#include <attnscope/engine.h>
#include <attnscope/safetensors.h>
#include <attnscope/train.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <unistd.h>

using namespace attnscope::engine;
namespace fs = std::filesystem;

namespace {

struct Spec {
    std::int64_t hidden = 6, heads = 2, headDim = 3, cycles = 2, maxLen = 0;
    bool cyclic = false;
    double eps = 1e-6, slope = 0.01;  // written to config.json when not fastNLP's
};

using Tensors = std::map<std::string, PlainTensor>;
using Vec = std::vector<double>;

Tensors makeWeights(const Spec& s, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.4f);
    Tensors t;
    const auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float offset = 0) {
        PlainTensor p = PlainTensor::zeros(DType::F32, shape);
        for (auto& x : p.f32) x = offset + normal(rng);
        t[name] = p;
    };
    const std::int64_t inner = s.heads * s.headDim;
    add("embedding.weight", {256, s.hidden});
    if (s.maxLen > 0) add("pos_emb.weight", {s.maxLen, s.hidden});
    for (std::int64_t c = 0; c < s.cycles; ++c) {
        const std::string i = std::to_string(c);
        add("norm." + i + ".weight", {s.hidden}, 1.0f);
        add("norm." + i + ".bias", {s.hidden});
        for (const char* block : {"ring_att.", "star_att."}) {
            for (const char* m : {"WQ", "WK", "WV"}) {
                add(block + i + "." + m + ".weight", {inner, s.hidden, 1, 1});
                add(block + i + "." + m + ".bias", {inner});
            }
            add(block + i + ".WO.weight", {s.hidden, inner, 1, 1});
            add(block + i + ".WO.bias", {s.hidden});
        }
    }
    return t;
}

void writeFolder(const fs::path& dir, const Spec& s, const Tensors& tensors, std::int64_t vocab = 256) {
    fs::create_directories(dir);
    std::ofstream(dir / "config.json") << "{\"model_type\": \"star-transformer\", \"hidden_size\": " << s.hidden
                                       << ", \"num_layers\": " << s.cycles << ", \"num_head\": " << s.heads
                                       << ", \"head_dim\": " << s.headDim << ", \"max_len\": " << s.maxLen
                                       << ", \"cyclic\": " << (s.cyclic ? "true" : "false") << ", \"vocab_size\": " << vocab
                                       << (s.eps != 1e-6 ? ", \"layer_norm_eps\": " + std::to_string(s.eps) : std::string())
                                       << (s.slope != 0.01 ? ", \"negative_slope\": " + std::to_string(s.slope) : std::string()) << "}";
    std::vector<StWriteItem> items;
    for (const auto& [name, t] : tensors) items.push_back(StWriteItem(name, &t));
    ASSERT_TRUE(writeSafetensors((dir / "model.safetensors").string(), items, {}).ok());
}

// ---- float64 reference, straight from the definition

Vec linear(const PlainTensor& w, const PlainTensor& b, const Vec& x) {  // w [out, in, 1, 1]
    const std::size_t out = static_cast<std::size_t>(w.shape[0]), in = static_cast<std::size_t>(w.shape[1]);
    Vec y(out);
    for (std::size_t o = 0; o < out; ++o) {
        double s = b.f32[o];
        for (std::size_t i = 0; i < in; ++i) s += static_cast<double>(w.f32[o * in + i]) * x[i];
        y[o] = s;
    }
    return y;
}

Vec layerNorm(const Vec& x, const PlainTensor& g, const PlainTensor& b, double eps) {
    double mean = 0, var = 0;
    for (double v : x) mean += v;
    mean /= static_cast<double>(x.size());
    for (double v : x) var += (v - mean) * (v - mean);
    var /= static_cast<double>(x.size());
    Vec y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) / std::sqrt(var + eps) * g.f32[i] + b.f32[i];
    return y;
}

Vec leaky(Vec x, double slope) {
    for (auto& v : x) v = v > 0 ? v : slope * v;
    return x;
}

struct Reference {
    std::vector<std::vector<Vec>> nodes;  // [T + 1][n][D]
    std::vector<Vec> relay;               // [T + 1][D]
    std::vector<std::vector<std::vector<Vec>>> ring;  // [T][H][n][5]
    std::vector<std::vector<Vec>> relayW;             // [T][H][n + 1]
};

Reference reference(const Spec& s, const Tensors& w, const std::string& text, const std::vector<std::uint8_t>& pad) {
    const std::size_t n = text.size(), D = static_cast<std::size_t>(s.hidden), H = static_cast<std::size_t>(s.heads),
                      d = static_cast<std::size_t>(s.headDim);
    const auto W = [&](const std::string& name) -> const PlainTensor& { return w.at(name); };
    std::vector<Vec> e(n, Vec(D));
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < D; ++j) {
            e[i][j] = W("embedding.weight").f32[static_cast<unsigned char>(text[i]) * D + j];
            if (s.maxLen > 0) e[i][j] += W("pos_emb.weight").f32[i * D + j];
        }
    Reference r;
    Vec relay(D, 0.0);
    for (const auto& row : e)
        for (std::size_t j = 0; j < D; ++j) relay[j] += row[j] / static_cast<double>(n);
    std::vector<Vec> nodes = e;
    r.nodes.push_back(nodes);
    r.relay.push_back(relay);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    for (std::int64_t t = 0; t < s.cycles; ++t) {
        const std::string c = std::to_string(t), ra = "ring_att." + c + ".", sa = "star_att." + c + ".";
        std::vector<Vec> x(n), q(n), k(n), v(n), ek(n), ev(n);
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = layerNorm(nodes[i], W("norm." + c + ".weight"), W("norm." + c + ".bias"), s.eps);
            q[i] = linear(W(ra + "WQ.weight"), W(ra + "WQ.bias"), x[i]);
            k[i] = linear(W(ra + "WK.weight"), W(ra + "WK.bias"), x[i]);
            v[i] = linear(W(ra + "WV.weight"), W(ra + "WV.bias"), x[i]);
            ek[i] = linear(W(ra + "WK.weight"), W(ra + "WK.bias"), e[i]);
            ev[i] = linear(W(ra + "WV.weight"), W(ra + "WV.bias"), e[i]);
        }
        const Vec sk = linear(W(ra + "WK.weight"), W(ra + "WK.bias"), relay), sv = linear(W(ra + "WV.weight"), W(ra + "WV.bias"), relay);
        const Vec zero(H * d, 0.0);
        std::vector<Vec> next(n);
        r.ring.emplace_back(H, std::vector<Vec>(n, Vec(5)));
        for (std::size_t i = 0; i < n; ++i) {
            const bool hasLeft = i > 0 || s.cyclic, hasRight = i + 1 < n || s.cyclic;
            const Vec& kl = hasLeft ? k[(i + n - 1) % n] : zero;
            const Vec& vl = hasLeft ? v[(i + n - 1) % n] : zero;
            const Vec& kr = hasRight ? k[(i + 1) % n] : zero;
            const Vec& vr = hasRight ? v[(i + 1) % n] : zero;
            const Vec* keys[5] = {&kl, &k[i], &kr, &ek[i], &sk};
            const Vec* values[5] = {&vl, &v[i], &vr, &ev[i], &sv};
            Vec att(H * d, 0.0);
            for (std::size_t h = 0; h < H; ++h) {
                double score[5], mx = -1e300, z = 0;
                for (int u = 0; u < 5; ++u) {
                    score[u] = 0;
                    for (std::size_t c2 = 0; c2 < d; ++c2) score[u] += q[i][h * d + c2] * (*keys[u])[h * d + c2];
                    score[u] *= scale;
                    mx = std::max(mx, score[u]);
                }
                for (int u = 0; u < 5; ++u) z += std::exp(score[u] - mx);
                for (int u = 0; u < 5; ++u) {
                    const double a = std::exp(score[u] - mx) / z;
                    r.ring.back()[h][i][static_cast<std::size_t>(u)] = a;
                    for (std::size_t c2 = 0; c2 < d; ++c2) att[h * d + c2] += a * (*values[u])[h * d + c2];
                }
            }
            next[i] = leaky(linear(W(ra + "WO.weight"), W(ra + "WO.bias"), att), s.slope);
        }
        // relay over [s; hᵗ], padded satellites masked
        const Vec rq = linear(W(sa + "WQ.weight"), W(sa + "WQ.bias"), relay);
        std::vector<Vec> ctx = {relay};
        for (const auto& h : next) ctx.push_back(h);
        std::vector<Vec> rk, rv;
        for (const auto& c2 : ctx) {
            rk.push_back(linear(W(sa + "WK.weight"), W(sa + "WK.bias"), c2));
            rv.push_back(linear(W(sa + "WV.weight"), W(sa + "WV.bias"), c2));
        }
        Vec att(H * d, 0.0);
        r.relayW.emplace_back(H, Vec(n + 1, 0.0));
        for (std::size_t h = 0; h < H; ++h) {
            Vec score(n + 1);
            double mx = -1e300, z = 0;
            for (std::size_t j = 0; j <= n; ++j) {
                if (j > 0 && !pad.empty() && pad[j - 1]) continue;
                double sdot = 0;
                for (std::size_t c2 = 0; c2 < d; ++c2) sdot += rq[h * d + c2] * rk[j][h * d + c2];
                score[j] = sdot * scale;
                mx = std::max(mx, score[j]);
            }
            for (std::size_t j = 0; j <= n; ++j)
                if (!(j > 0 && !pad.empty() && pad[j - 1])) z += std::exp(score[j] - mx);
            for (std::size_t j = 0; j <= n; ++j) {
                if (j > 0 && !pad.empty() && pad[j - 1]) continue;
                const double a = std::exp(score[j] - mx) / z;
                r.relayW.back()[h][j] = a;
                for (std::size_t c2 = 0; c2 < d; ++c2) att[h * d + c2] += a * rv[j][h * d + c2];
            }
        }
        relay = leaky(linear(W(sa + "WO.weight"), W(sa + "WO.bias"), att), s.slope);
        for (std::size_t i = 0; i < n; ++i)
            if (!pad.empty() && pad[i]) next[i] = Vec(D, 0.0);
        nodes = next;
        r.nodes.push_back(nodes);
        r.relay.push_back(relay);
    }
    return r;
}

fs::path scratch(const std::string& name) {
    return fs::temp_directory_path() / ("attnscope-star-" + name + "-" + std::to_string(::getpid()));
}

}  // namespace

TEST(StarTransformer, CyclesMatchTheDefinition) {
    auto engine = Engine::create();
    ASSERT_TRUE(engine.ok());
    struct Case {
        Spec spec;
        std::string text;
        std::vector<std::uint8_t> padding;
    };
    std::vector<Case> cases;
    cases.push_back({Spec{}, "ring of seven", {}});
    Spec closed;
    closed.cyclic = true;
    closed.cycles = 4;
    cases.push_back({closed, "closed", {}});
    Spec one;
    one.cycles = 1;
    one.heads = 3;
    one.headDim = 2;
    one.maxLen = 12;
    cases.push_back({one, "padded ", {0, 0, 0, 0, 0, 1, 1}});
    Spec four;
    four.cycles = 4;
    four.eps = 1e-3;  // the config's own LayerNorm eps and leaky_relu slope
    four.slope = 0.2;
    cases.push_back({four, "four cycles, padding", std::vector<std::uint8_t>(20, 0)});
    cases.back().padding[17] = cases.back().padding[19] = 1;
    int index = 0;
    for (const Case& c : cases) {
        const fs::path dir = scratch(std::to_string(index++));
        const Tensors weights = makeWeights(c.spec, 17 + static_cast<unsigned>(index));
        writeFolder(dir, c.spec, weights);
        StarRequest request;
        request.text = c.text;
        request.modelFolder = dir.string();
        request.padding = c.padding;
        auto pass = engine.value()->runStar(request);
        fs::remove_all(dir);
        ASSERT_TRUE(pass.ok()) << pass.error().message;
        const StarPass& p = *pass.value();
        const Reference ref = reference(c.spec, weights, c.text, c.padding);
        const std::size_t n = c.text.size(), D = static_cast<std::size_t>(c.spec.hidden), H = static_cast<std::size_t>(c.spec.heads);
        ASSERT_EQ(p.n, static_cast<std::int64_t>(n));
        ASSERT_EQ(p.cycles, c.spec.cycles);
        EXPECT_EQ(p.cyclic, c.spec.cyclic);
        double worst = 0;
        for (std::size_t t = 0; t <= static_cast<std::size_t>(c.spec.cycles); ++t) {
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < D; ++j)
                    worst = std::max(worst, std::abs(p.nodes.f32[(t * n + i) * D + j] - ref.nodes[t][i][j]));
            for (std::size_t j = 0; j < D; ++j) worst = std::max(worst, std::abs(p.relay.f32[t * D + j] - ref.relay[t][j]));
        }
        for (std::size_t t = 0; t < static_cast<std::size_t>(c.spec.cycles); ++t)
            for (std::size_t h = 0; h < H; ++h) {
                for (std::size_t i = 0; i < n; ++i) {
                    double sum = 0;
                    for (std::size_t u = 0; u < 5; ++u) {
                        const double got = p.ringWeights.f32[((t * H + h) * n + i) * 5 + u];
                        worst = std::max(worst, std::abs(got - ref.ring[t][h][i][u]));
                        sum += got;
                    }
                    EXPECT_NEAR(sum, 1.0, 1e-5);
                }
                double sum = 0;
                for (std::size_t j = 0; j <= n; ++j) {
                    const double got = p.relayWeights.f32[(t * H + h) * (n + 1) + j];
                    worst = std::max(worst, std::abs(got - ref.relayW[t][h][j]));
                    sum += got;
                }
                EXPECT_NEAR(sum, 1.0, 1e-5);
            }
        EXPECT_LT(worst, 2e-4) << "case " << index;
        // the open ring's ends: a phantom zero key (score 0) still takes part in the softmax
        if (!c.spec.cyclic) {
            EXPECT_GT(p.ringWeights.f32[0], 0.0f);
        }
        // padded satellites: zeroed, and the relay gives them no weight
        for (std::size_t i = 0; i < c.padding.size(); ++i)
            if (c.padding[i]) {
                EXPECT_EQ(p.relayWeights.f32[i + 1], 0.0f);
                EXPECT_EQ(p.nodes.f32[(static_cast<std::size_t>(c.spec.cycles) * n + i) * D], 0.0f);
            }
        // node change = ‖hᵗ − hᵗ⁻¹‖
        double d2 = 0;
        for (std::size_t j = 0; j < D; ++j) d2 += std::pow(ref.nodes[1][0][j] - ref.nodes[0][0][j], 2);
        EXPECT_NEAR(p.nodeChange.f32[0], std::sqrt(d2), 1e-4);
    }
}

TEST(StarTransformer, RandomModelOnAnyText) {
    auto engine = Engine::create();
    ASSERT_TRUE(engine.ok());
    StarRequest request;
    request.text = "the cat sat on the mat";
    request.heads = 2;
    request.headDim = 8;
    request.cycles = 3;
    request.seed = 5;
    auto pass = engine.value()->runStar(request);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    const StarPass& p = *pass.value();
    EXPECT_EQ(p.n, 6);  // words
    EXPECT_EQ(p.hidden, 16);
    EXPECT_EQ(p.ringWeights.shape, (std::vector<std::int64_t>{3, 2, 6, 5}));
    EXPECT_EQ(p.relayWeights.shape, (std::vector<std::int64_t>{3, 2, 7}));
    EXPECT_EQ(p.nodes.shape, (std::vector<std::int64_t>{4, 6, 16}));
    EXPECT_EQ(p.relay.shape, (std::vector<std::int64_t>{4, 16}));
    EXPECT_EQ(p.nodeChange.shape, (std::vector<std::int64_t>{3, 6}));
    auto again = engine.value()->runStar(request);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.value()->ringWeights.f32, p.ringWeights.f32);  // the seed fixes every draw
    request.cycles = 0;
    EXPECT_EQ(engine.value()->runStar(request).error().code, ErrorCode::InvalidArgument);
    request.cycles = 2;
    request.text = "";
    EXPECT_EQ(engine.value()->runStar(request).error().code, ErrorCode::InvalidArgument);
}

TEST(StarTransformer, FolderRefusedNamingTheTensor) {
    auto engine = Engine::create();
    ASSERT_TRUE(engine.ok());
    const Spec spec;
    StarRequest request;
    request.text = "abc";
    {
        Tensors w = makeWeights(spec, 3);
        w.erase("star_att.1.WK.bias");
        const fs::path dir = scratch("missing");
        writeFolder(dir, spec, w);
        request.modelFolder = dir.string();
        auto r = engine.value()->runStar(request);
        fs::remove_all(dir);
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.error().message.find("'star_att.1.WK.bias' is missing"), std::string::npos) << r.error().message;
    }
    {
        Tensors w = makeWeights(spec, 3);
        w["ring_att.0.WQ.weight"] = PlainTensor::zeros(DType::F32, {5, 6, 1, 1});
        const fs::path dir = scratch("shape");
        writeFolder(dir, spec, w);
        request.modelFolder = dir.string();
        auto r = engine.value()->runStar(request);
        fs::remove_all(dir);
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.error().message.find("'ring_att.0.WQ.weight' has shape [5, 6, 1, 1], expected [6, 6, 1, 1]"), std::string::npos)
            << r.error().message;
    }
    {
        const fs::path dir = scratch("vocab");
        writeFolder(dir, spec, makeWeights(spec, 3), 1000);
        request.modelFolder = dir.string();
        auto r = engine.value()->runStar(request);
        fs::remove_all(dir);
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.error().message.find("there is no vocab.txt"), std::string::npos) << r.error().message;
    }
    {
        // a vocab.txt of 5 words with <unk> more than vocab_size says
        const fs::path dir = scratch("vocab-count");
        writeFolder(dir, spec, makeWeights(spec, 3), 256);
        std::ofstream(dir / "vocab.txt") << "<unk>\nthe\ncat\nsat\nmat\n";
        request.modelFolder = dir.string();
        auto r = engine.value()->runStar(request);
        fs::remove_all(dir);
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.error().message.find("5 tokens, but config.json's vocab_size is 256"), std::string::npos) << r.error().message;
    }
}

// A Star-Transformer folder opened as a model is refused, saying where it opens instead.
TEST(StarTransformer, AFolderOpenedAsAModelSaysWhereItOpens) {
    const Spec s;
    const fs::path dir = fs::temp_directory_path() / ("attnscope-star-as-model-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    writeFolder(dir, s, makeWeights(s, 5));
    auto engine = Engine::create();
    ASSERT_TRUE(engine.ok());
    auto opened = engine.value()->openModel(dir.string());
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.error().code, ErrorCode::Unsupported);
    EXPECT_NE(opened.error().message.find("a Star-Transformer folder"), std::string::npos) << opened.error().message;
    EXPECT_NE(opened.error().message.find("star --model"), std::string::npos) << opened.error().message;
    fs::remove_all(dir);
}

TEST(StarTransformer, VocabularyFolderLooksUpWords) {
    auto engine = Engine::create();
    ASSERT_TRUE(engine.ok());
    Spec spec;
    Tensors w = makeWeights(spec, 9);
    w["embedding.weight"] = PlainTensor::zeros(DType::F32, {5, spec.hidden});
    for (std::size_t i = 0; i < w["embedding.weight"].f32.size(); ++i) w["embedding.weight"].f32[i] = static_cast<float>(i);
    const fs::path dir = scratch("words");
    writeFolder(dir, spec, w, 5);
    std::ofstream(dir / "vocab.txt") << "<unk>\nthe\ncat\nsat\nmat\n";
    StarRequest request;
    request.modelFolder = dir.string();
    request.text = "the cat sat on the mat";  // "on" is unknown: <unk>
    auto pass = engine.value()->runStar(request);
    fs::remove_all(dir);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    const StarPass& p = *pass.value();
    ASSERT_EQ(p.n, 6);
    // h⁰ is the embedding row of each word's id: the, cat, sat, <unk>, the, mat
    const std::vector<int> ids = {1, 2, 3, 0, 1, 4};
    for (std::size_t i = 0; i < ids.size(); ++i)
        EXPECT_EQ(p.nodes.f32[i * static_cast<std::size_t>(spec.hidden)], static_cast<float>(ids[i] * spec.hidden)) << i;
}

TEST(StarTransformerTrainer, LearnsTheFirstLetterThroughTheRelayAndReloads) {
    auto engine = Engine::create();
    ASSERT_TRUE(engine.ok());
    TrainOptions o;
    o.arch = "star-transformer";
    o.task = "first";
    o.layers = 2;
    o.heads = 2;
    o.dim = 16;
    o.length = 8;
    o.steps = 200;
    o.seed = 3;
    o.out = scratch("trained").string();
    auto report = engine.value()->train(o);
    ASSERT_TRUE(report.ok()) << report.error().message;
    EXPECT_DOUBLE_EQ(report->chanceAccuracy, 0.125);
    EXPECT_GT(report->log.back().accuracy, 0.9);
    // the folder reproduces the trained model's satellites on the probe
    StarRequest request;
    request.modelFolder = o.out;
    request.text.assign(report->probeIds.begin(), report->probeIds.end());
    auto pass = engine.value()->runStar(request);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    const StarPass& p = *pass.value();
    ASSERT_EQ(p.n, 8);
    double worst = 0;
    for (std::size_t i = 0; i < report->probeHidden.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::abs(p.nodes.f32[static_cast<std::size_t>(2 * 8 * 16) + i] - report->probeHidden[i])));
    EXPECT_LT(worst, 1e-4);
    fs::remove_all(o.out);
    // without the relay the far positions cannot know the first letter
    o.starRelay = false;
    auto ablation = engine.value()->train(o);
    ASSERT_TRUE(ablation.ok()) << ablation.error().message;
    EXPECT_LT(ablation->log.back().accuracy, report->log.back().accuracy - 0.2);
    fs::remove_all(o.out);
    o.task = "copy";
    EXPECT_EQ(engine.value()->train(o).error().code, ErrorCode::InvalidArgument);
}
