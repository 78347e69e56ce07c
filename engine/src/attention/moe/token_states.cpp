// The random projections' token representations (torch/projections/random_projections.cpp projects them into
// Q, K, V; a seeded router routes them): x[t] = embed(id_t) + sinusoid(t), embedding entries
// N(0, 1) drawn from (seed, token id), the position encoding interleaved sin/cos (Vaswani et al.
// 2017 §3.5).

#include <attnscope/moe_router.h>

#include "base/runtime/seeded_normal.h"

#include <cmath>

namespace attnscope::engine {

PlainTensor randomTokenStates(const TokenizedInput& tokens, std::int64_t d, std::uint64_t seed) {
    const std::int64_t n = static_cast<std::int64_t>(tokens.tokens.size());
    PlainTensor x = PlainTensor::zeros(DType::F32, {n, d});
    for (std::int64_t t = 0; t < n; ++t) {
        float* row = x.f32.data() + t * d;
        for (std::int64_t i = 0; i < d; i += 2) {
            const double angle = static_cast<double>(t) / std::pow(10000.0, static_cast<double>(i) / static_cast<double>(d));
            row[i] = static_cast<float>(std::sin(angle));
            if (i + 1 < d) row[i + 1] = static_cast<float>(std::cos(angle));
        }
        SeededNormal gen(mixSeed(seed, kEmbeddingStream ^ static_cast<std::uint64_t>(tokens.tokens[static_cast<std::size_t>(t)].id)));
        for (std::int64_t c = 0; c < d; ++c) row[c] += static_cast<float>(gen.normal());
    }
    return x;
}

}  // namespace attnscope::engine
