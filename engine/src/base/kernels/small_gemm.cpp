#include "base/kernels/small_gemm.h"

#include "base/kernels/blas_gemm.h"
#include "base/kernels/cpu_features.h"
#include "base/kernels/finite_scan.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include "base/kernels/transpose8_avx2.h"
#define ATTNSCOPE_SMALL_GEMM_AVX2 1
#endif

namespace attnscope::engine {
namespace {

#ifdef ATTNSCOPE_SMALL_GEMM_AVX2
#define ATTNSCOPE_FMA_TARGET ATTNSCOPE_AVX2_FMA_TARGET

// A·B^T: an MR x NR block of dot products along k, eight values of k at a time (k % 8 == 0), with
// MR·NR accumulators; the NR = 4 rows of sums are reduced together by three horizontal adds.
template <int MR, int NR>
ATTNSCOPE_FMA_TARGET inline __attribute__((always_inline)) void dotTile(std::int64_t k, const float* a, std::int64_t lda,
                                                                        const float* b, std::int64_t ldb, float* c,
                                                                        std::int64_t ldc) {
    __m256 acc[MR][NR];
    for (int r = 0; r < MR; ++r)
        for (int j = 0; j < NR; ++j) acc[r][j] = _mm256_setzero_ps();
    for (std::int64_t p = 0; p < k; p += 8) {
        __m256 bv[NR];
        for (int j = 0; j < NR; ++j) bv[j] = _mm256_loadu_ps(b + j * ldb + p);
        for (int r = 0; r < MR; ++r) {
            const __m256 av = _mm256_loadu_ps(a + r * lda + p);
            for (int j = 0; j < NR; ++j) acc[r][j] = _mm256_fmadd_ps(av, bv[j], acc[r][j]);
        }
    }
    for (int r = 0; r < MR; ++r) {
        if constexpr (NR == 4) {
            const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(acc[r][0], acc[r][1]), _mm256_hadd_ps(acc[r][2], acc[r][3]));
            _mm_storeu_ps(c + r * ldc, _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1)));
        } else {
            for (int j = 0; j < NR; ++j) {
                const __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc[r][j]), _mm256_extractf128_ps(acc[r][j], 1));
                const __m128 s2 = _mm_add_ps(s, _mm_movehl_ps(s, s));
                c[r * ldc + j] = _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
            }
        }
    }
}

template <int MR>
ATTNSCOPE_FMA_TARGET void dotRows(std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
                                  std::int64_t ldb, float* c, std::int64_t ldc) {
    std::int64_t j = 0;
    for (; j + 4 <= n; j += 4) dotTile<MR, 4>(k, a, lda, b + j * ldb, ldb, c + j, ldc);
    switch (n - j) {
        case 3: dotTile<MR, 3>(k, a, lda, b + j * ldb, ldb, c + j, ldc); break;
        case 2: dotTile<MR, 2>(k, a, lda, b + j * ldb, ldb, c + j, ldc); break;
        case 1: dotTile<MR, 1>(k, a, lda, b + j * ldb, ldb, c + j, ldc); break;
        default: break;
    }
}
// 3 x 4 blocks: 12 accumulators, 3 + 4 loads per 12 FMAs. Row blocks outside, key blocks inside:
// with 16-row tiles the rows stay in registers' reach and the key panels stream from L1, which
// beat the other loop order (docs/PERFORMANCE.md).
ATTNSCOPE_FMA_TARGET void abtAvx2(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
                                  const float* b, std::int64_t ldb, float* c, std::int64_t ldc) {
    std::int64_t i = 0;
    for (; i + 3 <= m; i += 3) dotRows<3>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
    if (m - i == 2) dotRows<2>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
    if (m - i == 1) dotRows<1>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
}
// A·B: an MR x (8·NV) block of C, one broadcast of A per row and NV loads of B per step of k.
template <int MR, int NV, bool Add>
ATTNSCOPE_FMA_TARGET inline __attribute__((always_inline)) void axpyTile(std::int64_t k, const float* a, std::int64_t lda,
                                                                         const float* b, std::int64_t ldb, float* c,
                                                                         std::int64_t ldc) {
    __m256 acc[MR][NV];
    for (int r = 0; r < MR; ++r)
        for (int v = 0; v < NV; ++v) acc[r][v] = Add ? _mm256_loadu_ps(c + r * ldc + 8 * v) : _mm256_setzero_ps();
    for (std::int64_t p = 0; p < k; ++p) {
        __m256 bv[NV];
        for (int v = 0; v < NV; ++v) bv[v] = _mm256_loadu_ps(b + p * ldb + 8 * v);
        for (int r = 0; r < MR; ++r) {
            const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
            for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
        }
    }
    for (int r = 0; r < MR; ++r)
        for (int v = 0; v < NV; ++v) _mm256_storeu_ps(c + r * ldc + 8 * v, acc[r][v]);
}

