// exBERT's context search (attnscope/context_search.h) on a tiny corpus through a hand-made
// model: each word has a fixed 2-D vector and every token weighs the token before it most, so the
// nearest contexts, their cosines and what each looked at are worked out by hand below.

#include <attnscope/context_search.h>
#include <attnscope/torch_free_run.h>

#include "io/context/context_pieces.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

using namespace attnscope::engine;

namespace {

// cat (1, 0), dog (0.8, 0.6), car (0, 1), the (−1, 0), any other word (0, −1).
std::pair<float, float> wordVector(const std::string& word) {
    static const std::map<std::string, std::pair<float, float>> table{
        {"cat", {1.0f, 0.0f}}, {"dog", {0.8f, 0.6f}}, {"car", {0.0f, 1.0f}}, {"the", {-1.0f, 0.0f}}};
    const auto it = table.find(word);
    return it == table.end() ? std::pair<float, float>{0.0f, -1.0f} : it->second;
}

// Two layers, two query heads sharing one key head (d = 2). A [CLS] token with no bytes comes
// first (the model's special token). hidden = the word's vector at every layer; keys = the word's
// vector; query head h = the word's vector turned by h · 90°. Token t weighs token t − 1 by 0.7
// (token 0 weighs itself by 1).
Result<std::shared_ptr<const ModelForward>> handMadePass(const ModelInput& input) {
    auto pass = std::make_shared<ModelForward>();
    pass->input.text = input.text;
    pass->input.tokens.push_back({"[CLS]", 0, 0, 1});
    std::size_t at = 0;
    while (at < input.text.size()) {
        const auto space = input.text.find(' ', at);
        const auto stop = space == std::string::npos ? input.text.size() : space;
        if (stop > at) pass->input.tokens.push_back({input.text.substr(at, stop - at), static_cast<std::int64_t>(at), static_cast<std::int64_t>(stop), 2});
        at = stop + 1;
    }
    const std::int64_t n = static_cast<std::int64_t>(pass->input.tokens.size()), layers = 2, heads = 2, d = 2;
    pass->layers = layers;
    pass->heads = heads;
    pass->headDim = d;
    pass->hiddenSize = 2;
    pass->n = n;
    std::vector<float> words;
    for (const Token& token : pass->input.tokens) {
        const auto [x, y] = token.byteBegin == token.byteEnd ? std::pair<float, float>{0.5f, 0.5f} : wordVector(token.text);
        words.push_back(x);
        words.push_back(y);
    }
    for (std::int64_t l = 0; l <= layers; ++l) pass->hidden.push_back(PlainTensor::fromF32({n, 2}, words));
    for (std::int64_t l = 0; l < layers; ++l) {
        std::vector<float> q;
        for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t t = 0; t < n; ++t) {
                const float x = words[static_cast<std::size_t>(2 * t)], y = words[static_cast<std::size_t>(2 * t + 1)];
                q.push_back(h == 0 ? x : -y);
                q.push_back(h == 0 ? y : x);
            }
        QkvTensors qkv;
        qkv.q = PlainTensor::fromF32({heads, n, d}, q);
        qkv.k = PlainTensor::fromF32({1, n, d}, words);
        qkv.v = qkv.k;
        pass->qkv.push_back(std::move(qkv));
        std::vector<float> weights(static_cast<std::size_t>(heads * n * n), 0.0f);
        for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t t = 0; t < n; ++t) {
                float* row = weights.data() + (h * n + t) * n;
                if (t == 0) {
                    row[0] = 1.0f;
                } else {
                    row[t - 1] = 0.7f;
                    row[t] = 0.3f;
                }
            }
        pass->attention.push_back(PlainTensor::fromF32({heads, n, n}, weights));
    }
    return std::shared_ptr<const ModelForward>(std::move(pass));
}

ModelInfo handMadeModel() {
    ModelInfo model;
    model.folder = "hand-made";
    model.arch = "test";
    model.layers = 2;
    model.heads = 2;
    model.maxTokens = 64;
    return model;
}

