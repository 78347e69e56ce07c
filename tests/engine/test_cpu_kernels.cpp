// The sparse kernels' building blocks against double-precision references: the register-tiled
// products (row blocks of 1-7, column tails of every width, keys in panels at every lane offset),
// the panel copy, and the row exp with and without a reference shift.

#include "base/kernels/column_similarities.h"
#include "base/kernels/cpu_features.h"
#include "base/kernels/finite_scan.h"
#include "base/kernels/small_gemm.h"
#include "base/kernels/softmax_kernel.h"
#include "attention/weights/panel_scores.h"

#include <attnscope/kernel_path.h>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace attnscope::engine;
using Index = std::int64_t;

std::vector<float> randomValues(std::size_t count, unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> normal;
    std::vector<float> v(count);
    for (auto& x : v) x = normal(gen);
    return v;
}

// C[m x n] = A[m x k] · B where B(p, j) = b(p, j).
template <class B>
std::vector<double> referenceProduct(Index m, Index n, Index k, const std::vector<float>& a, Index lda, B b) {
    std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
    for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < n; ++j)
            for (Index p = 0; p < k; ++p)
                c[static_cast<std::size_t>(i * n + j)] +=
                    static_cast<double>(a[static_cast<std::size_t>(i * lda + p)]) * b(p, j);
    return c;
}

void expectClose(const std::vector<double>& want, const float* got, Index m, Index n, Index ldc) {
    for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < n; ++j)
            ASSERT_NEAR(got[i * ldc + j], want[static_cast<std::size_t>(i * n + j)], 1e-4) << "at " << i << ", " << j;
}

