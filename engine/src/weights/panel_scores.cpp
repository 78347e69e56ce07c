#include "weights/panel_scores.h"

#include "kernels/cpu_features.h"

#include <algorithm>
#include <cmath>

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include <immintrin.h>
#endif

namespace attnscope::engine {
namespace {

constexpr std::int64_t kLanes = 8;

// One panel's 8 keys against `rows` (<= 4) queries: acc[r][lane] = fma chain over c.
void panelPortable(const float* const* q, int rows, const float* panel, std::int64_t d, float (*acc)[kLanes]) {
    for (int r = 0; r < rows; ++r)
        for (std::int64_t lane = 0; lane < kLanes; ++lane) {
            float s = 0.0f;
            for (std::int64_t c = 0; c < d; ++c) s = std::fma(q[r][c], panel[c * kLanes + lane], s);
            acc[r][lane] = s;
        }
}

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
ATTNSCOPE_AVX2_FMA_TARGET void panelAvx2(const float* const* q, int rows, const float* panel, std::int64_t d,
                                         float (*acc)[kLanes]) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const float* q0 = q[0];
    const float* q1 = q[rows > 1 ? 1 : 0];
    const float* q2 = q[rows > 2 ? 2 : 0];
    const float* q3 = q[rows > 3 ? 3 : 0];
    for (std::int64_t c = 0; c < d; ++c) {
        const __m256 k = _mm256_loadu_ps(panel + c * kLanes);
        a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(q0 + c), k, a0);
        a1 = _mm256_fmadd_ps(_mm256_broadcast_ss(q1 + c), k, a1);
        a2 = _mm256_fmadd_ps(_mm256_broadcast_ss(q2 + c), k, a2);
        a3 = _mm256_fmadd_ps(_mm256_broadcast_ss(q3 + c), k, a3);
    }
    _mm256_storeu_ps(acc[0], a0);
    if (rows > 1) _mm256_storeu_ps(acc[1], a1);
    if (rows > 2) _mm256_storeu_ps(acc[2], a2);
    if (rows > 3) _mm256_storeu_ps(acc[3], a3);
}
#endif

}  // namespace

KeyPanels::KeyPanels(const float* k, std::int64_t m, std::int64_t d) : m_m(m), m_d(d) {
    const std::int64_t panels = (m + kLanes - 1) / kLanes;
    m_panels.assign(static_cast<std::size_t>(panels * d * kLanes), 0.0f);
    for (std::int64_t j = 0; j < m; ++j) {
        float* panel = m_panels.data() + (j / kLanes) * d * kLanes + j % kLanes;
        for (std::int64_t c = 0; c < d; ++c) panel[c * kLanes] = k[j * d + c];
    }
}

void KeyPanels::score(const float* q, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, float* out,
                      std::int64_t ldo) const {
    if (i1 <= i0 || j1 <= j0) return;
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    static const bool avx2 = haveAvx2Fma();
    const auto kernel = avx2 ? panelAvx2 : panelPortable;
#else
    const auto kernel = panelPortable;
#endif
    float acc[4][kLanes];
    const float* rows[4];
    for (std::int64_t p = j0 / kLanes; p * kLanes < j1; ++p) {
        const float* panel = m_panels.data() + p * m_d * kLanes;
        const std::int64_t lo = std::max(j0, p * kLanes), hi = std::min(j1, (p + 1) * kLanes);
        for (std::int64_t i = i0; i < i1; i += 4) {
            const int count = static_cast<int>(std::min<std::int64_t>(4, i1 - i));
            for (int r = 0; r < count; ++r) rows[r] = q + (i + r) * m_d;
            kernel(rows, count, panel, m_d, acc);
            for (int r = 0; r < count; ++r)
                std::copy(acc[r] + (lo - p * kLanes), acc[r] + (hi - p * kLanes), out + (i + r - i0) * ldo + (lo - j0));
        }
    }
}

}  // namespace attnscope::engine