const std::string kCorpus = "the cat sat\n\nthe dog ran\na car\n";

std::shared_ptr<const ContextIndex> indexOf(ContextSpace space, std::uint64_t budget = 1ull << 20) {
    ContextIndexOptions options;
    options.space = space;
    options.memoryBudgetBytes = budget;
    auto index = buildContextIndex(kCorpus, handMadeModel(), options, handMadePass);
    EXPECT_TRUE(index.ok()) << (index.ok() ? "" : index.error().message);
    return index.ok() ? *index : nullptr;
}

}  // namespace

TEST(ContextSearch, PiecesAreLinesCutAtSpaces) {
    using context::corpusPieces;
    const std::string text = "aaa bbb ccc\n\n  \nabcdefghijkl\naéééé";
    const auto pieces = corpusPieces(text, 8);
    std::vector<std::string> cut;
    for (const auto& p : pieces) cut.push_back(text.substr(static_cast<std::size_t>(p.begin), static_cast<std::size_t>(p.end - p.begin)));
    EXPECT_EQ(cut, (std::vector<std::string>{"aaa bbb", "ccc", "abcdefgh", "ijkl", "aééé", "é"}));
    EXPECT_EQ(context::pieceBytesFor(512), 256);
    EXPECT_EQ(context::pieceBytesFor(64), 60);
    EXPECT_EQ(context::pieceBytesFor(0), 256);
}

// The query (1, 0.1): cat 1/√1.01 = 0.99504, dog 0.86/√1.01 = 0.85574, car 0.1/√1.01 = 0.09950;
// the other words lower. "dog" sits in "the dog ran" and weighs "the" by 0.7.
TEST(ContextSearch, NearestHiddenStatesOnATinyCorpus) {
    const auto index = indexOf(ContextSpace::Hidden);
    ASSERT_TRUE(index);
    EXPECT_EQ(index->size(), 4 + 4 + 3);  // [CLS] and the words of each line
    ContextQuery query;
    query.layer = 1;
    query.top = 3;
    auto found = searchContext(*index, {1.0f, 0.1f}, query);
    ASSERT_TRUE(found.ok()) << found.error().message;
    ASSERT_EQ(found->size(), 3u);
    const double norm = std::sqrt(1.01);
    EXPECT_EQ((*found)[0].text, "cat");
    EXPECT_NEAR((*found)[0].cosine, 1.0 / norm, 1e-6);
    EXPECT_EQ((*found)[1].text, "dog");
    EXPECT_NEAR((*found)[1].cosine, 0.86 / norm, 1e-6);
    EXPECT_EQ((*found)[2].text, "car");
    EXPECT_NEAR((*found)[2].cosine, 0.1 / norm, 1e-6);
    EXPECT_EQ((*found)[1].before, "the ");
    EXPECT_EQ((*found)[1].after, " ran");
    EXPECT_EQ((*found)[1].peekText, "the");
    EXPECT_FLOAT_EQ((*found)[1].peek.weight, 0.7f);
    EXPECT_EQ((*found)[2].before, "a ");
    EXPECT_EQ((*found)[2].after, "");
    // "cat" is the second token of its pass: its strongest key is the first word, "the", which
    // follows [CLS]; "a" (first word of its line) looks at [CLS].
    EXPECT_EQ((*found)[0].peekText, "the");
    query.top = 100;
    found = searchContext(*index, {0.0f, 1.0f}, query);
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(found->size(), 8u) << "the [CLS] tokens are never matches";
    EXPECT_EQ((*found)[0].text, "car");
    EXPECT_EQ((*found)[0].peekText, "a");
}

