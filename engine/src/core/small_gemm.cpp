#include "core/small_gemm.h"

#include "core/blas_gemm.h"
#include "core/cpu_features.h"

#include <stdexcept>

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include <immintrin.h>
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
// with 16-row tiles this measured 72.7 GFLOP/s against 63.6 for key panels outside.
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

template <int MR, bool Add>
ATTNSCOPE_FMA_TARGET void axpyRows(std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
                                   std::int64_t ldb, float* c, std::int64_t ldc) {
    std::int64_t j = 0;
    for (; j + 16 <= n; j += 16) axpyTile<MR, 2, Add>(k, a, lda, b + j, ldb, c + j, ldc);
    if (j < n) axpyTile<MR, 1, Add>(k, a, lda, b + j, ldb, c + j, ldc);  // n % 16 == 8
}
// 6 x 16 blocks: 12 accumulators, 2 loads and 6 broadcasts per 12 FMAs (n % 8 == 0).
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
    if (n % 8 == 0 && haveAvx2Fma()) return abAvx2<false>(m, n, k, a, lda, b, ldb, c, ldc);
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
    if (n % 8 == 0 && haveAvx2Fma()) return abAvx2<true>(m, n, k, a, lda, b, ldb, c, ldc);
#endif
    throw std::logic_error("smallGemmABAdd needs the register-tiled products (check smallGemmInPlace)");
}

}  // namespace attnscope::engine
