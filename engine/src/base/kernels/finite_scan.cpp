#include "base/kernels/finite_scan.h"

#include "base/kernels/cpu_features.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace attnscope::engine {

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
bool chunkHasNonFiniteAvx2(const float* values, std::size_t count);
#endif

// A float is not finite iff its exponent bits are all ones; the chunk test has no early exit, so
// it vectorises (a per-value std::isfinite loop with an early return does not, and costs as much
// as a sparse variant's whole run on 16k tokens).
std::size_t firstNonFiniteChunk(const float* values, std::size_t count) {
    constexpr std::size_t kChunk = 4096;
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx2Fma()) {
        for (std::size_t c0 = 0; c0 < count; c0 += kChunk)
            if (chunkHasNonFiniteAvx2(values + c0, std::min(kChunk, count - c0))) return c0;
        return count;
    }
#endif
    for (std::size_t c0 = 0; c0 < count; c0 += kChunk) {
        const std::size_t c1 = std::min(count, c0 + kChunk);
        std::uint32_t bad = 0;
        for (std::size_t i = c0; i < c1; ++i) {
            std::uint32_t bits;
            std::memcpy(&bits, &values[i], sizeof bits);
            bad |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
        }
        if (bad) return c0;
    }
    return count;
}

}  // namespace attnscope::engine
