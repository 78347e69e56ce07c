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
