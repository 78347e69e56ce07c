// Vision Transformer checkpoints (ViT, DINO, DeiT in Hugging Face naming): the picture prepared
// as the preprocessor says (Pillow's resampling, hand-worked and, where Pillow is installed,
// byte for byte), every layer's attention and hidden states against a float64 recomputation
// written here from the architecture's definition (with and without [CLS], with DeiT's
// distillation token), rollout and DINO's view against their definitions, and the refusals.

#include "sparse_test_support.h"

#include "../support/tiny_vit.h"

#include "io/image/pil_resize.h"
#include "io/image/vit_preprocess.h"

#include <attnscope/vit_views.h>

#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace sparse_test;
using attnscope::testing::TensorMap;
using attnscope::testing::VitSpec;
using attnscope::testing::writeVitFolder;

namespace {

namespace fs = std::filesystem;

// A picture of 8-bit values k/255, k from a fixed random stream.
RgbImage bytePicture(std::int64_t height, std::int64_t width, unsigned seed) {
    std::mt19937 gen(seed);
    RgbImage image;
    image.height = height;
    image.width = width;
    for (std::int64_t i = 0; i < 3 * height * width; ++i) image.rgb.push_back(float(gen() % 256) / 255.0f);
    return image;
}

ImageSpec pictureSpec(RgbImage image) {
    ImageSpec spec;
    spec.image = std::move(image);
    spec.name = "picture.png";
    spec.mode = ImageTokenMode::Patches;
    return spec;
}

// ---- the float64 reference, from the definitions -------------------------------------------

using Matrix = std::vector<std::vector<double>>;  // [tokens][features]

const std::vector<float>& values(const TensorMap& t, const std::string& name) { return t.at(name).f32; }

std::vector<double> layerNorm(const std::vector<double>& x, const std::vector<float>& w, const std::vector<float>& b) {
    double mean = 0, var = 0;
    for (double v : x) mean += v;
    mean /= double(x.size());
    for (double v : x) var += (v - mean) * (v - mean);
    var /= double(x.size());
    std::vector<double> out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = (x[i] - mean) / std::sqrt(var + 1e-12) * w[i] + b[i];
    return out;
}

// y = W x + b with W [rows, cols] row-major (nn.Linear); no bias when `b` is null.
std::vector<double> linear(const std::vector<double>& x, const std::vector<float>& w, const std::vector<float>* b) {
    const std::size_t rows = w.size() / x.size();
    std::vector<double> y(rows);
    for (std::size_t r = 0; r < rows; ++r) {
        double acc = b ? (*b)[r] : 0.0;
        for (std::size_t c = 0; c < x.size(); ++c) acc += double(w[r * x.size() + c]) * x[c];
        y[r] = acc;
    }
    return y;
}

struct Reference {
    std::vector<std::vector<double>> attention;  // per layer [heads · n · n]
    std::vector<Matrix> hidden;                  // layers + 1
};

// The ViT encoder on `pixels` [3, S, S] (already normalised), every step as its paper and
// Hugging Face's ViTModel define it.
Reference vitReference(const VitSpec& s, const TensorMap& t, const std::vector<float>& pixels) {
    const std::int64_t h = s.hidden, p = s.patch, side = s.image / s.patch, dh = h / s.heads;
    Matrix x;
    if (s.cls) x.push_back(std::vector<double>(values(t, "embeddings.cls_token").begin(), values(t, "embeddings.cls_token").end()));
    if (s.type == "deit")
        x.push_back(std::vector<double>(values(t, "embeddings.distillation_token").begin(), values(t, "embeddings.distillation_token").end()));
    const auto& conv = values(t, "embeddings.patch_embeddings.projection.weight");
    const auto& convBias = values(t, "embeddings.patch_embeddings.projection.bias");
    for (std::int64_t r = 0; r < side; ++r)
        for (std::int64_t c = 0; c < side; ++c) {
            std::vector<double> e(static_cast<std::size_t>(h));
            for (std::int64_t o = 0; o < h; ++o) {
                double acc = convBias[std::size_t(o)];
                for (std::int64_t ch = 0; ch < 3; ++ch)
                    for (std::int64_t y = 0; y < p; ++y)
                        for (std::int64_t xx = 0; xx < p; ++xx)
                            acc += double(conv[std::size_t(((o * 3 + ch) * p + y) * p + xx)]) *
                                   pixels[std::size_t((ch * s.image + r * p + y) * s.image + c * p + xx)];
                e[std::size_t(o)] = acc;
            }
            x.push_back(e);
        }
    const auto& pos = values(t, "embeddings.position_embeddings");
    const std::size_t n = x.size();
    for (std::size_t i = 0; i < n; ++i)
        for (std::int64_t c = 0; c < h; ++c) x[i][std::size_t(c)] += pos[i * std::size_t(h) + std::size_t(c)];
    Reference ref;
    ref.hidden.push_back(x);
    for (std::int64_t l = 0; l < s.layers; ++l) {
        const std::string L = "encoder.layer." + std::to_string(l) + ".";
        auto w = [&](const std::string& name) -> const std::vector<float>& { return values(t, L + name); };
        auto bias = [&](const std::string& name) -> const std::vector<float>* { return s.qkvBias ? &values(t, L + name) : nullptr; };
        Matrix q, k, v;
        for (std::size_t i = 0; i < n; ++i) {
            const auto a = layerNorm(x[i], w("layernorm_before.weight"), w("layernorm_before.bias"));
            q.push_back(linear(a, w("attention.attention.query.weight"), bias("attention.attention.query.bias")));
            k.push_back(linear(a, w("attention.attention.key.weight"), bias("attention.attention.key.bias")));
            v.push_back(linear(a, w("attention.attention.value.weight"), bias("attention.attention.value.bias")));
        }
        std::vector<double> attention(std::size_t(s.heads) * n * n);
        Matrix context(n, std::vector<double>(std::size_t(h), 0.0));
        for (std::int64_t hd = 0; hd < s.heads; ++hd)
            for (std::size_t i = 0; i < n; ++i) {
                std::vector<double> score(n);
                double top = -1e300, sum = 0;
                for (std::size_t j = 0; j < n; ++j) {
                    double dot = 0;
                    for (std::int64_t c = hd * dh; c < (hd + 1) * dh; ++c) dot += q[i][std::size_t(c)] * k[j][std::size_t(c)];
                    score[j] = dot / std::sqrt(double(dh));
                    top = std::max(top, score[j]);
                }
                for (double& sc : score) sum += (sc = std::exp(sc - top));
                for (std::size_t j = 0; j < n; ++j) {
                    const double pij = score[j] / sum;
                    attention[(std::size_t(hd) * n + i) * n + j] = pij;
                    for (std::int64_t c = hd * dh; c < (hd + 1) * dh; ++c) context[i][std::size_t(c)] += pij * v[j][std::size_t(c)];
                }
            }
        ref.attention.push_back(attention);
        for (std::size_t i = 0; i < n; ++i) {
            const auto out = linear(context[i], w("attention.output.dense.weight"), &w("attention.output.dense.bias"));
            for (std::int64_t c = 0; c < h; ++c) x[i][std::size_t(c)] += out[std::size_t(c)];
            auto inner = linear(layerNorm(x[i], w("layernorm_after.weight"), w("layernorm_after.bias")), w("intermediate.dense.weight"),
                                &w("intermediate.dense.bias"));
            for (double& u : inner) u = 0.5 * u * (1.0 + std::erf(u / std::sqrt(2.0)));  // GELU (erf)
            const auto mlp = linear(inner, w("output.dense.weight"), &w("output.dense.bias"));
            for (std::int64_t c = 0; c < h; ++c) x[i][std::size_t(c)] += mlp[std::size_t(c)];
        }
        ref.hidden.push_back(x);
    }
    return ref;
}

// The picture as the model reads it: bytes, then (k / 255 − mean) / std.
std::vector<float> normalised(const RgbImage& picture, const std::array<double, 3>& mean, const std::array<double, 3>& std) {
    std::vector<float> out(picture.rgb.size());
    const std::size_t plane = picture.rgb.size() / 3;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const double k = std::round(double(picture.rgb[i]) * 255.0);
        out[i] = float((k / 255.0 - mean[i / plane]) / std[i / plane]);
    }
    return out;
}

