#include "qkv/random_projections.h"

#include "qkv/seeded_normal.h"

#include <cmath>

namespace attnscope::engine {
namespace {

// Stream ids keep the embedding table and the weight matrices independent of each other.
constexpr std::uint64_t kEmbeddingStream = 0x100000000ull;
constexpr std::uint64_t kWeightStream = 0x200000000ull;

}  // namespace

at::Tensor sinusoidalPositions(std::int64_t n, std::int64_t dim) {
    at::Tensor pe = at::zeros({n, dim}, at::kFloat);
    float* p = pe.data_ptr<float>();
    for (std::int64_t pos = 0; pos < n; ++pos) {
        for (std::int64_t i = 0; i < dim; i += 2) {
            const double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(i) / dim);
            p[pos * dim + i] = static_cast<float>(std::sin(angle));
            if (i + 1 < dim) p[pos * dim + i + 1] = static_cast<float>(std::cos(angle));
        }
    }
    return pe;
}

Qkv randomProjections(const TokenizedInput& input, const ProjectionSpec& spec) {
    const std::int64_t n = static_cast<std::int64_t>(input.tokens.size());
    const std::int64_t heads = spec.heads;
    const std::int64_t headDim = spec.headDim;
    const std::int64_t dim = spec.modelDim > 0 ? spec.modelDim : heads * headDim;

    // x: [n, D] = token embedding + position
    at::Tensor x = sinusoidalPositions(n, dim);
    float* xp = x.data_ptr<float>();
    for (std::int64_t t = 0; t < n; ++t) {
        SeededNormal gen(mixSeed(spec.seed, kEmbeddingStream ^ static_cast<std::uint64_t>(input.tokens[t].id)));
        for (std::int64_t c = 0; c < dim; ++c) xp[t * dim + c] += static_cast<float>(gen.normal());
    }

    // w: [3, heads, D, headDim], entries N(0, 1/D) so q, k, v entries keep unit-order variance
    at::Tensor w = at::empty({3, heads, dim, headDim}, at::kFloat);
    float* wp = w.data_ptr<float>();
    const double stdDev = 1.0 / std::sqrt(static_cast<double>(dim));
    for (std::int64_t mat = 0; mat < 3 * heads; ++mat) {
        SeededNormal gen(mixSeed(spec.seed, kWeightStream + static_cast<std::uint64_t>(mat)));
        float* wm = wp + mat * dim * headDim;
        for (std::int64_t e = 0; e < dim * headDim; ++e) wm[e] = static_cast<float>(gen.normal() * stdDev);
    }

    // q, k, v: [heads, n, headDim] = x @ W[h]
    Qkv qkv;
    at::Tensor projected = at::matmul(x.unsqueeze(0).unsqueeze(0), w);  // [3, heads, n, headDim]
    qkv.q = projected[0].contiguous();
    qkv.k = projected[1].contiguous();
    qkv.v = projected[2].contiguous();
    return qkv;
}

}  // namespace attnscope::engine
