#pragma once
// Direct single-precision GEMM into the BLAS, for kernels whose products are small or blocked.

#include <cstdint>
#include <thread>

namespace attnscope::engine {

/// C[m x n] = A[m x k] · B (B: [k x n], or its transpose stored [n x k] when transB), row-major
/// with leading dimensions; beta = 0. Straight into the BLAS (cblas_sgemm, looked up at run time)
/// when there is one: LibTorch's per-call dispatch and view building cost a noticeable share of a
/// small product (64 x 192 x 64 and the like). A torch-free process loads the system BLAS
/// (libblas.so.3) on first use; without one, a plain loop.
void gemmRowMajor(bool transB, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
                  const float* b, std::int64_t ldb, float* c, std::int64_t ldc);

/// C = op(A) · op(B) + beta C, row-major: op(A) is [m x k] (A stored [k x m] when transA), op(B)
/// is [k x n] (B stored [n x k] when transB). beta 1 accumulates into C.
void gemmRowMajor(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                  std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);

/// A thread that loads the BLAS if it is not loaded yet (what the first product would do; a
/// product that comes meanwhile waits for it), started before a run's set-up: loading OpenBLAS
/// takes 12–29 ms here, on a core the set-up leaves idle. The caller joins it.
std::thread startBlasLoad();

/// Sets OpenBLAS's own thread count (the engine's --threads covers the BLAS too); nothing when the
/// process has another BLAS or none.
void setBlasThreads(int threads);

/// OpenBLAS's own thread count, switched to 1 for the guard's lifetime while a kernel runs its
/// own work on LibTorch's intra-op threads (one single-threaded SGEMM per core instead of
/// two-thread SGEMMs on small matrices with a hand-over between thread pools), then restored.
/// Resolved at run time, so that another BLAS (or none) is simply left alone.
class SingleThreadedBlas {
public:
    SingleThreadedBlas();
    ~SingleThreadedBlas();
    SingleThreadedBlas(const SingleThreadedBlas&) = delete;
    SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

private:
    void (*m_set)(int) = nullptr;
    int m_previous = 1;
};

}  // namespace attnscope::engine