// The last n % 8 columns of an MR-row block: B and C through lane masks.
template <int MR, bool Add>
ATTNSCOPE_FMA_TARGET inline __attribute__((always_inline)) void axpyTailTile(std::int64_t k, std::int64_t cols,
                                                                             const float* a, std::int64_t lda,
                                                                             const float* b, std::int64_t ldb, float* c,
                                                                             std::int64_t ldc) {
    const __m256i mask =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(cols)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 acc[MR];
    for (int r = 0; r < MR; ++r) acc[r] = Add ? _mm256_maskload_ps(c + r * ldc, mask) : _mm256_setzero_ps();
    for (std::int64_t p = 0; p < k; ++p) {
        const __m256 bv = _mm256_maskload_ps(b + p * ldb, mask);
        for (int r = 0; r < MR; ++r) acc[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + r * lda + p), bv, acc[r]);
    }
    for (int r = 0; r < MR; ++r) _mm256_maskstore_ps(c + r * ldc, mask, acc[r]);
}

template <int MR, bool Add>
ATTNSCOPE_FMA_TARGET void axpyRows(std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
                                   std::int64_t ldb, float* c, std::int64_t ldc) {
    std::int64_t j = 0;
    for (; j + 16 <= n; j += 16) axpyTile<MR, 2, Add>(k, a, lda, b + j, ldb, c + j, ldc);
    if (j + 8 <= n) {
        axpyTile<MR, 1, Add>(k, a, lda, b + j, ldb, c + j, ldc);
        j += 8;
    }
    if (j < n) axpyTailTile<MR, Add>(k, n - j, a, lda, b + j, ldb, c + j, ldc);
}
// 6 x 16 blocks: 12 accumulators, 2 loads and 6 broadcasts per 12 FMAs.
template <bool Add>
ATTNSCOPE_FMA_TARGET void abAvx2(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
                                 const float* b, std::int64_t ldb, float* c, std::int64_t ldc) {
    std::int64_t i = 0;
    for (; i + 6 <= m; i += 6) axpyRows<6, Add>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
    const float* ar = a + i * lda;
    float* cr = c + i * ldc;
    switch (m - i) {
        case 5: axpyRows<5, Add>(n, k, ar, lda, b, ldb, cr, ldc); break;
        case 4: axpyRows<4, Add>(n, k, ar, lda, b, ldb, cr, ldc); break;
        case 3: axpyRows<3, Add>(n, k, ar, lda, b, ldb, cr, ldc); break;
        case 2: axpyRows<2, Add>(n, k, ar, lda, b, ldb, cr, ldc); break;
        case 1: axpyRows<1, Add>(n, k, ar, lda, b, ldb, cr, ldc); break;
        default: break;
    }
}

// A·B against keys in panels of 8 (see smallGemmABPanels): an MR x 8·NP block of C from NP
// panels, one broadcast of A per row and NP contiguous loads per step of k.
template <int MR, int NP>
ATTNSCOPE_FMA_TARGET inline __attribute__((always_inline)) void panelTile(std::int64_t k, const float* a,
                                                                          std::int64_t lda, const float* b0,
                                                                          const float* b1, float* c, std::int64_t ldc) {
    __m256 acc[MR][NP];
    for (int r = 0; r < MR; ++r)
        for (int v = 0; v < NP; ++v) acc[r][v] = _mm256_setzero_ps();
    for (std::int64_t p = 0; p < k; ++p) {
        const __m256 x[2] = {_mm256_loadu_ps(b0 + p * 8), NP > 1 ? _mm256_loadu_ps(b1 + p * 8) : _mm256_setzero_ps()};
        for (int r = 0; r < MR; ++r) {
            const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
            for (int v = 0; v < NP; ++v) acc[r][v] = _mm256_fmadd_ps(av, x[v], acc[r][v]);
        }
    }
    for (int r = 0; r < MR; ++r)
        for (int v = 0; v < NP; ++v) _mm256_storeu_ps(c + r * ldc + 8 * v, acc[r][v]);
}

