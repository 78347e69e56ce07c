#include "attention/weights/panel_scores.h"

#include "base/kernels/cpu_features.h"

#include <algorithm>
#include <cmath>

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include <immintrin.h>
#endif

namespace attnscope::engine {
namespace {

constexpr std::int64_t kLanes = 16;  // keys a panel
constexpr int kAvx2Rows = 6;
constexpr int kAvx512Rows = 12;

// One panel's 16 keys against `rows` (<= 4) queries: acc[r][lane] = fma chain over c.
void panelPortable(const float* const* q, int rows, const float* panel, std::int64_t d, float (*acc)[kLanes]) {
    for (int r = 0; r < rows; ++r)
        for (std::int64_t lane = 0; lane < kLanes; ++lane) {
            float s = 0.0f;
            for (std::int64_t c = 0; c < d; ++c) s = std::fma(q[r][c], panel[c * kLanes + lane], s);
            acc[r][lane] = s;
        }
}

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
// One panel's 16 keys (two registers of 8) against up to kAvx2Rows queries: 12 chains in flight
// (the FMA's latency hidden; 15 of the 16 registers), each still one chain over c per cell.
ATTNSCOPE_AVX2_FMA_TARGET void panelAvx2(const float* const* q, int rows, const float* panel, std::int64_t d,
                                         float (*acc)[kLanes]) {
    __m256 a[kAvx2Rows][2];
    for (auto& row : a) row[0] = row[1] = _mm256_setzero_ps();
    const float* r[kAvx2Rows];
    for (int i = 0; i < kAvx2Rows; ++i) r[i] = q[i < rows ? i : 0];
    for (std::int64_t c = 0; c < d; ++c) {
        const __m256 k0 = _mm256_loadu_ps(panel + c * kLanes), k1 = _mm256_loadu_ps(panel + c * kLanes + 8);
#pragma GCC unroll 8
        for (int i = 0; i < kAvx2Rows; ++i) {
            const __m256 x = _mm256_broadcast_ss(r[i] + c);
            a[i][0] = _mm256_fmadd_ps(x, k0, a[i][0]);
            a[i][1] = _mm256_fmadd_ps(x, k1, a[i][1]);
        }
    }
    for (int i = 0; i < rows; ++i) {
        _mm256_storeu_ps(acc[i], a[i][0]);
        _mm256_storeu_ps(acc[i] + 8, a[i][1]);
    }
}

// The same chains on AVX-512: one register holds the panel's 16 keys, kAvx512Rows queries a step.
__attribute__((target("avx512f,avx2,fma"))) void panelAvx512(const float* const* q, int rows, const float* panel,
                                                             std::int64_t d, float (*acc)[kLanes]) {
    __m512 a[kAvx512Rows];
    for (auto& row : a) row = _mm512_setzero_ps();
    const float* r[kAvx512Rows];
    for (int i = 0; i < kAvx512Rows; ++i) r[i] = q[i < rows ? i : 0];
    for (std::int64_t c = 0; c < d; ++c) {
        const __m512 k = _mm512_loadu_ps(panel + c * kLanes);
#pragma GCC unroll 12
        for (int i = 0; i < kAvx512Rows; ++i) a[i] = _mm512_fmadd_ps(_mm512_set1_ps(r[i][c]), k, a[i]);
    }
    for (int i = 0; i < rows; ++i) _mm512_storeu_ps(acc[i], a[i]);
}
#endif

using PanelKernel = void (*)(const float* const* q, int rows, const float* panel, std::int64_t d, float (*acc)[kLanes]);

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
    PanelKernel kernel = &panelPortable;
    int step = 4;
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx512()) {
        kernel = &panelAvx512;
        step = kAvx512Rows;
    } else if (haveAvx2Fma()) {
        kernel = &panelAvx2;
        step = kAvx2Rows;
    }
#endif
    float acc[kAvx512Rows][kLanes];
    const float* rows[kAvx512Rows];
    for (std::int64_t p = j0 / kLanes; p * kLanes < j1; ++p) {
        const float* panel = m_panels.data() + p * m_d * kLanes;
        const std::int64_t lo = std::max(j0, p * kLanes), hi = std::min(j1, (p + 1) * kLanes);
        for (std::int64_t i = i0; i < i1; i += step) {
            const int count = static_cast<int>(std::min<std::int64_t>(step, i1 - i));
            for (int r = 0; r < count; ++r) rows[r] = q + (i + r) * m_d;
            kernel(rows, count, panel, m_d, acc);
            for (int r = 0; r < count; ++r)
                std::copy(acc[r] + (lo - p * kLanes), acc[r] + (hi - p * kLanes), out + (i + r - i0) * ldo + (lo - j0));
        }
    }
}

}  // namespace attnscope::engine
