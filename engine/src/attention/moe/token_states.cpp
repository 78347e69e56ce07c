// The random projections' token representations (torch/projections/random_projections.cpp projects them into
// Q, K, V; a seeded router routes them): x[t] = embed(id_t) + sinusoid(t), embedding entries
// N(0, 1) drawn from (seed, token id), the position encoding interleaved sin/cos (Vaswani et al.
// 2017 §3.5).

#include <attnscope/moe_router.h>

#include "base/runtime/huge_pages.h"
#include "base/runtime/seeded_normal.h"

#include <cmath>
#include <unordered_map>
#include <vector>

namespace attnscope::engine {

PlainTensor randomTokenStates(const TokenizedInput& tokens, std::int64_t d, std::uint64_t seed) {
    const std::int64_t n = static_cast<std::int64_t>(tokens.tokens.size());
    // (41 MB at 20k tokens and 512 dimensions: on huge pages before the zeros first touch it)
    std::vector<float> values;
    assignOnHugePages(values, static_cast<std::size_t>(n * d), 0.0f);
    PlainTensor x = PlainTensor::fromF32({n, d}, std::move(values));
    // 10000^(i/d) once per column pair, not per token (the same value, so the same angles)
    std::vector<double> wavelength;
    for (std::int64_t i = 0; i < d; i += 2) wavelength.push_back(std::pow(10000.0, static_cast<double>(i) / static_cast<double>(d)));
    // a token id's embedding drawn once and reused at its every position (a long text repeats its
    // ids: 32,768 characters have a few dozen)
    std::unordered_map<std::int64_t, std::vector<float>> embeddings;
    for (std::int64_t t = 0; t < n; ++t) {
        float* row = x.f32.data() + t * d;
        for (std::int64_t i = 0; i < d; i += 2) {
            const double angle = static_cast<double>(t) / wavelength[static_cast<std::size_t>(i / 2)];
            row[i] = static_cast<float>(std::sin(angle));
            if (i + 1 < d) row[i + 1] = static_cast<float>(std::cos(angle));
        }
        const std::int64_t id = tokens.tokens[static_cast<std::size_t>(t)].id;
        auto [entry, drawn] = embeddings.try_emplace(id);
        if (drawn) {
            SeededNormal gen(mixSeed(seed, kEmbeddingStream ^ static_cast<std::uint64_t>(id)));
            entry->second.resize(static_cast<std::size_t>(d));
            for (float& e : entry->second) e = static_cast<float>(gen.normal());
        }
        for (std::int64_t c = 0; c < d; ++c) row[c] += entry->second[static_cast<std::size_t>(c)];
    }
    return x;
}

}  // namespace attnscope::engine