class VitModel : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_dir = fs::temp_directory_path() / ("attnscope-vit-" + std::to_string(::getpid()) + "-" + info->name());
        fs::remove_all(m_dir);
        m_engine = makeEngine();
    }
    void TearDown() override { fs::remove_all(m_dir); }

    // Opens the folder and checks every layer's attention and hidden state on `picture` (of the
    // model's size) against the reference.
    void expectAgreesWithReference(const VitSpec& s, const TensorMap& tensors, const RgbImage& picture,
                                   const std::array<double, 3>& mean, const std::array<double, 3>& std) {
        auto info = m_engine->openModel(m_dir.string());
        ASSERT_TRUE(info.ok()) << info.error().message;
        EXPECT_EQ(info->imageSize, s.image);
        EXPECT_EQ(info->prefixTokens, s.prefixTokens());
        ModelInput input;
        input.image = pictureSpec(picture);
        auto forward = m_engine->forwardModel(input);
        ASSERT_TRUE(forward.ok()) << forward.error().message;
        const Reference ref = vitReference(s, tensors, normalised(picture, mean, std));
        ASSERT_EQ(forward.value()->n, s.tokens());
        ASSERT_EQ(forward.value()->attention.size(), std::size_t(s.layers));
        for (std::int64_t l = 0; l < s.layers; ++l) {
            const auto& got = forward.value()->attention[std::size_t(l)].f32;
            ASSERT_EQ(got.size(), ref.attention[std::size_t(l)].size());
            for (std::size_t e = 0; e < got.size(); ++e) ASSERT_NEAR(got[e], ref.attention[std::size_t(l)][e], 2e-5) << "layer " << l << " entry " << e;
        }
        for (std::size_t l = 0; l < ref.hidden.size(); ++l) {
            const auto& got = forward.value()->hidden[l].f32;
            for (std::size_t i = 0; i < ref.hidden[l].size(); ++i)
                for (std::size_t c = 0; c < ref.hidden[l][i].size(); ++c)
                    ASSERT_NEAR(got[i * std::size_t(s.hidden) + c], ref.hidden[l][i][c], 1e-4) << "hidden " << l << " token " << i;
        }
        // Tokens: the prefix named, then the patches with their cells and boxes
        const auto& tokens = forward.value()->input.tokens;
        if (s.cls) EXPECT_EQ(tokens[0].text, "[CLS]");
        if (s.type == "deit") EXPECT_EQ(tokens[1].text, "[DIST]");
        const Token& last = tokens.back();
        EXPECT_EQ(last.row, s.image / s.patch - 1);
        EXPECT_EQ(last.col, s.image / s.patch - 1);
        ASSERT_TRUE(forward.value()->input.image);
        EXPECT_EQ(forward.value()->input.image->prefix, s.prefixTokens());
        // The model's own attention of every layer, as the window and `run --model` ask for it
        for (std::int64_t l = 0; l < s.layers; ++l) {
            RunRequest request;
            request.source = ModelLayerSource{m_dir.string(), int(l), true, {}, InputSpec{{}, TokenizerKind::Words, pictureSpec(picture)}};
            auto run = m_engine->run(request);
            ASSERT_TRUE(run.ok()) << run.error().message;
            ASSERT_EQ(run.value()->ownAttention, 0);
            const std::vector<float> own = denseWeights(run.value()->results[0]);
            ASSERT_EQ(own.size(), ref.attention[std::size_t(l)].size());
            for (std::size_t e = 0; e < own.size(); ++e) ASSERT_NEAR(own[e], ref.attention[std::size_t(l)][e], 2e-5) << "own, layer " << l;
        }
    }

    fs::path m_dir;
    std::unique_ptr<Engine> m_engine;
};

