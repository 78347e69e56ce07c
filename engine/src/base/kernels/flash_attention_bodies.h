#pragma once
// The three compilations of the flash-attention body (flash_attention_body.inc) and the raw
// buffers they work in. These files are built with their own instruction-set flags, so they use
// nothing from the standard library: an inline function instantiated there could be the copy the
// linker keeps for the whole program and run AVX-512 code on a CPU without it.

#include "base/kernels/flash_attention.h"

#include <cstdint>

namespace attnscope::engine::flash {

/// Keys per block and query rows per block: a block of scores (kRows × kKeys floats, 128 KiB)
/// beside a block of packed keys and values stays in a core's L2.
constexpr std::int64_t kRows = 128, kKeys = 256;

/// Packed widths: keys in panels of 32 along the lanes, values and output padded to 16 columns.
constexpr std::int64_t kPanel = 32, kLanes = 16;

inline std::int64_t roundUp(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

/// Sized by the caller: keys [roundUp(m, kPanel) · d], values [roundUp(m, kPanel) · roundUp(d, kLanes)]
/// (unused when d is a multiple of kLanes), scores [kRows · kKeys], output [kRows · roundUp(d, kLanes)],
/// rowMax and rowSum [kRows].
struct Buffers {
    float *keys, *values, *scores, *output, *rowMax;
    double* rowSum;  ///< (in double: a row of 16k keys adds a thousand partial sums per lane)
};

std::int64_t headPortable(const FlashHead& head, const Buffers& buffers);
std::int64_t headAvx2(const FlashHead& head, const Buffers& buffers);
std::int64_t headAvx512(const FlashHead& head, const Buffers& buffers);

}  // namespace attnscope::engine::flash
