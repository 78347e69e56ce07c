#pragma once
// The random projections' token states of an image (docs/IMAGES.md): a cell's values (pixels: R,
// G, B; patches: the 3·P·P patch values) mapped from [0, 1] to [−1, 1] and projected by a seeded
// matrix, plus a 2-D sinusoidal position (the first half of the dimensions encode the row, the
// second half the column, each as the text's 1-D sinusoid). A CLS token is a seeded vector
// without a position. The per-head projections then follow as for text (projectTokenStates).

#include "io/image/image_tokens.h"

#include <attnscope/tensor.h>

#include <cstdint>

namespace attnscope::engine {

/// x [n, D] for the tokens of `tokens` (prefix tokens first, then the grid in raster order).
PlainTensor imageTokenStates(const ImageTokens& tokens, std::int64_t d, std::uint64_t seed);

/// The 2-D sinusoidal position of grid cell (row, col) added into `x` [d].
void addGridPosition(float* x, std::int64_t d, std::int64_t row, std::int64_t col);

}  // namespace attnscope::engine
