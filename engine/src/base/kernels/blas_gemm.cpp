#include "base/kernels/blas_gemm.h"

#include <cstdlib>

#include <dlfcn.h>

namespace attnscope::engine {
namespace {

// (read by OpenBLAS when it loads: no thread pool; set on the thread that starts a loader, as
// the environment must not change while another thread reads it)
void preferOneBlasThread() { ::setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0); }

// The system BLAS for a product: the process's own (LibTorch brings it), else loaded here on the
// first product (a torch-free program: the launcher's runs), single-threaded: its kernels run on
// their own threads, and OpenBLAS's idle threads spin for about 0.1 s after loading and after each
// call, on a core those threads need (measured: 14 % of a Longformer run's samples). Null when
// the system has no BLAS.
void* blasSymbol(const char* name) {
    if (void* symbol = dlsym(RTLD_DEFAULT, name)) return symbol;
    static void* const library = [] {
        preferOneBlasThread();
        return dlopen("libblas.so.3", RTLD_NOW | RTLD_GLOBAL);
    }();
    return library ? dlsym(library, name) : nullptr;
}

using CblasSgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                              int);
CblasSgemmFn cblasSgemm() {
    static const auto fn = reinterpret_cast<CblasSgemmFn>(blasSymbol("cblas_sgemm"));
    return fn;
}

}  // namespace

std::thread startBlasLoad() {
    if (dlsym(RTLD_DEFAULT, "cblas_sgemm")) return {};  // (the process has one: LibTorch's)
    preferOneBlasThread();
    return std::thread([] { (void)cblasSgemm(); });
}

void gemmRowMajor(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                  std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
    constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
    if (const CblasSgemmFn fn = cblasSgemm()) {
        fn(kRowMajor, transA ? kTrans : kNoTrans, transB ? kTrans : kNoTrans, static_cast<int>(m), static_cast<int>(n),
           static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
        return;
    }
    // No BLAS on this system: a plain loop, in the same row-major convention.
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (std::int64_t t = 0; t < k; ++t)
                acc += (transA ? a[t * lda + i] : a[i * lda + t]) * (transB ? b[j * ldb + t] : b[t * ldb + j]);
            c[i * ldc + j] = beta == 0.0f ? acc : acc + beta * c[i * ldc + j];
        }
}

void gemmRowMajor(bool transB, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
                  const float* b, std::int64_t ldb, float* c, std::int64_t ldc) {
    gemmRowMajor(false, transB, m, n, k, a, lda, b, ldb, 0.0f, c, ldc);
}

void setBlasThreads(int threads) {
    static const auto set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    if (set && threads > 0) set(threads);
}

SingleThreadedBlas::SingleThreadedBlas() {
    static const auto get = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    static const auto set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    if (get && set) {
        m_set = set;
        m_previous = get();
        if (m_previous != 1) set(1);
    }
}

SingleThreadedBlas::~SingleThreadedBlas() {
    if (m_set && m_previous != 1) m_set(m_previous);
}

}  // namespace attnscope::engine