const std::array<double, 3> kHalf{0.5, 0.5, 0.5};
const std::array<double, 3> kImagenetMean{0.485, 0.456, 0.406};
const std::array<double, 3> kImagenetStd{0.229, 0.224, 0.225};

}  // namespace

TEST_F(VitModel, ViTAgreesWithADoublePrecisionRecomputation) {
    VitSpec s;
    const TensorMap tensors = writeVitFolder(m_dir, s, "");  // no preprocessor: ViT's defaults (mean, std 0.5)
    expectAgreesWithReference(s, tensors, bytePicture(8, 8, 1), kHalf, kHalf);
}

TEST_F(VitModel, ViTWithoutClsAndWithoutQkvBiasAgrees) {
    VitSpec s;
    s.cls = false;
    s.qkvBias = false;
    s.prefix = "";
    const TensorMap tensors =
        writeVitFolder(m_dir, s, R"({"image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225], "size": 8})");
    expectAgreesWithReference(s, tensors, bytePicture(8, 8, 2), kImagenetMean, kImagenetStd);
    auto info = m_engine->openModel(m_dir.string());
    ASSERT_TRUE(info.ok());
    EXPECT_TRUE(std::any_of(info->warnings.begin(), info->warnings.end(),
                            [](const std::string& w) { return w.find("without a [CLS] token") != std::string::npos; }));
}

