#pragma once
// Dense views of a result's weights for tests: [heads, n, m] weights and multiplicities from its
// tiles (the only way anything reads weights), so tests compare whole matrices.

#include <attnscope/types.h>

#include <cstdint>
#include <vector>

namespace test_support {

/// Weights [heads, n, m] of a result, head by head from whole-head tiles.
inline std::vector<float> denseWeights(const attnscope::engine::AttentionResult& r) {
    std::vector<float> out;
    out.reserve(static_cast<std::size_t>(r.heads * r.n * r.m));
    for (int h = 0; h < r.heads; ++h) {
        const auto t = r.weights->tile(h, 0, r.n, 0, r.m);
        out.insert(out.end(), t.weights.begin(), t.weights.end());
    }
    return out;
}

/// Whether the pattern of head h allows key j for query i.
inline bool allowed(const attnscope::engine::AttentionResult& r, int h, std::int64_t i, std::int64_t j) {
    return r.weights->tile(h, i, i + 1, j, j + 1, /*withReasons=*/true).multiplicity[0] > 0;
}

}  // namespace test_support
