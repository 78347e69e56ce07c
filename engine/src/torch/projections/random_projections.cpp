#include "torch/tensors/tensor_views.h"
#include "torch/projections/random_projections.h"

#include "base/runtime/huge_pages.h"
#include "base/runtime/seeded_normal.h"

#include <attnscope/moe_router.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace attnscope::engine {
namespace {

// Stream ids keep the embedding table (kEmbeddingStream) and the weight matrices independent.
constexpr std::uint64_t kWeightStream = 0x200000000ull;

// Queries projected between two cancel checks: tens of milliseconds of matrix products, so a
// cancel of a long input is seen at once (one product over 32k tokens took half a second).
constexpr std::int64_t kRowsPerStep = 2048;

}  // namespace

Qkv randomProjections(const TokenizedInput& input, const ProjectionSpec& spec, const ProgressFn& progress) {
    const std::int64_t dim = spec.modelDim > 0 ? spec.modelDim : spec.heads * spec.headDim;
    // x: [n, D] = token embedding + position (attention/moe/token_states.cpp)
    return projectTokenStates(randomTokenStates(input, dim, spec.seed), spec, progress);
}

Qkv projectTokenStates(PlainTensor statesIn, const ProjectionSpec& spec, const ProgressFn& progress) {
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

    // q, k, v: [heads, n, headDim] = x @ W[h], a block of rows at a time (each block's rows of one
    // head are contiguous in the output, so every product writes in place)
    // q, k and v on huge pages (base/runtime/huge_pages.h): 123 MB at 20k tokens took a quarter of
    // a second of 4 KiB page faults when the products first wrote them
    const auto count = static_cast<std::size_t>(3 * heads * n * headDim);
    std::shared_ptr<float[]> storage(new float[count]);  // (not touched: the products write every value)
    adviseHugePages(storage.get(), count * sizeof(float));
    float* values = storage.get();
    at::Tensor projected = at::from_blob(values, {3, heads, n, headDim}, [storage](void*) {}, at::kFloat);
    for (std::int64_t r0 = 0; r0 < n; r0 += kRowsPerStep) {
        if (progress && !progress(Progress{"qkv", r0, n})) throw CancelledError();
        const std::int64_t rows = std::min(kRowsPerStep, n - r0);
        const at::Tensor block = x.narrow(0, r0, rows);
        for (std::int64_t mat = 0; mat < 3; ++mat)
            for (std::int64_t h = 0; h < heads; ++h) {
                at::Tensor out = projected[mat][h].narrow(0, r0, rows);
                at::mm_out(out, block, w[mat][h]);
            }
    }
    return qkvOf(projected[0], projected[1], projected[2]);
}

}  // namespace attnscope::engine