TEST_F(VitModel, DeiTWithItsDistillationTokenAgrees) {
    VitSpec s;
    s.type = "deit";
    s.prefix = "deit.";
    s.layers = 3;
    const TensorMap tensors = writeVitFolder(m_dir, s, R"({"image_mean": 0.5, "image_std": 0.5, "size": {"height": 8, "width": 8}})");
    expectAgreesWithReference(s, tensors, bytePicture(8, 8, 3), kHalf, kHalf);
}

TEST_F(VitModel, APictureOfAnotherSizeIsResizedAndCroppedAsThePreprocessorSays) {
    VitSpec s;
    s.type = "deit";
    s.prefix = "deit.";
    const TensorMap tensors = writeVitFolder(
        m_dir, s,
        R"({"do_resize": true, "size": {"height": 10, "width": 10}, "resample": 3, "do_center_crop": true, "crop_size": 8,
            "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]})");
    auto info = m_engine->openModel(m_dir.string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    const RgbImage picture = bytePicture(15, 20, 4);  // 20 wide, 15 high
    ModelInput input;
    input.image = pictureSpec(picture);
    auto forward = m_engine->forwardModel(input);
    ASSERT_TRUE(forward.ok()) << forward.error().message;
    const auto& notices = forward.value()->notices;
    const auto said = [&](const std::string& text) {
        return std::any_of(notices.begin(), notices.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
    };
    EXPECT_TRUE(said("image: resized from 20 × 15 to 10 × 10 (bicubic, as preprocessor_config.json says)"));
    EXPECT_TRUE(said("image: centre crop 8 × 8 of 10 × 10"));
    // The model read Pillow's bicubic resize, cropped at (1, 1)
    const RgbImage resized = resizePil(picture, 10, 10, PilFilter::Bicubic);
    RgbImage cropped;
    cropped.height = cropped.width = 8;
    for (int c = 0; c < 3; ++c)
        for (int y = 0; y < 8; ++y)
            for (int x = 0; x < 8; ++x) cropped.rgb.push_back(resized.at(c, y + 1, x + 1));
    const Reference ref = vitReference(s, tensors, normalised(cropped, kImagenetMean, kImagenetStd));
    for (std::size_t e = 0; e < ref.attention[1].size(); ++e)
        ASSERT_NEAR(forward.value()->attention[1].f32[e], ref.attention[1][e], 2e-5) << e;
    // Patch (0, 0) covers resized pixels 1..5, i.e. source x 2..10 and y 1.5..7.5
    const ImageBox box = forward.value()->input.image->cellBox(0, 0);
    EXPECT_DOUBLE_EQ(box.x0, 2.0);
    EXPECT_DOUBLE_EQ(box.x1, 10.0);
    EXPECT_DOUBLE_EQ(box.y0, 1.5);
    EXPECT_DOUBLE_EQ(box.y1, 7.5);
}

TEST_F(VitModel, ARunOnALayerAttendsWithTheModelsOwnWeightsOnThePicture) {
    VitSpec s;
    writeVitFolder(m_dir, s, "");
    RunRequest request;
    request.source = ModelLayerSource{m_dir.string(), 1, false, {}, InputSpec{{}, TokenizerKind::Words, pictureSpec(bytePicture(8, 8, 5))}};
    request.variants.push_back(VariantRequest{"full", {}});
    request.variants.push_back(VariantRequest{"local2d", {{"window", std::int64_t{3}}}});
    auto run = m_engine->run(request);
    ASSERT_TRUE(run.ok()) << run.error().message;
    ASSERT_EQ(run.value()->modelLayerAttention.size(), 2u);
    const std::vector<float> weights = denseWeights(run.value()->results[0]);
    const auto& own = run.value()->modelLayerAttention[1].f32;
    ASSERT_EQ(weights.size(), own.size());
    for (std::size_t e = 0; e < own.size(); ++e) ASSERT_NEAR(weights[e], own[e], 1e-5);
    // local2d takes the model's grid: 2 × 2 patches after [CLS]
    EXPECT_EQ(std::get<std::int64_t>(run.value()->results[1].params.at("width")), 2);
    EXPECT_EQ(std::get<std::int64_t>(run.value()->results[1].params.at("prefix")), 1);
    EXPECT_EQ(run.value()->input.tokens[4].text, "(1, 1)");
}

TEST_F(VitModel, TheAtlasOfAPictureHoldsRolloutFlowAndDinosView) {
    VitSpec s;
    writeVitFolder(m_dir, s, "");
    ASSERT_TRUE(m_engine->openModel(m_dir.string()).ok());
    AtlasRequest request;
    request.image = pictureSpec(bytePicture(8, 8, 6));
    request.imageOptions.fusion = HeadFusion::Max;
    request.imageOptions.discardRatio = 0.5;
    request.imageOptions.massShare = 0.6;
    auto atlas = m_engine->analyzeModel(request);
    ASSERT_TRUE(atlas.ok()) << atlas.error().message;
    ASSERT_TRUE(atlas.value()->image);
    const ImageAttentionViews& views = *atlas.value()->image;
    ModelInput input;
    input.image = request.image;
    auto forward = m_engine->forwardModel(input);
    ASSERT_TRUE(forward.ok());
    const auto& layers = forward.value()->attention;
    const std::vector<double> rollout = attentionRollout(layers, HeadFusion::Max, 0.5);
    ASSERT_EQ(views.rollout.size(), 4u);
    for (std::size_t c = 0; c < 4; ++c) EXPECT_NEAR(views.rollout[c], rollout[1 + c], 1e-12);  // row 0 ([CLS]), cells 1..4
    // The strip: layer 1, head 1, [CLS] to cell 2 is that layer's weight (0, 3)
    EXPECT_FLOAT_EQ(views.queryAttention[std::size_t((1 * 2 + 1) * 4 + 2)], layers[1].f32[std::size_t(1 * 25 + 0 * 5 + 3)]);
    ASSERT_EQ(views.flow.size(), 4u);
    for (double f : views.flow) EXPECT_GT(f, 0.0);
    EXPECT_EQ(views.massCells.size(), 8u);
    const std::string json = headAtlasJson(*atlas.value());
    EXPECT_NE(json.find("\"mass_cells\""), std::string::npos);
    EXPECT_NE(json.find("\"head_fusion\": \"max\""), std::string::npos);
}

TEST_F(VitModel, BadFoldersAndInputsAreRefusedNamingTheFieldOrTensor) {
    VitSpec s;
    // Weights that disagree with the config: a position table for another grid
    TensorMap wrong;
    wrong["embeddings.position_embeddings"] = PlainTensor::zeros(DType::F32, {1, 10, s.hidden});
    writeVitFolder(m_dir, s, "", wrong);
    auto opened = m_engine->openModel(m_dir.string());
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.error().message.find("embeddings.position_embeddings' has shape [1, 10, 16], expected [1, 5, 16]"),
              std::string::npos)
        << opened.error().message;

    fs::remove_all(m_dir);
    VitSpec odd;
    odd.patch = 3;  // does not divide 8
    writeVitFolder(m_dir, odd, "");
    opened = m_engine->openModel(m_dir.string());
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.error().message.find("field 'patch_size' 3 does not divide image_size 8"), std::string::npos)
        << opened.error().message;

    fs::remove_all(m_dir);
    writeVitFolder(m_dir, s, R"({"image_std": [0.5, 0, 0.5]})");
    opened = m_engine->openModel(m_dir.string());
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.error().message.find("field 'image_std' must be three positive numbers"), std::string::npos)
        << opened.error().message;

    fs::remove_all(m_dir);
    writeVitFolder(m_dir, s, R"({"size": 12})");  // resizes a 9 × 9 picture to 12 × 12, not the model's 8
    ASSERT_TRUE(m_engine->openModel(m_dir.string()).ok());
    ModelInput input;
    input.image = pictureSpec(bytePicture(9, 9, 7));
    auto forward = m_engine->forwardModel(input);
    ASSERT_FALSE(forward.ok());
    EXPECT_NE(forward.error().message.find("the picture is 12 × 12 after the preprocessor's steps, but the model reads 8 × 8"),
              std::string::npos)
        << forward.error().message;
    ModelInput text;
    text.text = "a cat";
    forward = m_engine->forwardModel(text);
    ASSERT_FALSE(forward.ok());
    EXPECT_NE(forward.error().message.find("it reads pictures, not text"), std::string::npos) << forward.error().message;
}

