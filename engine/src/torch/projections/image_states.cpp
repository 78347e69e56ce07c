#include "torch/projections/image_states.h"

#include "base/runtime/seeded_normal.h"

#include <cmath>
#include <vector>

namespace attnscope::engine {
namespace {

// Streams apart from the text's embedding table and the per-head weights.
constexpr std::uint64_t kCellProjectionStream = 0x300000000ull;
constexpr std::uint64_t kPrefixTokenStream = 0x300000100ull;

// Interleaved sin/cos of `position` over `width` dimensions starting at x (the text's encoding).
void addSinusoid(float* x, std::int64_t width, std::int64_t position) {
    for (std::int64_t i = 0; i < width; i += 2) {
        const double angle = static_cast<double>(position) / std::pow(10000.0, static_cast<double>(i) / static_cast<double>(width));
        x[i] += static_cast<float>(std::sin(angle));
        if (i + 1 < width) x[i + 1] += static_cast<float>(std::cos(angle));
    }
}

}  // namespace

void addGridPosition(float* x, std::int64_t d, std::int64_t row, std::int64_t col) {
    const std::int64_t half = d / 2;
    addSinusoid(x, half, row);
    addSinusoid(x + half, d - half, col);
}

PlainTensor imageTokenStates(const ImageTokens& tokens, std::int64_t d, std::uint64_t seed) {
    const ImageGrid& grid = *tokens.input.image;
    const std::int64_t n = static_cast<std::int64_t>(tokens.input.tokens.size());
    const std::int64_t e = tokens.valuesPerCell;
    // W [e, D], entries N(0, 1/e): a cell's projection has about unit variance per dimension.
    std::vector<float> w(static_cast<std::size_t>(e * d));
    SeededNormal gen(mixSeed(seed, kCellProjectionStream + static_cast<std::uint64_t>(e)));
    const double stdDev = 1.0 / std::sqrt(static_cast<double>(e));
    for (float& v : w) v = static_cast<float>(gen.normal() * stdDev);

    PlainTensor x = PlainTensor::zeros(DType::F32, {n, d});
    for (std::int64_t t = 0; t < grid.prefix; ++t) {
        SeededNormal prefixGen(mixSeed(seed, kPrefixTokenStream + static_cast<std::uint64_t>(t)));
        float* row = x.f32.data() + t * d;
        for (std::int64_t c = 0; c < d; ++c) row[c] = static_cast<float>(prefixGen.normal());
    }
    std::vector<double> acc(static_cast<std::size_t>(d));
    for (std::int64_t cell = 0; cell < grid.cells(); ++cell) {
        std::fill(acc.begin(), acc.end(), 0.0);
        const float* values = tokens.values.data() + cell * e;
        for (std::int64_t k = 0; k < e; ++k) {
            const double centred = 2.0 * values[k] - 1.0;
            const float* wk = w.data() + k * d;
            for (std::int64_t c = 0; c < d; ++c) acc[static_cast<std::size_t>(c)] += centred * wk[c];
        }
        float* row = x.f32.data() + (grid.prefix + cell) * d;
        for (std::int64_t c = 0; c < d; ++c) row[c] = static_cast<float>(acc[static_cast<std::size_t>(c)]);
        addGridPosition(row, d, cell / grid.cols, cell % grid.cols);
    }
    return x;
}

}  // namespace attnscope::engine