// Query head 1 turns each word by 90°: "cat" (1, 0) becomes (0, 1), the query of "car" turned
// back. Keys of both heads are the one key head's (grouped-query attention).
TEST(ContextSearch, AHeadsQueriesAndSharedKeys) {
    const auto queries = indexOf(ContextSpace::Queries);
    ASSERT_TRUE(queries);
    EXPECT_EQ(queries->width, 4);
    ContextQuery query;
    query.head = 1;
    query.top = 1;
    auto found = searchContext(*queries, {9.0f, 9.0f, 0.0f, 1.0f}, query);
    ASSERT_TRUE(found.ok()) << found.error().message;
    EXPECT_EQ((*found)[0].text, "cat");
    EXPECT_NEAR((*found)[0].cosine, 1.0, 1e-9);

    const auto keys = indexOf(ContextSpace::Keys);
    ASSERT_TRUE(keys);
    EXPECT_EQ(keys->width, 2);
    found = searchContext(*keys, {0.8f, 0.6f}, query);
    ASSERT_TRUE(found.ok()) << found.error().message;
    EXPECT_EQ((*found)[0].text, "dog");
}

TEST(ContextSearch, TheVectorOfAPassToken) {
    ModelInput input;
    input.text = "the dog";
    const auto pass = handMadePass(input);
    auto vector = contextVector(**pass, ContextSpace::Queries, 0, 2);
    ASSERT_TRUE(vector.ok());
    EXPECT_EQ(*vector, (std::vector<float>{0.8f, 0.6f, -0.6f, 0.8f}));
    EXPECT_FALSE(contextVector(**pass, ContextSpace::Hidden, 2, 0).ok());
    EXPECT_FALSE(contextVector(**pass, ContextSpace::Hidden, 0, 3).ok());
}

TEST(ContextSearch, KeptBesideTheModelAndReadBack) {
    const auto index = indexOf(ContextSpace::Hidden);
    ASSERT_TRUE(index);
    const auto folder = std::filesystem::temp_directory_path() / ("attnscope-context-" + std::to_string(::getpid()));
    std::filesystem::create_directories(folder);
    const auto paths = contextIndexPaths(folder.string(), index->modelIdentity, index->corpusHash, index->space);
    ASSERT_FALSE(paths.empty());
    EXPECT_EQ(paths[0].rfind(folder.string() + "/attnscope-context/corpus-", 0), 0u) << paths[0];
    ASSERT_TRUE(saveContextIndex(*index, paths[0]).ok());
    auto read = loadContextIndex(paths[0]);
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_EQ((*read)->modelIdentity, index->modelIdentity);
    EXPECT_EQ((*read)->corpusHash, contextCorpusHash(kCorpus));
    EXPECT_EQ((*read)->corpus, kCorpus);
    EXPECT_EQ((*read)->vectors, index->vectors);
    ASSERT_EQ((*read)->size(), index->size());
    for (std::int64_t t = 0; t < index->size(); ++t) {
        EXPECT_EQ((*read)->tokens[static_cast<std::size_t>(t)].text, index->tokens[static_cast<std::size_t>(t)].text);
        EXPECT_EQ((*read)->tokens[static_cast<std::size_t>(t)].begin, index->tokens[static_cast<std::size_t>(t)].begin);
        EXPECT_EQ((*read)->peeks[1][static_cast<std::size_t>(t) * 2].key, index->peeks[1][static_cast<std::size_t>(t) * 2].key);
    }
    EXPECT_EQ(loadContextIndex((folder / "none.safetensors").string()).error().code, ErrorCode::NotFound);
    // A damaged file is named, not trusted.
    { std::FILE* f = std::fopen(paths[0].c_str(), "r+b"); ASSERT_TRUE(f); std::fputs("xxxxxxxxxxxx", f); std::fclose(f); }
    auto damaged = loadContextIndex(paths[0]);
    ASSERT_FALSE(damaged.ok());
    EXPECT_EQ(damaged.error().code, ErrorCode::InvalidInput);
    std::filesystem::remove_all(folder);
}

