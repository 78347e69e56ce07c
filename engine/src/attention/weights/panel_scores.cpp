#include "attention/weights/panel_scores.h"

#include "base/kernels/cpu_features.h"

#include <algorithm>
#include <cmath>

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include <immintrin.h>
#endif

namespace attnscope::engine {
namespace {

constexpr std::int64_t kLanes = 8;
constexpr int kPairRows = 6;

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
// Two panels' 16 keys against up to kPairRows queries: 12 chains in flight (the FMA's latency
// hidden; 15 of the 16 registers), each still one chain over c per cell. acc[r][0..8) the first panel's keys, acc[r][8..16) the second's.
ATTNSCOPE_AVX2_FMA_TARGET void panelPairAvx2(const float* const* q, int rows, const float* first, const float* second,
                                             std::int64_t d, float (*acc)[2 * kLanes]) {
    __m256 a[kPairRows][2];
    for (auto& row : a) row[0] = row[1] = _mm256_setzero_ps();
    const float* r[kPairRows];
    for (int i = 0; i < kPairRows; ++i) r[i] = q[i < rows ? i : 0];
    for (std::int64_t c = 0; c < d; ++c) {
        const __m256 k0 = _mm256_loadu_ps(first + c * kLanes), k1 = _mm256_loadu_ps(second + c * kLanes);
#pragma GCC unroll 8
        for (int i = 0; i < kPairRows; ++i) {
            const __m256 x = _mm256_broadcast_ss(r[i] + c);
            a[i][0] = _mm256_fmadd_ps(x, k0, a[i][0]);
            a[i][1] = _mm256_fmadd_ps(x, k1, a[i][1]);
        }
    }
    for (int i = 0; i < rows; ++i) {
        _mm256_storeu_ps(acc[i], a[i][0]);
        _mm256_storeu_ps(acc[i] + kLanes, a[i][1]);
    }
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
    if (haveAvx2Fma()) {
        scoreAvx2(q, i0, i1, j0, j1, out, ldo);
        return;
    }
#endif
    float acc[4][kLanes];
    const float* rows[4];
    for (std::int64_t p = j0 / kLanes; p * kLanes < j1; ++p) {
        const float* panel = m_panels.data() + p * m_d * kLanes;
        const std::int64_t lo = std::max(j0, p * kLanes), hi = std::min(j1, (p + 1) * kLanes);
        for (std::int64_t i = i0; i < i1; i += 4) {
            const int count = static_cast<int>(std::min<std::int64_t>(4, i1 - i));
            for (int r = 0; r < count; ++r) rows[r] = q + (i + r) * m_d;
            panelPortable(rows, count, panel, m_d, acc);
            for (int r = 0; r < count; ++r)
                std::copy(acc[r] + (lo - p * kLanes), acc[r] + (hi - p * kLanes), out + (i + r - i0) * ldo + (lo - j0));
        }
    }
}

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
void KeyPanels::scoreAvx2(const float* q, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, float* out,
                          std::int64_t ldo) const {
    float acc[kPairRows][2 * kLanes];
    const float* rows[kPairRows];
    const std::int64_t lastPanel = (j1 - 1) / kLanes;
    for (std::int64_t p = j0 / kLanes; p <= lastPanel; p += 2) {
        const float* first = m_panels.data() + p * m_d * kLanes;
        const float* second = p + 1 <= lastPanel ? first + m_d * kLanes : first;  // (a lone last panel: scored twice, kept once)
        const std::int64_t lo = std::max(j0, p * kLanes), hi = std::min(j1, (p + 2) * kLanes);
        for (std::int64_t i = i0; i < i1; i += kPairRows) {
            const int count = static_cast<int>(std::min<std::int64_t>(kPairRows, i1 - i));
            for (int r = 0; r < count; ++r) rows[r] = q + (i + r) * m_d;
            panelPairAvx2(rows, count, first, second, m_d, acc);
            for (int r = 0; r < count; ++r)
                std::copy(acc[r] + (lo - p * kLanes), acc[r] + (hi - p * kLanes), out + (i + r - i0) * ldo + (lo - j0));
        }
    }
}
#endif

}  // namespace attnscope::engine