// ---- Pillow's resampling -----------------------------------------------------------------------

TEST(PilResize, BilinearReductionWeighsByTheStretchedTriangle) {
    // 4 → 2, scale 2: the triangle's support doubles. Output 0 centres on 1.0 and takes pixels
    // 0, 1, 2 with weights 0.75, 0.75, 0.25 (normalised: 3/7, 3/7, 1/7); output 1 takes 1, 2, 3
    // with 1/7, 3/7, 3/7. Bytes 0, 70, 140, 210 give (210 + 140) / 7 = 50 and (70 + 420 + 630) / 7 = 160.
    RgbImage row;
    row.height = 1;
    row.width = 4;
    for (int c = 0; c < 3; ++c)
        for (int k : {0, 70, 140, 210}) row.rgb.push_back(float(k) / 255.0f);
    const RgbImage out = resizePil(row, 1, 2, PilFilter::Bilinear);
    EXPECT_FLOAT_EQ(out.at(0, 0, 0) * 255.0f, 50.0f);
    EXPECT_FLOAT_EQ(out.at(2, 0, 1) * 255.0f, 160.0f);
    // Same size: nothing changes
    const RgbImage same = resizePil(row, 1, 4, PilFilter::Bicubic);
    EXPECT_EQ(same.rgb, row.rgb);
}