// One panel against MR rows, lanes [lane0, lane0 + count) of it stored at c.
template <int MR>
ATTNSCOPE_FMA_TARGET inline __attribute__((always_inline)) void panelPart(std::int64_t k, const float* a,
                                                                          std::int64_t lda, const float* b,
                                                                          std::int64_t lane0, std::int64_t count,
                                                                          float* c, std::int64_t ldc) {
    __m256 acc[MR];
    for (int r = 0; r < MR; ++r) acc[r] = _mm256_setzero_ps();
    for (std::int64_t p = 0; p < k; ++p) {
        const __m256 x = _mm256_loadu_ps(b + p * 8);
        for (int r = 0; r < MR; ++r) acc[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + r * lda + p), x, acc[r]);
    }
    alignas(32) float lanes[8];
    for (int r = 0; r < MR; ++r) {
        _mm256_store_ps(lanes, acc[r]);
        for (std::int64_t t = 0; t < count; ++t) c[r * ldc + t] = lanes[lane0 + t];
    }
}

template <int MR>
ATTNSCOPE_FMA_TARGET void panelRows(std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
                                    const float* panels, std::int64_t first, float* c, std::int64_t ldc) {
    const std::int64_t panelFloats = 8 * k;
    const float* b = panels + (first / 8) * panelFloats;
    std::int64_t j = 0;
    if (first % 8 == 0 && n % 8 == 0) {  // whole panels: 16 columns a tile, then 8
        for (; j + 16 <= n; j += 16, b += 2 * panelFloats) panelTile<MR, 2>(k, a, lda, b, b + panelFloats, c + j, ldc);
        if (j < n) panelTile<MR, 1>(k, a, lda, b, b, c + j, ldc);
        return;
    }
    if (const std::int64_t lane0 = first % 8; lane0 != 0) {  // the first panel's upper lanes
        const std::int64_t count = std::min<std::int64_t>(8 - lane0, n);
        panelPart<MR>(k, a, lda, b, lane0, count, c, ldc);
        j = count;
        b += panelFloats;
    }
    for (; j + 16 <= n; j += 16, b += 2 * panelFloats) panelTile<MR, 2>(k, a, lda, b, b + panelFloats, c + j, ldc);
    for (; j < n; j += 8, b += panelFloats)
        panelPart<MR>(k, a, lda, b, 0, std::min<std::int64_t>(8, n - j), c + j, ldc);
}

ATTNSCOPE_FMA_TARGET void abPanelsAvx2(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
                                       const float* panels, std::int64_t first, float* c, std::int64_t ldc) {
    std::int64_t i = 0;
    for (; i + 6 <= m; i += 6) panelRows<6>(n, k, a + i * lda, lda, panels, first, c + i * ldc, ldc);
    const float* ar = a + i * lda;
    float* cr = c + i * ldc;
    switch (m - i) {
        case 5: panelRows<5>(n, k, ar, lda, panels, first, cr, ldc); break;
        case 4: panelRows<4>(n, k, ar, lda, panels, first, cr, ldc); break;
        case 3: panelRows<3>(n, k, ar, lda, panels, first, cr, ldc); break;
        case 2: panelRows<2>(n, k, ar, lda, panels, first, cr, ldc); break;
        case 1: panelRows<1>(n, k, ar, lda, panels, first, cr, ldc); break;
        default: break;
    }
}

// Returns false when Scan and a value is NaN or infinite (exponent bits all ones), found on the
// loaded vectors at a few operations per vector instead of a second pass over the values.
template <bool Scan>
ATTNSCOPE_FMA_TARGET bool transposeAvx2(std::int64_t rows, std::int64_t cols, const float* src, std::int64_t lds,
                                        float* dst, std::int64_t ldd) {
    const __m256i exponent = _mm256_set1_epi32(0x7f800000);
    __m256i bad = _mm256_setzero_si256();
    bool badScalar = false;
    std::int64_t r = 0;
    for (; r + 8 <= rows; r += 8) {
        std::int64_t c = 0;
        for (; c + 8 <= cols; c += 8) {
            __m256 x[8];
            for (int t = 0; t < 8; ++t) x[t] = _mm256_loadu_ps(src + (r + t) * lds + c);
            if (Scan)
                for (int t = 0; t < 8; ++t)
                    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(x[t]), exponent),
                                                                 exponent));
            transpose8x8(x);
            for (int t = 0; t < 8; ++t) _mm256_storeu_ps(dst + (c + t) * ldd + r, x[t]);
        }
        for (; c < cols; ++c)
            for (int t = 0; t < 8; ++t) {
                dst[c * ldd + r + t] = src[(r + t) * lds + c];
                if (Scan) badScalar = badScalar || !std::isfinite(src[(r + t) * lds + c]);
            }
    }
    for (; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) {
            dst[c * ldd + r] = src[r * lds + c];
            if (Scan) badScalar = badScalar || !std::isfinite(src[r * lds + c]);
        }
    return !badScalar && _mm256_testz_si256(bad, bad);
}
#endif

}  // namespace

