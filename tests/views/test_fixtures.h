#pragma once
// Hand-made RunResults for the views tests: no engine involved.

#include <attnscope/explicit_weights.h>
#include <attnscope/types.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnscope::testing {

/// Distinct value per (head, query, key), so a transposed or shifted view is caught.
inline float fixtureWeight(int head, int query, int key) {
    return static_cast<float>(head * 1000 + query * 31 + key + 1) / 4096.0f;
}

/// One "full" result with explicit dense weights [heads, n, n] and tokens "t0", "t1", … (token 1 is
/// "<b>x</b>", to check that views never render token text as HTML).
inline std::shared_ptr<const engine::RunResult> makeDenseResult(int heads, int n, bool withTokens = true) {
    auto run = std::make_shared<engine::RunResult>();
    run->n = n;
    run->heads = heads;
    run->headDim = 4;
    if (withTokens) {
        for (int i = 0; i < n; ++i) {
            engine::Token token;
            token.text = i == 1 ? "<b>x</b>" : "t" + std::to_string(i);
            run->input.tokens.push_back(token);
        }
    }
    engine::AttentionResult result;
    result.variantId = "full";
    result.params["causal"] = false;
    result.heads = heads;
    result.n = result.m = n;
    result.d = 4;
    std::vector<float> weights(static_cast<std::size_t>(heads) * n * n);
    for (int h = 0; h < heads; ++h)
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) weights[(static_cast<std::size_t>(h) * n + i) * n + j] = fixtureWeight(h, i, j);
    result.weights = engine::makeDenseWeights(heads, n, n, std::move(weights));
    run->results.push_back(std::move(result));
    return run;
}

/// A band |i − j| <= 1 over n tokens with `weight(head, query, key)` on its entries (listed
/// weights: a sparse pattern the compare and diagnostics views read as any variant's).
inline engine::AttentionResult makeBandResult(const std::string& id, int heads, int n,
                                              const std::function<float(int, int, int)>& weight) {
    engine::AttentionResult band;
    band.variantId = id;
    band.heads = heads;
    band.n = band.m = n;
    engine::SparsePattern pattern;
    pattern.rows = pattern.cols = n;
    pattern.rowPtr = {0};
    for (int i = 0; i < n; ++i) {
        for (int j = std::max(0, i - 1); j <= std::min(n - 1, i + 1); ++j) {
            pattern.colIdx.push_back(j);
            pattern.reason.push_back(static_cast<std::uint8_t>(engine::PatternReason::Local));
        }
        pattern.rowPtr.push_back(pattern.nnz());
    }
    std::vector<float> w;
    for (int h = 0; h < heads; ++h)
        for (int i = 0; i < n; ++i)
            for (auto e = pattern.rowPtr[i]; e < pattern.rowPtr[i + 1]; ++e) w.push_back(weight(h, i, pattern.colIdx[e]));
    band.weights = engine::makeListedWeights(heads, std::move(pattern), std::move(w));
    return band;
}

// A CLS token and a 2 × 3 grid of patches over a 60 × 40 picture (patches of 20 pixels), 2 heads.
// Weights are given row by row: from query `q` head h puts (h + 1) · (key + 1) on each key, so
// the largest is the last patch's.
constexpr int kImageRows = 2, kImageCols = 3, kImageTokens = 1 + kImageRows * kImageCols, kImageHeads = 2;

inline std::shared_ptr<engine::RunResult> makeImageRun(std::vector<std::uint8_t> reasons = {}) {
    auto run = std::make_shared<engine::RunResult>();
    run->n = kImageTokens;
    run->heads = kImageHeads;
    run->headDim = 4;
    engine::ImageGrid grid;
    grid.mode = engine::ImageTokenMode::Patches;
    grid.name = "picture.png";
    grid.sourceWidth = grid.inputWidth = 60;
    grid.sourceHeight = grid.inputHeight = 40;
    grid.rows = kImageRows;
    grid.cols = kImageCols;
    grid.prefix = 1;
    grid.cell = 20;
    run->input.kind = engine::TokenizerKind::Patches;
    run->input.tokens.push_back(engine::Token{"[CLS]", 0, 0, -1});
    for (int r = 0; r < kImageRows; ++r)
        for (int c = 0; c < kImageCols; ++c) {
            engine::Token token{"(" + std::to_string(r) + ", " + std::to_string(c) + ")", 0, 0, r * kImageCols + c};
            token.row = r;
            token.col = c;
            run->input.tokens.push_back(token);
        }
    run->input.image = grid;
    engine::AttentionResult result;
    result.variantId = "full";
    result.params["causal"] = false;
    result.heads = kImageHeads;
    result.n = result.m = kImageTokens;
    result.d = 4;
    std::vector<float> weights(std::size_t(kImageHeads * kImageTokens * kImageTokens));
    for (int h = 0; h < kImageHeads; ++h)
        for (int i = 0; i < kImageTokens; ++i) {
            float sum = 0;
            for (int j = 0; j < kImageTokens; ++j) sum += float((h + 1) * (j + 1));
            for (int j = 0; j < kImageTokens; ++j) weights[std::size_t((h * kImageTokens + i) * kImageTokens + j)] = float((h + 1) * (j + 1)) / sum;
        }
    result.weights = engine::makeDenseWeights(kImageHeads, kImageTokens, kImageTokens, std::move(weights), std::move(reasons));
    run->results.push_back(std::move(result));
    return run;
}

}  // namespace attnscope::testing