TEST(PilResize, MatchesPillowByteForByteWherePillowIsInstalled) {
    if (std::system("/usr/bin/python3 -c 'import PIL' >/dev/null 2>&1") != 0) GTEST_SKIP() << "Pillow (python3-pil) is not installed";
    const RgbImage picture = bytePicture(9, 13, 8);
    const fs::path raw = fs::temp_directory_path() / ("attnscope-pil-" + std::to_string(::getpid()) + ".raw");
    {
        std::ofstream out(raw, std::ios::binary);
        for (std::int64_t y = 0; y < picture.height; ++y)  // interleaved RGB, as Pillow reads raw bytes
            for (std::int64_t x = 0; x < picture.width; ++x)
                for (int c = 0; c < 3; ++c) out.put(char(std::lround(picture.at(c, y, x) * 255.0f)));
    }
    for (const auto& [filter, h, w] : {std::tuple<int, int, int>{2, 4, 5}, {3, 4, 5}, {2, 20, 7}, {3, 20, 31}, {1, 5, 6}}) {
        SCOPED_TRACE(testing::Message() << "filter " << filter << " to " << w << " x " << h);
        const std::string script = "import sys; from PIL import Image; im = Image.frombytes('RGB', (13, 9), open('" + raw.string() +
                                   "', 'rb').read()); sys.stdout.buffer.write(im.resize((" + std::to_string(w) + ", " +
                                   std::to_string(h) + "), resample=" + std::to_string(filter) + ").tobytes())";
        FILE* pipe = ::popen(("/usr/bin/python3 -c \"" + script + "\"").c_str(), "r");
        ASSERT_NE(pipe, nullptr);
        std::vector<unsigned char> pillow(std::size_t(3 * h * w));
        const std::size_t got = std::fread(pillow.data(), 1, pillow.size(), pipe);
        ::pclose(pipe);
        ASSERT_EQ(got, pillow.size());
        const RgbImage ours = resizePil(picture, h, w, static_cast<PilFilter>(filter));
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                for (int c = 0; c < 3; ++c)
                    ASSERT_EQ(std::lround(ours.at(c, y, x) * 255.0f), pillow[std::size_t((y * w + x) * 3 + c)]) << y << " " << x << " " << c;
    }
    fs::remove(raw);
}