TEST(CpuKernels, ProductsForEveryBlockShape) {
    const Index k = 64, lda = 72, ldb = 80, ldc = 40;
    const auto a = randomValues(7 * lda, 1);
    const auto b = randomValues(static_cast<std::size_t>(k * ldb), 2);  // 64 rows: keys (Bᵀ) or k rows (B)
    for (Index m = 1; m <= 7; ++m)
        for (Index n = 1; n <= 33; ++n) {
            SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n));
            // A·Bᵀ: B rows are keys
            std::vector<float> c(static_cast<std::size_t>(7 * ldc), -1.0f);
            smallGemmABt(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
            expectClose(referenceProduct(m, n, k, a, lda,
                                         [&](Index p, Index j) { return b[static_cast<std::size_t>(j * ldb + p)]; }),
                        c.data(), m, n, ldc);
            // A·B, then A·B added to it (columns in tails of 1-7 as well)
            smallGemmAB(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
            const auto ab = referenceProduct(
                m, n, k, a, lda, [&](Index p, Index j) { return b[static_cast<std::size_t>(p * ldb + j)]; });
            expectClose(ab, c.data(), m, n, ldc);
            if (smallGemmInPlace(k)) {
                smallGemmABAdd(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
                std::vector<double> twice = ab;
                for (auto& x : twice) x *= 2.0;
                expectClose(twice, c.data(), m, n, ldc);
            }
        }
}

TEST(CpuKernels, KeysInPanelsAtEveryOffset) {
    const Index k = 64, keys = 45, lda = 64, ldc = 48;
    if (!smallGemmInPlace(k)) GTEST_SKIP() << "no register-tiled products on this CPU";
    const auto a = randomValues(7 * lda, 3);
    const auto rows = randomValues(keys * 3 * k, 4);  // keys at a stride of 3 rows
    std::vector<float> panels(static_cast<std::size_t>((keys + 7) / 8 * 8 * k), 99.0f);
    copyToPanels(keys, k, rows.data(), 3 * k, panels.data());
    for (Index t = 40; t < 48; ++t) {  // the last panel's missing keys are zeros
        for (Index p = 0; p < k; ++p)
            ASSERT_EQ(panels[static_cast<std::size_t>(5 * 8 * k + p * 8 + (t - 40))],
                      t < keys ? rows[static_cast<std::size_t>(t * 3 * k + p)] : 0.0f);
    }
    for (Index m = 1; m <= 7; ++m)
        for (Index first = 0; first <= 9; ++first)
            for (Index n = 1; first + n <= keys; n += 3) {
                SCOPED_TRACE("m=" + std::to_string(m) + " first=" + std::to_string(first) + " n=" + std::to_string(n));
                std::vector<float> c(static_cast<std::size_t>(7 * ldc), -1.0f);
                smallGemmABPanels(m, n, k, a.data(), lda, panels.data(), first, c.data(), ldc);
                expectClose(referenceProduct(m, n, k, a, lda,
                                             [&](Index p, Index j) {
                                                 return rows[static_cast<std::size_t>((first + j) * 3 * k + p)];
                                             }),
                            c.data(), m, n, ldc);
                for (Index i = 0; i < m; ++i)  // nothing written past the n columns
                    for (Index j = n; j < ldc; ++j) ASSERT_EQ(c[static_cast<std::size_t>(i * ldc + j)], -1.0f);
            }
}

TEST(CpuKernels, RowExpAndSoftmaxEveryWidth) {
    const float scale = 0.125f, minusInf = -std::numeric_limits<float>::infinity();
    for (Index cols = 1; cols <= 40; ++cols) {
        SCOPED_TRACE("cols=" + std::to_string(cols));
        auto row = randomValues(static_cast<std::size_t>(cols), static_cast<unsigned>(cols));
        for (auto& x : row) x *= 20.0f;
        if (cols > 3) row[2] = minusInf;  // a masked key
        double mx = -INFINITY;
        for (float x : row) mx = std::max(mx, static_cast<double>(x));
        double sum = 0;
        for (float x : row) sum += std::exp(scale * (x - mx));
        auto e = row;
        float rowMax = 0, rowSum = 0;
        expRowsInPlace(e.data(), 1, cols, cols, scale, &rowMax, &rowSum);
        EXPECT_EQ(rowMax, static_cast<float>(mx));
        EXPECT_NEAR(rowSum, sum, 1e-6 * sum);
        auto p = row;
        std::uint8_t empty = 0;
        softmaxRowsInPlace(p.data(), 1, cols, cols, scale, &empty);
        EXPECT_EQ(empty, 0);
        for (Index j = 0; j < cols; ++j) {
            const double want = std::exp(scale * (row[static_cast<std::size_t>(j)] - mx));
            ASSERT_NEAR(e[static_cast<std::size_t>(j)], want, 2e-7 * std::max(1.0, want));
            ASSERT_NEAR(p[static_cast<std::size_t>(j)], want / sum, 2e-7);
        }
        if (cols > 3) {
            EXPECT_EQ(p[2], 0.0f);
        }
        // all masked: zeros, sum 0, max -inf, and the softmax reports the row empty
        std::vector<float> masked(static_cast<std::size_t>(cols), minusInf);
        expRowsInPlace(masked.data(), 1, cols, cols, scale, &rowMax, &rowSum);
        EXPECT_EQ(rowSum, 0.0f);
        EXPECT_EQ(rowMax, minusInf);
        for (float x : masked) ASSERT_EQ(x, 0.0f);
        std::fill(masked.begin(), masked.end(), minusInf);
        softmaxRowsInPlace(masked.data(), 1, cols, cols, scale, &empty);
        EXPECT_EQ(empty, 1);
    }
}

// A second part of a softmax row shifted by the first part's max: exact as long as its values stay
// below exp(64); otherwise the row's own max is used.
TEST(CpuKernels, ExpAgainstAnEarlierMax) {
    const float scale = 0.5f;
    const std::vector<float> row = {1.0f, 7.0f, -3.0f, 5.5f, 0.25f, 6.0f, 2.0f, -8.0f, 4.0f, 3.0f, 1.5f};
    for (float reference : {10.0f, 7.0f, 3.0f, -100.0f, -125.0f}) {
        SCOPED_TRACE("reference=" + std::to_string(reference));
        auto e = row;
        float shift = 0;
        const float sum = expRowAgainst(e.data(), static_cast<Index>(e.size()), scale, reference, &shift);
        // (7 - reference) · 0.5 <= 64 keeps the reference; -125 would give exp(66): own max 7
        EXPECT_EQ(shift, (7.0f - reference) * scale <= 64.0f ? reference : 7.0f);
        double want = 0;
        for (std::size_t j = 0; j < row.size(); ++j) {
            const double v = std::exp(static_cast<double>(scale) * (row[j] - shift));
            ASSERT_NEAR(e[j], v, 1e-6 * v);
            want += v;
        }
        EXPECT_NEAR(sum, want, 1e-6 * want);
    }
    auto e = row;
    float shift = 0;  // no earlier part: the row's own max
    expRowAgainst(e.data(), static_cast<Index>(e.size()), scale, -std::numeric_limits<float>::infinity(), &shift);
    EXPECT_EQ(shift, 7.0f);
}

TEST(CpuKernels, ExpOfNonPositiveValues) {
    std::vector<float> x;
    for (float v = 0.0f; v > -100.0f; v -= 0.37f) x.push_back(v);
    x.push_back(-std::numeric_limits<float>::infinity());
    auto e = x;
    expNonPositiveInPlace(e.data(), static_cast<Index>(e.size()));
    for (std::size_t j = 0; j < x.size(); ++j) {
        const double want = x[j] < -87.3f ? 0.0 : std::exp(static_cast<double>(x[j]));
        ASSERT_NEAR(e[j], want, 2e-7 * want) << "x=" << x[j];
    }
}

}  // namespace

