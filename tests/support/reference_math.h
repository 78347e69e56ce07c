#pragma once
// Double-precision building blocks for tests that recompute a model's forward pass from its
// definition: affine maps (nn.Linear or Conv1D storage), layer norm, GELU, residual sums and
// multi-head softmax attention. Written from the definitions, independent of the engine.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace attnscope::testing::reference {

using Matrix = std::vector<std::vector<double>>;  // [rows][cols]

inline Matrix zeros(std::size_t r, std::size_t c) { return Matrix(r, std::vector<double>(c, 0.0)); }

/// y = x W^T + b with W stored [out, in] (nn.Linear), or y = x W + b with W stored [in, out] (Conv1D).
inline Matrix affine(const Matrix& x, const std::vector<float>& w, const std::vector<float>& b, std::size_t in, std::size_t out,
              bool stored_in_out) {
    Matrix y = zeros(x.size(), out);
    for (std::size_t r = 0; r < x.size(); ++r) {
        for (std::size_t o = 0; o < out; ++o) {
            double acc = b[o];
            for (std::size_t i = 0; i < in; ++i) acc += x[r][i] * (stored_in_out ? w[i * out + o] : w[o * in + i]);
            y[r][o] = acc;
        }
    }
    return y;
}

inline Matrix layerNorm(const Matrix& x, const std::vector<float>& g, const std::vector<float>& b, double eps) {
    Matrix y = x;
    for (auto& row : y) {
        double mean = 0, var = 0;
        for (double v : row) mean += v;
        mean /= static_cast<double>(row.size());
        for (double v : row) var += (v - mean) * (v - mean);
        var /= static_cast<double>(row.size());
        for (std::size_t i = 0; i < row.size(); ++i) row[i] = (row[i] - mean) / std::sqrt(var + eps) * g[i] + b[i];
    }
    return y;
}

inline double gelu(double x, bool tanhForm) {
    if (!tanhForm) return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

inline Matrix add(Matrix a, const Matrix& b) {
    for (std::size_t r = 0; r < a.size(); ++r)
        for (std::size_t c = 0; c < a[r].size(); ++c) a[r][c] += b[r][c];
    return a;
}

/// Multi-head attention on [n, hidden] q, k, v; records each head's weights.
inline Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v, std::size_t heads, bool causal,
                 std::vector<Matrix>& weights) {
    const std::size_t n = q.size(), dh = q[0].size() / heads;
    Matrix context = zeros(n, q[0].size());
    for (std::size_t h = 0; h < heads; ++h) {
        Matrix p = zeros(n, n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t last = causal ? i + 1 : n;
            double maxScore = -1e300;
            for (std::size_t j = 0; j < last; ++j) {
                double s = 0;
                for (std::size_t e = 0; e < dh; ++e) s += q[i][h * dh + e] * k[j][h * dh + e];
                p[i][j] = s / std::sqrt(static_cast<double>(dh));
                maxScore = std::max(maxScore, p[i][j]);
            }
            double sum = 0;
            for (std::size_t j = 0; j < last; ++j) sum += (p[i][j] = std::exp(p[i][j] - maxScore));
            for (std::size_t j = 0; j < n; ++j) p[i][j] = j < last ? p[i][j] / sum : 0.0;
            for (std::size_t j = 0; j < n; ++j)
                for (std::size_t e = 0; e < dh; ++e) context[i][h * dh + e] += p[i][j] * v[j][h * dh + e];
        }
        weights.push_back(std::move(p));
    }
    return context;
}

}  // namespace attnscope::testing::reference