// ---- rollout, flow and DINO's view ---------------------------------------------------------------

TEST(VitViews, RolloutHandWorkedWithADiscardedEntry) {
    // One layer, one head, A = [[0.5, 0.5], [0.25, 0.75]].
    const std::vector<PlainTensor> layers{PlainTensor::fromF32({1, 2, 2}, {0.5f, 0.5f, 0.25f, 0.75f})};
    // No discard: (A + I) / 2 = [[0.75, 0.25], [0.125, 0.875]], rows already summing to 1.
    const auto plain = attentionRollout(layers, HeadFusion::Mean, 0.0);
    EXPECT_NEAR(plain[0], 0.75, 1e-12);
    EXPECT_NEAR(plain[1], 0.25, 1e-12);
    EXPECT_NEAR(plain[2], 0.125, 1e-12);
    EXPECT_NEAR(plain[3], 0.875, 1e-12);
    // Ratio 0.25: ⌊4 · 0.25⌋ = 1 entry, the smallest (0.25 at (1, 0)), is dropped; row 1 becomes
    // (0, 0.875) renormalised to (0, 1).
    const auto dropped = attentionRollout(layers, HeadFusion::Mean, 0.25);
    EXPECT_NEAR(dropped[2], 0.0, 1e-12);
    EXPECT_NEAR(dropped[3], 1.0, 1e-12);
    EXPECT_NEAR(dropped[0], 0.75, 1e-12);
    // (0, 0) is never dropped: [[0.1, 0.9], [0.5, 0.5]] at ratio 0.25 keeps 0.1
    const std::vector<PlainTensor> cls{PlainTensor::fromF32({1, 2, 2}, {0.1f, 0.9f, 0.5f, 0.5f})};
    EXPECT_NEAR(attentionRollout(cls, HeadFusion::Mean, 0.25)[0], 0.55, 1e-7);
}

