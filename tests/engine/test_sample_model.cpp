// The model shipped in samples/ opens as a checkpoint and still does its task: reading the
// masked positions' predictions off its last hidden states (tied output layer) gives back x.

#include <attnscope/engine.h>
#include <attnscope/safetensors.h>

#include <gtest/gtest.h>

#include <random>

using namespace attnscope::engine;

TEST(SampleModel, CopiesItsInputAtTheMaskedPositions) {
    const std::string folder = std::string(ATTNSCOPE_SOURCE_DIR) + "/samples/copy-model";
    auto engine = Engine::create();
    ASSERT_TRUE(engine.ok());
    auto info = engine.value()->openModel(folder);
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->attention, "softmax");
    EXPECT_EQ(info->maxTokens, 19);
    auto weights = SafetensorsFile::open(folder + "/model.safetensors");
    ASSERT_TRUE(weights.ok());
    auto embeddings = weights.value()->read("roberta.embeddings.word_embeddings.weight");
    auto bias = weights.value()->read("lm_head.bias");
    ASSERT_TRUE(embeddings.ok() && bias.ok());
    const std::int64_t vocab = embeddings->shape[0], dim = embeddings->shape[1];

    std::mt19937 rng(12345);
    std::uniform_int_distribution<int> letter(0, 25);
    int right = 0, total = 0;
    for (int example = 0; example < 20; ++example) {
        // <s> x | <mask> x 8 </s>, ids as docs/TRAINER.md defines them (bytes start at 5).
        std::vector<std::int64_t> ids = {0}, x;
        for (int i = 0; i < 8; ++i) x.push_back(5 + 'a' + letter(rng));
        ids.insert(ids.end(), x.begin(), x.end());
        ids.push_back(5 + '|');
        for (int i = 0; i < 8; ++i) ids.push_back(4);
        ids.push_back(2);
        ModelInput input;
        input.ids = ids;
        input.keepAttention = false;
        auto f = engine.value()->forwardModel(input);
        ASSERT_TRUE(f.ok()) << f.error().message;
        const PlainTensor& h = f.value()->hidden.back();
        for (int i = 0; i < 8; ++i) {
            const std::int64_t pos = 10 + i;
            std::int64_t best = 0;
            double bestScore = -1e30;
            for (std::int64_t v = 0; v < vocab; ++v) {
                double score = bias->f32[static_cast<std::size_t>(v)];
                for (std::int64_t c = 0; c < dim; ++c)
                    score += h.f32[static_cast<std::size_t>(pos * dim + c)] * embeddings->f32[static_cast<std::size_t>(v * dim + c)];
                if (score > bestScore) {
                    bestScore = score;
                    best = v;
                }
            }
            right += best == x[static_cast<std::size_t>(i)];
            ++total;
        }
    }
    EXPECT_GE(right, total * 95 / 100) << right << " of " << total << " copied";
}

TEST(SampleModel, TransfoXlPredictsTextAndUsesItsMemory) {
    // The shipped Transformer-XL: predicting the next byte of an English sentence from its last
    // hidden states (tied output layer) beats chance by far, and its later queries attend memory.
    const std::string folder = std::string(ATTNSCOPE_SOURCE_DIR) + "/samples/transfo-xl-moby";
    auto engine = Engine::create();
    ASSERT_TRUE(engine.ok());
    auto info = engine.value()->openModel(folder);
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->arch, "transfo-xl");
    const std::string text = "It was the whale, the white whale, that the captain of the ship had sworn to hunt "
                             "across all the seas of the world, and the men of the ship knew it.";
    ModelInput input;
    input.text = text;
    auto forward = engine.value()->forwardModel(input);
    ASSERT_TRUE(forward.ok()) << forward.error().message;
    auto weights = SafetensorsFile::open(folder + "/model.safetensors");
    ASSERT_TRUE(weights.ok());
    auto embeddings = weights.value()->read("transformer.word_emb.emb_layers.0.weight");
    auto bias = weights.value()->read("crit.out_layers.0.bias");
    ASSERT_TRUE(embeddings.ok() && bias.ok());
    const PlainTensor& last = forward.value()->hidden.back();
    const std::int64_t n = forward.value()->n, dim = embeddings->shape[1];
    int right = 0;
    for (std::int64_t i = 0; i + 1 < n; ++i) {
        int best = 0;
        double bestScore = -1e300;
        for (int v = 0; v < 256; ++v) {
            double s = bias->f32[v];
            for (std::int64_t c = 0; c < dim; ++c) s += double(last.f32[i * dim + c]) * embeddings->f32[v * dim + c];
            if (s > bestScore) bestScore = s, best = v;
        }
        right += best == static_cast<unsigned char>(text[static_cast<std::size_t>(i + 1)]);
    }
    EXPECT_GT(double(right) / double(n - 1), 0.3);
    const PlainTensor& a = forward.value()->attention[0];
    double share = 0;
    int rows = 0;
    for (std::int64_t h = 0; h < a.shape[0]; ++h)
        for (std::int64_t i = 32; i < n; ++i, ++rows)
            for (std::int64_t j = 0; j < i / 32 * 32; ++j) share += a.f32[static_cast<std::size_t>((h * n + i) * n + j)];
    EXPECT_GT(share / rows, 0.1);
}