void smallGemmABt(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
                  std::int64_t ldb, float* c, std::int64_t ldc) {
#ifdef ATTNSCOPE_SMALL_GEMM_AVX2
    if (k % 8 == 0 && haveAvx2Fma()) return abtAvx2(m, n, k, a, lda, b, ldb, c, ldc);
#endif
    gemmRowMajor(true, m, n, k, a, lda, b, ldb, c, ldc);
}

void smallGemmAB(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
                 std::int64_t ldb, float* c, std::int64_t ldc) {
#ifdef ATTNSCOPE_SMALL_GEMM_AVX2
    if (haveAvx2Fma()) return abAvx2<false>(m, n, k, a, lda, b, ldb, c, ldc);
#endif
    gemmRowMajor(false, m, n, k, a, lda, b, ldb, c, ldc);
}

bool smallGemmInPlace(std::int64_t d) {
#ifdef ATTNSCOPE_SMALL_GEMM_AVX2
    return d % 8 == 0 && haveAvx2Fma();
#else
    (void)d;
    return false;
#endif
}

void smallGemmABAdd(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
                    std::int64_t ldb, float* c, std::int64_t ldc) {
#ifdef ATTNSCOPE_SMALL_GEMM_AVX2
    if (haveAvx2Fma()) return abAvx2<true>(m, n, k, a, lda, b, ldb, c, ldc);
#endif
    for (std::int64_t i = 0; i < m; ++i)  // portable: a row of C at a time, vectorised by the compiler
        for (std::int64_t p = 0; p < k; ++p) {
            const float x = a[i * lda + p];
            for (std::int64_t j = 0; j < n; ++j) c[i * ldc + j] += x * b[p * ldb + j];
        }
}

void transposeRows(std::int64_t rows, std::int64_t cols, const float* src, std::int64_t lds, float* dst,
                   std::int64_t ldd) {
#ifdef ATTNSCOPE_SMALL_GEMM_AVX2
    if (haveAvx2Fma()) {
        transposeAvx2<false>(rows, cols, src, lds, dst, ldd);
        return;
    }
#endif
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) dst[c * ldd + r] = src[r * lds + c];
}

namespace {

// transposeRows, returning false when a value is NaN or infinite.
bool transposeRowsScanned(std::int64_t rows, std::int64_t cols, const float* src, std::int64_t lds, float* dst,
                          std::int64_t ldd) {
#ifdef ATTNSCOPE_SMALL_GEMM_AVX2
    if (haveAvx2Fma()) return transposeAvx2<true>(rows, cols, src, lds, dst, ldd);
#endif
    transposeRows(rows, cols, src, lds, dst, ldd);
    bool finite = true;
    for (std::int64_t r = 0; r < rows; ++r) finite = finite && allFinite(src + r * lds, static_cast<std::size_t>(cols));
    return finite;
}

}  // namespace

void smallGemmABPanels(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
                       const float* panels, std::int64_t first, float* c, std::int64_t ldc) {
#ifdef ATTNSCOPE_SMALL_GEMM_AVX2
    if (haveAvx2Fma()) return abPanelsAvx2(m, n, k, a, lda, panels, first, c, ldc);
#endif
    throw std::logic_error("smallGemmABPanels needs the register-tiled products (check smallGemmInPlace)");
}

void copyToPanels(std::int64_t rows, std::int64_t k, const float* src, std::int64_t lds, float* panels,
                  bool* nonFinite) {
    const std::int64_t whole = rows / 8 * 8;
    bool finite = true;
    const auto copy = [&](std::int64_t count, const float* from, float* to) {
        if (nonFinite)
            finite = transposeRowsScanned(count, k, from, lds, to, 8) && finite;
        else
            transposeRows(count, k, from, lds, to, 8);
    };
    for (std::int64_t r0 = 0; r0 < whole; r0 += 8) {
        // the next panel's rows, while this one is copied: the copies waited on memory
        for (std::int64_t t = r0 + 8; t < std::min(rows, r0 + 16); ++t)
            for (std::int64_t c = 0; c < k; c += 16) __builtin_prefetch(src + t * lds + c, 0, 3);
        copy(8, src + r0 * lds, panels + r0 * k);
    }
    if (whole < rows) {
        float* last = panels + whole * k;
        std::fill(last, last + 8 * k, 0.0f);
        copy(rows - whole, src + whole * lds, last);
    }
    if (nonFinite) *nonFinite = *nonFinite || !finite;
}

}  // namespace attnscope::engine
