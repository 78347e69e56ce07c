// The strided keys pass (strided_keys_pass.h): the portable version, row by row, and the dispatch
// to the AVX2 version (strided_keys_pass_avx2.cpp), which runs 8 residues per vector.

#include "attention/variants/shared/strided_keys_pass.h"

#include "base/kernels/cpu_features.h"
#include "base/kernels/finite_scan.h"
#include "base/kernels/row_exp.h"

#include <algorithm>
#include <cmath>

namespace attnscope::engine {

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
std::int64_t stridedKeysScratchFloatsAvx2(std::int64_t n, std::int64_t d, std::int64_t step, bool keyPanels);
std::int64_t addStridedKeysAvx2(const StridedKeysPass& pass, const float* keyPanels, float* scratch);
#endif

namespace {

// One row at a time: its strided keys' scores into `scores`, then exp and weighted values.
std::int64_t addStridedKeysPortable(const StridedKeysPass& p, float* scores) {
    const std::int64_t n = p.n, d = p.d, l = p.step;
    std::int64_t added = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t r = i % l, u = i / l, keys = (n - r + l - 1) / l;
        // key indices s (key s·l + r): [0, below) and [aboveFrom, keys)
        const std::int64_t below = std::clamp<std::int64_t>(u - p.gap + 1, 0, keys);
        const std::int64_t aboveFrom = p.above ? std::min(keys, u + p.gap) : keys;
        const std::int64_t count = below + (keys - aboveFrom);
        float* oi = p.out + i * d;
        const auto finishRow = [&] {
            if (!p.normalise || p.rowSum[i] == 0.0f) return;
            const float inv = 1.0f / p.rowSum[i];
            for (std::int64_t c = 0; c < d; ++c) oi[c] *= inv;
        };
        if (count == 0) {
            finishRow();
            continue;
        }
        const float* qi = p.q + i * d;
        std::int64_t t = 0;
        float mx = -INFINITY;
        const auto score = [&](std::int64_t s) {
            const float* kj = p.k + (s * l + r) * d;
            float dot = 0.0f;
            for (std::int64_t c = 0; c < d; ++c) dot += qi[c] * kj[c];
            scores[t++] = dot;
            mx = std::max(mx, dot);
        };
        for (std::int64_t s = 0; s < below; ++s) score(s);
        for (std::int64_t s = aboveFrom; s < keys; ++s) score(s);
        float ref = p.rowMax[i];
        if (!((mx - ref) * p.scale <= kMaxReferenceExcess)) {  // (also when ref is -inf)
            const float keep = std::exp((ref - mx) * p.scale);
            for (std::int64_t c = 0; c < d; ++c) oi[c] *= keep;
            p.rowSum[i] *= keep;
            p.rowMax[i] = ref = mx;
        }
        float sum = 0.0f;
        t = 0;
        const auto addValue = [&](std::int64_t s) {
            const float e = std::exp((scores[t++] - ref) * p.scale);
            const float* vj = p.v + (s * l + r) * d;
            for (std::int64_t c = 0; c < d; ++c) oi[c] += e * vj[c];
            sum += e;
        };
        for (std::int64_t s = 0; s < below; ++s) addValue(s);
        for (std::int64_t s = aboveFrom; s < keys; ++s) addValue(s);
        p.rowSum[i] += sum;
        added += count;
        finishRow();
    }
    return added;
}

}  // namespace

std::int64_t stridedKeysScratchFloats(std::int64_t n, std::int64_t d, std::int64_t step, bool keyPanels) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx2Fma()) return stridedKeysScratchFloatsAvx2(n, d, step, keyPanels);
#endif
    (void)d;
    (void)keyPanels;
    return keysPerResidue(n, step);
}

std::int64_t addStridedKeys(const StridedKeysPass& pass, const float* keyPanels, float* scratch) {
    if (pass.step < 2 || pass.gap < 1) return 0;
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx2Fma()) return addStridedKeysAvx2(pass, keyPanels, scratch);
#endif
    (void)keyPanels;
    if (pass.nonFinite)
        *pass.nonFinite = *pass.nonFinite || !allFinite(pass.q, static_cast<std::size_t>(pass.n * pass.d)) ||
                          !allFinite(pass.v, static_cast<std::size_t>(pass.n * pass.d));
    return addStridedKeysPortable(pass, scratch);
}

}  // namespace attnscope::engine
