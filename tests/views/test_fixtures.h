#pragma once
// Hand-made RunResults for the views tests: no engine involved.

#include <attnscope/explicit_weights.h>
#include <attnscope/types.h>

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

}  // namespace attnscope::testing
