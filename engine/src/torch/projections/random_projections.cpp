#include "torch/tensors/tensor_views.h"
#include "torch/projections/random_projections.h"

#include "base/runtime/seeded_normal.h"

#include <attnscope/moe_router.h>

#include <cmath>
#include <memory>

namespace attnscope::engine {
namespace {

// Stream ids keep the embedding table (kEmbeddingStream) and the weight matrices independent.
constexpr std::uint64_t kWeightStream = 0x200000000ull;

}  // namespace

Qkv randomProjections(const TokenizedInput& input, const ProjectionSpec& spec) {
    const std::int64_t dim = spec.modelDim > 0 ? spec.modelDim : spec.heads * spec.headDim;
    // x: [n, D] = token embedding + position (attention/moe/token_states.cpp)
    return projectTokenStates(randomTokenStates(input, dim, spec.seed), spec);
}

Qkv projectTokenStates(PlainTensor statesIn, const ProjectionSpec& spec) {
    const std::int64_t heads = spec.heads;
    const std::int64_t headDim = spec.headDim;
    const std::int64_t dim = spec.modelDim > 0 ? spec.modelDim : heads * headDim;
    const std::int64_t n = statesIn.shape[0];
    auto states = std::make_shared<PlainTensor>(std::move(statesIn));
    at::Tensor x = at::from_blob(states->f32.data(), {n, dim}, [states](void*) {}, at::kFloat);

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
    const at::Tensor projected = at::matmul(x.unsqueeze(0).unsqueeze(0), w);  // [3, heads, n, headDim]
    return qkvOf(projected[0], projected[1], projected[2]);
}

}  // namespace attnscope::engine