TEST(ContextSearch, TheBudgetStopsTheIndexWithANotice) {
    // One token costs 2 layers × (2 floats + 2 peeks of 8 bytes) = 48 bytes and its bookkeeping;
    // the first line's four tokens fit, the second line's do not.
    const auto index = indexOf(ContextSpace::Hidden, kCorpus.size() + 4 * (48 + sizeof(ContextToken) + 8) + 10);
    ASSERT_TRUE(index);
    EXPECT_EQ(index->size(), 4);
    EXPECT_EQ(index->indexedBytes, 11);
    ASSERT_EQ(index->notices.size(), 1u);
    EXPECT_NE(index->notices[0].find("byte 13 of 31"), std::string::npos) << index->notices[0];
    ContextIndexOptions tiny;
    tiny.memoryBudgetBytes = 10;
    EXPECT_EQ(buildContextIndex(kCorpus, handMadeModel(), tiny, handMadePass).error().code, ErrorCode::OutOfBudget);
}

TEST(ContextSearch, BadRequestsAreNamed) {
    ContextIndexOptions options;
    EXPECT_EQ(buildContextIndex(" \n\n", handMadeModel(), options, handMadePass).error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(buildContextIndex("a\xff", handMadeModel(), options, handMadePass).error().code, ErrorCode::InvalidInput);
    int calls = 0;
    auto cancelled = buildContextIndex(kCorpus, handMadeModel(), options, handMadePass, [&](const Progress&) { return ++calls < 2; });
    EXPECT_EQ(cancelled.error().code, ErrorCode::Cancelled);
    const auto index = indexOf(ContextSpace::Hidden);
    ContextQuery query;
    EXPECT_FALSE(searchContext(*index, {1.0f}, query).ok());
    EXPECT_FALSE(searchContext(*index, {0.0f, 0.0f}, query).ok());
    query.layer = 2;
    EXPECT_FALSE(searchContext(*index, {1.0f, 0.0f}, query).ok());
    query.layer = 0;
    query.head = 2;
    EXPECT_FALSE(searchContext(*index, {1.0f, 0.0f}, query).ok());
}

// A random-projection run as the index's pass: its Q and K side by side per token, its weights;
// the token's vector read from the run is the pass's; no hidden states.
TEST(ContextSearch, ARunWithoutAModelIsAOneLayerPass) {
    // (random projections need LibTorch: explicit Q, K, V stand in, read the same way)
    std::vector<float> values(2 * 6 * 4);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.7f * static_cast<float>(i));
    RunRequest request;
    request.source = QkvTensors{PlainTensor::fromF32({2, 6, 4}, values), PlainTensor::fromF32({2, 6, 4}, values),
                             PlainTensor::fromF32({2, 6, 4}, values)};
    for (float& v : std::get<QkvTensors>(request.source).k.f32) v = -v;
    request.variants.push_back(VariantRequest{"full", {}});
    auto run = runTorchFree(request, TorchFreeRunOptions{});
    ASSERT_TRUE(run.ok()) << run.error().message;
    const RunResult& r = **run;
    const auto pass = passOfRun(r, true);
    EXPECT_EQ(pass->layers, 1);
    EXPECT_EQ(pass->n, r.n);
    ASSERT_EQ(pass->attention.size(), 1u);
    EXPECT_FLOAT_EQ(pass->attention[0].f32[static_cast<std::size_t>((1 * r.n + 2) * r.n + 3)], r.results[0].weightAt(1, 2, 3));
    for (const ContextSpace space : {ContextSpace::Keys, ContextSpace::Queries}) {
        auto fromPass = contextVector(*pass, space, 0, 3);
        auto fromRun = contextVectorOfRun(r, space, 3);
        ASSERT_TRUE(fromPass.ok() && fromRun.ok());
        EXPECT_EQ(*fromPass, *fromRun);
        ASSERT_EQ(fromRun->size(), 8u);
        const float* q = (space == ContextSpace::Keys ? r.k : r.q).data.get();
        EXPECT_EQ((*fromRun)[5], q[(1 * r.n + 3) * 4 + 1]);  // head 1, feature 1
    }
    EXPECT_FALSE(contextVectorOfRun(r, ContextSpace::Hidden, 0).ok());
    EXPECT_FALSE(contextVectorOfRun(r, ContextSpace::Keys, r.n).ok());
    EXPECT_NE(contextProjectionIdentity(r).find("seed 0"), std::string::npos);
}
