#include "attention/weights/panel_scores.h"

#include "base/kernels/cpu_features.h"
#include "base/kernels/small_gemm.h"

#include <algorithm>
#include <cmath>

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include <immintrin.h>
#endif

namespace attnscope::engine {
namespace {

constexpr std::int64_t kLanes = kPanelKeys;
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

// Two panels (32 keys) against kAvx512Rows queries: 24 chains, two key loads and twelve broadcasts
// a step of c (the one-panel kernel's 13 loads a 12 FMAs left it bound by loads).
__attribute__((target("avx512f,avx2,fma"))) void panelPairAvx512(const float* const* q, int rows, const float* panel0,
                                                                 const float* panel1, std::int64_t d,
                                                                 float (*acc)[2 * kLanes]) {
    __m512 a[kAvx512Rows][2];
    for (auto& row : a) row[0] = row[1] = _mm512_setzero_ps();
    const float* r[kAvx512Rows];
    for (int i = 0; i < kAvx512Rows; ++i) r[i] = q[i < rows ? i : 0];
    for (std::int64_t c = 0; c < d; ++c) {
        const __m512 k0 = _mm512_loadu_ps(panel0 + c * kLanes), k1 = _mm512_loadu_ps(panel1 + c * kLanes);
#pragma GCC unroll 12
        for (int i = 0; i < kAvx512Rows; ++i) {
            const __m512 x = _mm512_set1_ps(r[i][c]);
            a[i][0] = _mm512_fmadd_ps(x, k0, a[i][0]);
            a[i][1] = _mm512_fmadd_ps(x, k1, a[i][1]);
        }
    }
    for (int i = 0; i < rows; ++i) {
        _mm512_storeu_ps(acc[i], a[i][0]);
        _mm512_storeu_ps(acc[i] + kLanes, a[i][1]);
    }
}
#endif

using PanelKernel = void (*)(const float* const* q, int rows, const float* panel, std::int64_t d, float (*acc)[kLanes]);

}  // namespace

void toKeyPanels(const float* rows, std::int64_t ld, std::int64_t count, std::int64_t d, float* panels) {
    std::fill(panels + count / kLanes * kLanes * d, panels + panelFloats16(count, d), 0.0f);  // the last panel's missing keys
    for (std::int64_t j = 0; j < count; j += kLanes) {
        // the next panel's rows while this one is copied: rows far apart (a residue's keys, a
        // stride apart) are each a wait on memory that no hardware prefetcher sees coming
        if (ld > d)
            for (std::int64_t t = j + kLanes; t < std::min(count, j + 2 * kLanes); ++t)
                for (std::int64_t c = 0; c < d; c += 16) __builtin_prefetch(rows + t * ld + c, 0, 3);
        transposeRows(std::min(kLanes, count - j), d, rows + j * ld, ld, panels + j * d, kLanes);
    }
}

namespace {

// Two panels (panel1 null: one) against `rows` queries, into acc[r][0..32): the AVX-512 pair kernel,
// or the one-panel kernels twice.
using PairKernel = void (*)(const float* const* q, int rows, const float* panel0, const float* panel1, std::int64_t d,
                            float (*acc)[2 * kLanes]);

template <PanelKernel one>
void pairByOnes(const float* const* q, int rows, const float* panel0, const float* panel1, std::int64_t d,
                float (*acc)[2 * kLanes]) {
    float part[kAvx512Rows][kLanes];
    one(q, rows, panel0, d, part);
    for (int r = 0; r < rows; ++r) std::copy(part[r], part[r] + kLanes, acc[r]);
    if (!panel1) return;
    one(q, rows, panel1, d, part);
    for (int r = 0; r < rows; ++r) std::copy(part[r], part[r] + kLanes, acc[r] + kLanes);
}

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
void pairAvx512(const float* const* q, int rows, const float* panel0, const float* panel1, std::int64_t d,
                float (*acc)[2 * kLanes]) {
    if (!panel1) {
        float part[kAvx512Rows][kLanes];
        panelAvx512(q, rows, panel0, d, part);
        for (int r = 0; r < rows; ++r) std::copy(part[r], part[r] + kLanes, acc[r]);
        return;
    }
    panelPairAvx512(q, rows, panel0, panel1, d, acc);
}
#endif

}  // namespace

void scorePanelList(const float* q, std::int64_t ldq, std::int64_t rows, const float* const* panelAt, std::int64_t j0,
                    std::int64_t j1, std::int64_t d, float* out, std::int64_t ldo) {
    if (rows <= 0 || j1 <= j0) return;
    PairKernel kernel = &pairByOnes<&panelPortable>;
    int step = 4;
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx512()) {
        kernel = &pairAvx512;
        step = kAvx512Rows;
    } else if (haveAvx2Fma()) {
        kernel = &pairByOnes<&panelAvx2>;
        step = kAvx2Rows;
    }
#endif
    float acc[kAvx512Rows][2 * kLanes];
    const float* rowPointers[kAvx512Rows];
    const std::int64_t first = j0 / kLanes;
    for (std::int64_t p = first; p * kLanes < j1; p += 2) {
        const bool pair = (p + 1) * kLanes < j1;
        const float* panel0 = panelAt[p - first];
        const float* panel1 = pair ? panelAt[p + 1 - first] : nullptr;
        const std::int64_t lo = std::max(j0, p * kLanes), hi = std::min(j1, (p + 2) * kLanes);
        for (std::int64_t i = 0; i < rows; i += step) {
            const int count = static_cast<int>(std::min<std::int64_t>(step, rows - i));
            for (int r = 0; r < count; ++r) rowPointers[r] = q + (i + r) * ldq;
            kernel(rowPointers, count, panel0, panel1, d, acc);
            for (int r = 0; r < count; ++r)
                std::copy(acc[r] + (lo - p * kLanes), acc[r] + (hi - p * kLanes), out + (i + r) * ldo + (lo - j0));
        }
    }
}

void scorePanels(const float* q, std::int64_t ldq, std::int64_t rows, const float* panels, std::int64_t j0,
                 std::int64_t j1, std::int64_t d, float* out, std::int64_t ldo) {
    // in runs of kListed panels (their pointers on the stack)
    constexpr std::int64_t kListed = 64;
    const float* panelAt[kListed];
    for (std::int64_t a = j0; a < j1;) {
        const std::int64_t first = a / kLanes, b = std::min(j1, (first + kListed) * kLanes);
        for (std::int64_t p = first; p * kLanes < b; ++p) panelAt[p - first] = panels + p * d * kLanes;
        scorePanelList(q, ldq, rows, panelAt, a, b, d, out + (a - j0), ldo);
        a = b;
    }
}

KeyPanels::KeyPanels(const float* k, std::int64_t m, std::int64_t d) : m_m(m), m_d(d) {
    m_panels.resize(static_cast<std::size_t>(panelFloats16(m, d)));
    toKeyPanels(k, d, m, d, m_panels.data());
}

void KeyPanels::score(const float* q, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, float* out,
                      std::int64_t ldo) const {
    scorePanels(q + i0 * m_d, m_d, i1 - i0, m_panels.data(), j0, j1, m_d, out, ldo);
}

}  // namespace attnscope::engine