// The scans for NaN and infinities (the engine's check of explicit Q, K, V, and the pattern
// variants' scans folded into their copies): a bad value at every position of every length, past
// the vector bodies too, and finite extremes that must pass.
TEST(CpuKernels, NonFiniteValuesFoundAnywhere) {
    const float bads[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
    for (Index count = 0; count <= 75; ++count) {
        std::vector<float> v(static_cast<std::size_t>(count));
        for (Index i = 0; i < count; ++i)
            v[static_cast<std::size_t>(i)] = i % 3 == 0 ? std::numeric_limits<float>::max()
                                                        : (i % 3 == 1 ? -std::numeric_limits<float>::denorm_min() : 1.5f);
        ASSERT_TRUE(allFinite(v.data(), v.size())) << count;
        for (Index at = 0; at < count; ++at) {
            auto w = v;
            w[static_cast<std::size_t>(at)] = bads[at % 3];
            ASSERT_FALSE(allFinite(w.data(), w.size())) << count << " " << at;
        }
    }
    // the chunk of the first bad value, in a long run
    std::vector<float> big(10000, 0.5f);
    big[9000] = bads[0];
    EXPECT_EQ(firstNonFiniteChunk(big.data(), big.size()), 8192u);
    big[5000] = bads[1];
    EXPECT_EQ(firstNonFiniteChunk(big.data(), big.size()), 4096u);
    // a transposed copy into panels reports them too
    const Index k = 24;
    for (Index rows : {Index{8}, Index{13}}) {
        std::vector<float> src(static_cast<std::size_t>(rows * k), 1.0f), panels(static_cast<std::size_t>(16 * k));
        bool bad = false;
        copyToPanels(rows, k, src.data(), k, panels.data(), &bad);
        EXPECT_FALSE(bad);
        for (Index at : {Index{0}, k + 7, rows * k - 1}) {
            auto w = src;
            w[static_cast<std::size_t>(at)] = bads[at % 3];
            bad = false;
            copyToPanels(rows, k, w.data(), k, panels.data(), &bad);
            EXPECT_TRUE(bad) << rows << " " << at;
        }
    }
}

TEST(CpuKernels, PanelScoresHaveTheSameBitsInEveryRectangle) {
    // full's weights take their scores from KeyPanels: a cell must not depend on the tile asked for.
    std::mt19937 gen(7);
    std::normal_distribution<float> normal;
    for (const std::int64_t d : {1, 5, 24, 64}) {
        SCOPED_TRACE(d);
        const std::int64_t n = 37, m = 53;
        std::vector<float> q(static_cast<std::size_t>(n * d)), k(static_cast<std::size_t>(m * d));
        for (auto& x : q) x = normal(gen);
        for (auto& x : k) x = normal(gen);
        const attnscope::engine::KeyPanels panels(k.data(), m, d);
        std::vector<float> whole(static_cast<std::size_t>(n * m));
        panels.score(q.data(), 0, n, 0, m, whole.data(), m);
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < m; ++j) {
                double exact = 0;
                for (std::int64_t c = 0; c < d; ++c) exact += static_cast<double>(q[i * d + c]) * k[j * d + c];
                EXPECT_NEAR(whole[i * m + j], exact, 1e-5 * (1 + std::abs(exact)));
            }
        std::uniform_int_distribution<std::int64_t> pick(0, 1 << 20);
        for (int t = 0; t < 40; ++t) {
            const std::int64_t i0 = pick(gen) % n, i1 = i0 + 1 + pick(gen) % (n - i0);
            const std::int64_t j0 = pick(gen) % m, j1 = j0 + 1 + pick(gen) % (m - j0);
            std::vector<float> part(static_cast<std::size_t>((i1 - i0) * (j1 - j0)));
            panels.score(q.data(), i0, i1, j0, j1, part.data(), j1 - j0);
            for (std::int64_t i = i0; i < i1; ++i)
                for (std::int64_t j = j0; j < j1; ++j)
                    ASSERT_EQ(part[(i - i0) * (j1 - j0) + (j - j0)], whole[i * m + j]) << i << ", " << j;
        }
        // every kernel path (AVX-512, AVX2, portable) runs the same chain per cell: the same bits
        const KernelPath before = kernelPath();
        for (const KernelPath path : {KernelPath::Fastest, KernelPath::Avx2, KernelPath::Portable}) {
            setKernelPath(path);
            std::vector<float> again(whole.size(), -1.0f);
            panels.score(q.data(), 0, n, 0, m, again.data(), m);
            EXPECT_EQ(again, whole) << "kernel path " << static_cast<int>(path);
        }
        setKernelPath(before);
    }
}