TEST(VitViews, RolloutOfSeveralLayersIsTheProductOfFusedResidualMatrices) {
    std::mt19937 gen(3);
    std::uniform_real_distribution<float> u(0.01f, 1.0f);
    const std::int64_t heads = 3, n = 5;
    std::vector<PlainTensor> layers;
    for (int l = 0; l < 3; ++l) {
        std::vector<float> a(std::size_t(heads * n * n));
        for (std::int64_t r = 0; r < heads * n; ++r) {
            float sum = 0;
            for (std::int64_t j = 0; j < n; ++j) sum += (a[std::size_t(r * n + j)] = u(gen));
            for (std::int64_t j = 0; j < n; ++j) a[std::size_t(r * n + j)] /= sum;
        }
        layers.push_back(PlainTensor::fromF32({heads, n, n}, a));
    }
    for (HeadFusion fusion : {HeadFusion::Mean, HeadFusion::Max, HeadFusion::Min}) {
        // The definition, written out: R = Ã3 Ã2 Ã1 with Ã = rownorm((fuse(A) + I) / 2)
        std::vector<double> r(std::size_t(n * n), 0.0);
        for (std::int64_t i = 0; i < n; ++i) r[std::size_t(i * n + i)] = 1.0;
        for (const auto& layer : layers) {
            std::vector<double> a(std::size_t(n * n));
            for (std::int64_t e = 0; e < n * n; ++e) {
                double v = fusion == HeadFusion::Mean ? 0.0 : layer.f32[std::size_t(e)];
                for (std::int64_t h = 0; h < heads; ++h) {
                    const double x = layer.f32[std::size_t(h * n * n + e)];
                    v = fusion == HeadFusion::Mean ? v + x / heads : fusion == HeadFusion::Max ? std::max(v, x) : std::min(v, x);
                }
                a[std::size_t(e)] = (v + (e / n == e % n ? 1.0 : 0.0)) / 2.0;
            }
            for (std::int64_t i = 0; i < n; ++i) {
                double sum = 0;
                for (std::int64_t j = 0; j < n; ++j) sum += a[std::size_t(i * n + j)];
                for (std::int64_t j = 0; j < n; ++j) a[std::size_t(i * n + j)] /= sum;
            }
            std::vector<double> next(std::size_t(n * n), 0.0);
            for (std::int64_t i = 0; i < n; ++i)
                for (std::int64_t k = 0; k < n; ++k)
                    for (std::int64_t j = 0; j < n; ++j) next[std::size_t(i * n + j)] += a[std::size_t(i * n + k)] * r[std::size_t(k * n + j)];
            r = next;
        }
        const auto got = attentionRollout(layers, fusion, 0.0);
        for (std::size_t e = 0; e < r.size(); ++e) EXPECT_NEAR(got[e], r[e], 1e-9) << headFusionName(fusion) << " " << e;
        // Rows of a rollout sum to 1
        for (std::int64_t i = 0; i < n; ++i) {
            double sum = 0;
            for (std::int64_t j = 0; j < n; ++j) sum += got[std::size_t(i * n + j)];
            EXPECT_NEAR(sum, 1.0, 1e-9);
        }
    }
    // Flow to token 0 equals row 0 of the whole flow matrix; each flow is at most 1 (an output's capacity)
    const auto flow = attentionFlowTo(layers, 0);
    ASSERT_EQ(flow.size(), std::size_t(n));
    double total = 0;
    for (double f : flow) {
        EXPECT_GT(f, 0.0);
        EXPECT_LE(f, 1.0 + 1e-9);
        total += f;
    }
    EXPECT_GT(total, 0.0);
    EXPECT_THROW(attentionRollout(layers, HeadFusion::Mean, 1.0), std::exception);
}

TEST(VitViews, DinosViewKeepsTheLargestCellsHoldingTheShare) {
    // Sorted ascending 0.1, 0.2, 0.3, 0.4: cumulative 0.1, 0.3, 0.6, 1.0; above 1 − 0.6 = 0.4 are
    // 0.3 and 0.4 (cells 3 and 1), which hold 0.7 ≥ 0.6.
    const auto kept = massShareCells({0.1, 0.4, 0.2, 0.3}, 0.6);
    EXPECT_EQ(kept, (std::vector<std::uint8_t>{0, 1, 0, 1}));
    // Scale does not matter; share 1 keeps everything
    EXPECT_EQ(massShareCells({10, 40, 20, 30}, 0.6), kept);
    EXPECT_EQ(massShareCells({1, 2, 3}, 1.0), (std::vector<std::uint8_t>{1, 1, 1}));
}
