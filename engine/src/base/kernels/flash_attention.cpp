// Picks the flash-attention body for the CPU and sizes a worker's buffers (the bodies themselves
// allocate nothing: flash_attention_bodies.h).

#include "base/kernels/flash_attention.h"

#include "base/kernels/cpu_features.h"
#include "base/kernels/flash_attention_bodies.h"

namespace attnscope::engine {

FlashIsa flashIsa() {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx512()) return FlashIsa::Avx512;
    if (haveAvx2Fma()) return FlashIsa::Avx2;
#endif
    return FlashIsa::Portable;
}

const char* flashIsaName(FlashIsa isa) {
    switch (isa) {
        case FlashIsa::Avx512: return "avx512";
        case FlashIsa::Avx2: return "avx2";
        case FlashIsa::Portable: break;
    }
    return "portable";
}

std::uint64_t flashScratchBytes(std::int64_t m, std::int64_t d) {
    const std::int64_t keys = flash::roundUp(m, flash::kPanel), dp = flash::roundUp(d, flash::kLanes);
    const std::int64_t values = d % flash::kLanes != 0 ? m * dp : 0;
    return static_cast<std::uint64_t>(keys * d + values + flash::kRows * (flash::kKeys + dp + 1)) * sizeof(float) +
           static_cast<std::uint64_t>(flash::kRows) * sizeof(double);
}

std::int64_t flashAttentionHead(const FlashHead& head, FlashScratch& scratch) { return flashAttentionHead(head, scratch, flashIsa()); }

std::int64_t flashAttentionHead(const FlashHead& head, FlashScratch& scratch, FlashIsa isa) {
    const std::int64_t dp = flash::roundUp(head.d, flash::kLanes);
    const auto atLeast = [](auto& buffer, std::int64_t size) {
        if (static_cast<std::int64_t>(buffer.size()) < size) buffer.resize(static_cast<std::size_t>(size));
    };
    atLeast(scratch.keys, flash::roundUp(head.m, flash::kPanel) * head.d);
    if (head.d % flash::kLanes != 0) atLeast(scratch.values, head.m * dp);
    atLeast(scratch.scores, flash::kRows * flash::kKeys);
    atLeast(scratch.output, flash::kRows * dp);
    atLeast(scratch.rowMax, flash::kRows);
    atLeast(scratch.rowSum, flash::kRows);
    const flash::Buffers buffers{scratch.keys.data(), scratch.values.data(), scratch.scores.data(),
                                 scratch.output.data(), scratch.rowMax.data(), scratch.rowSum.data()};
    switch (isa) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
        case FlashIsa::Avx512: return flash::headAvx512(head, buffers);
        case FlashIsa::Avx2: return flash::headAvx2(head, buffers);
#endif
        default: return flash::headPortable(head, buffers);
    }
}

}  // namespace attnscope::engine