// The kernel path is chosen per process (attnscope/kernel_path.h): with Portable every kernel
// takes its portable body, and both bodies give the same rows.
TEST(CpuKernels, PortablePathGivesTheSameRows) {
    const KernelPath before = kernelPath();
    const float scale = 0.25f;
    auto row = randomValues(37, 7);
    for (auto& x : row) x *= 10.0f;
    std::vector<float> rows[2];
    float maxes[2] = {}, sums[2] = {};
    for (int pass = 0; pass < 2; ++pass) {
        setKernelPath(pass == 0 ? KernelPath::Fastest : KernelPath::Portable);
        if (pass == 1) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
            EXPECT_FALSE(haveAvx2Fma());
#endif
        }
        rows[pass] = row;
        expRowsInPlace(rows[pass].data(), 1, 37, 37, scale, &maxes[pass], &sums[pass]);
    }
    setKernelPath(before);
    EXPECT_EQ(maxes[0], maxes[1]);
    EXPECT_NEAR(sums[0], sums[1], 1e-6 * sums[1]);
    for (std::size_t j = 0; j < row.size(); ++j) ASSERT_NEAR(rows[0][j], rows[1][j], 2e-7 * std::max(1.0f, rows[1][j]));
}

// The routing's similarities: every element is the float sum over k ascending of a multiply then
// an add, the same bits on the register-tiled path, the portable path and on one thread, for row
// counts and column counts that leave every kind of edge; equal columns get equal bits.
TEST(CpuKernels, ColumnSimilaritiesHaveOneOrderOfOperations) {
    const KernelPath before = kernelPath();
    for (const auto& [rows, columns, depth] : {std::array<Index, 3>{7, 531, 13}, {128, 512, 64}, {4, 16, 1}, {3, 5, 64}}) {
        const std::vector<float> a = randomValues(static_cast<std::size_t>(rows * depth), 11);
        std::vector<float> b = randomValues(static_cast<std::size_t>(columns * depth), 12);
        std::copy_n(b.begin() + 2 * depth, depth, b.end() - depth);  // the last column equals column 2
        std::vector<float> want(static_cast<std::size_t>(rows * columns));
        for (Index r = 0; r < rows; ++r)
            for (Index j = 0; j < columns; ++j) {
                volatile float sum = 0.0f;  // (volatile: one rounding per multiply and per add)
                for (Index k = 0; k < depth; ++k) {
                    volatile float product = a[static_cast<std::size_t>(r * depth + k)] * b[static_cast<std::size_t>(j * depth + k)];
                    sum = sum + product;
                }
                want[static_cast<std::size_t>(r * columns + j)] = sum;
            }
        for (int pass = 0; pass < 3; ++pass) {
            setKernelPath(pass == 1 ? KernelPath::Portable : KernelPath::Fastest);
            std::vector<float> got(want.size(), std::numeric_limits<float>::quiet_NaN());
            if (pass == 2)
                columnSimilaritiesOnThisThread(a.data(), rows, b.data(), columns, depth, got.data());
            else
                columnSimilarities(a.data(), rows, b.data(), columns, depth, got.data());
            for (std::size_t e = 0; e < want.size(); ++e)
                ASSERT_EQ(got[e], want[e]) << rows << " x " << columns << " x " << depth << ", pass " << pass << ", element " << e;
            for (Index r = 0; r < rows; ++r)
                EXPECT_EQ(got[static_cast<std::size_t>(r * columns + 2)], got[static_cast<std::size_t>(r * columns + columns - 1)]);
        }
    }
    setKernelPath(before);
}
