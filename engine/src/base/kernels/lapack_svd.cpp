#include "base/kernels/lapack_svd.h"

#include <algorithm>
#include <cstddef>

#include <dlfcn.h>

namespace attnscope::engine {
namespace {

// LAPACK's dgesdd (Fortran: arguments by address, the length of `jobz` appended).
using DgesddFn = void (*)(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
                          const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork,
                          int* info, std::size_t jobzLength);

DgesddFn dgesdd() {
    static const auto fn = [] {
        void* symbol = dlsym(RTLD_DEFAULT, "dgesdd_");
        if (!symbol)
            if (void* library = dlopen("liblapack.so.3", RTLD_NOW | RTLD_GLOBAL)) symbol = dlsym(library, "dgesdd_");
        return reinterpret_cast<DgesddFn>(symbol);
    }();
    return fn;
}

}  // namespace

std::vector<double> singularValues(const double* a, std::int64_t rows, std::int64_t cols) {
    const DgesddFn fn = dgesdd();
    if (!fn || rows <= 0 || cols <= 0) return {};
    // A row-major rows x cols matrix is its transpose in column-major order: same singular values.
    const int m = static_cast<int>(cols), n = static_cast<int>(rows), lda = m, one = 1;
    std::vector<double> copy(a, a + rows * cols);  // (dgesdd overwrites its input)
    std::vector<double> s(static_cast<std::size_t>(std::min(m, n)));
    std::vector<int> iwork(static_cast<std::size_t>(8 * std::min(m, n)));
    double unused = 0, query = 0;
    int info = 0, lwork = -1;
    fn("N", &m, &n, copy.data(), &lda, s.data(), &unused, &one, &unused, &one, &query, &lwork, iwork.data(), &info, 1);
    if (info != 0) return {};
    lwork = static_cast<int>(query);
    std::vector<double> work(static_cast<std::size_t>(std::max(lwork, 1)));
    fn("N", &m, &n, copy.data(), &lda, s.data(), &unused, &one, &unused, &one, work.data(), &lwork, iwork.data(), &info, 1);
    if (info != 0) return {};
    return s;
}

}  // namespace attnscope::engine
