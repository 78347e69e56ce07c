#pragma once
// Double-precision building blocks of the decoder references the model tests write from the
// definitions (tests/engine/test_llama_model.cpp, test_gemma_phi3_models.cpp): x·Wᵀ + b, RMS norms
// (Gemma's scaling by 1 + w), rotary positions in the "rotate half" layout (the first 2·|f|
// features turned, the rest passed), and a causal softmax row.

#include <attnscope/tensor.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace attnscope::testing::reference {

using Vec = std::vector<double>;
using Mat = std::vector<Vec>;

inline Mat matmulT(const Mat& x, const engine::PlainTensor& w, const engine::PlainTensor* b) {
    const std::int64_t out = w.shape[0], in = w.shape[1];
    Mat y(x.size(), Vec(std::size_t(out), 0.0));
    for (std::size_t r = 0; r < x.size(); ++r)
        for (std::int64_t o = 0; o < out; ++o) {
            double acc = b ? b->f32[std::size_t(o)] : 0.0;
            for (std::int64_t i = 0; i < in; ++i) acc += x[r][std::size_t(i)] * double(w.f32[std::size_t(o * in + i)]);
            y[r][std::size_t(o)] = acc;
        }
    return y;
}

/// row / rms(row) · w (Gemma: · (1 + w)), eps 1e-5 as the test configs set it.
inline Vec rmsRow(Vec row, const engine::PlainTensor& w, bool plusOne = false) {
    double sq = 0;
    for (double v : row) sq += v * v;
    const double scale = 1.0 / std::sqrt(sq / double(row.size()) + 1e-5);
    for (std::size_t c = 0; c < row.size(); ++c) row[c] *= scale * (double(w.f32[c]) + (plusOne ? 1.0 : 0.0));
    return row;
}

inline Mat rms(const Mat& x, const engine::PlainTensor& w, bool plusOne = false) {
    Mat y;
    for (const auto& row : x) y.push_back(rmsRow(row, w, plusOne));
    return y;
}

/// Features c < |f| pair with c + |f|: (x_c, x_{c+|f|}) turned by the angle position · f_c, cos and
/// sin times `scale` (YaRN's and LongRoPE's attention factor); features from 2|f| on pass.
inline Vec rotate(const Vec& x, std::size_t position, const Vec& f, double scale) {
    const std::size_t half = f.size();
    Vec y = x;
    for (std::size_t c = 0; c < half; ++c) {
        const double a = double(position) * f[c];
        y[c] = scale * (x[c] * std::cos(a) - x[c + half] * std::sin(a));
        y[c + half] = scale * (x[c + half] * std::cos(a) + x[c] * std::sin(a));
    }
    return y;
}

/// θ^(−2i/d) for i < d/2.
inline Vec defaultFrequencies(double theta, std::size_t dims) {
    Vec f(dims / 2);
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = std::pow(theta, -2.0 * double(i) / double(dims));
    return f;
}

}  // namespace attnscope::testing::reference
