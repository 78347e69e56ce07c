#include "torch/model/rotary_positions.h"

#include <cmath>

namespace attnscope::engine {
namespace {

at::Tensor defaultFrequencies(double base, std::int64_t dim) {
    // as the reference: base ** (arange(0, dim, 2) / dim), in float32
    const at::Tensor exponents = at::arange(0, dim, 2, at::kLong).to(at::kFloat) / static_cast<double>(dim);
    return 1.0 / at::pow(at::scalar_tensor(base, at::kFloat), exponents);
}

// Llama 3.1: long wavelengths divided by the factor, short ones kept, those between blended.
at::Tensor llama3Frequencies(const RopeSettings& r, at::Tensor inv) {
    const double oldContext = static_cast<double>(r.originalMaxPositions);
    const double lowWavelength = oldContext / r.lowFreqFactor, highWavelength = oldContext / r.highFreqFactor;
    const at::Tensor wavelength = 2.0 * M_PI / inv;
    at::Tensor scaled = at::where(wavelength > lowWavelength, inv / r.factor, inv);
    const at::Tensor smooth = (oldContext / wavelength - r.lowFreqFactor) / (r.highFreqFactor - r.lowFreqFactor);
    const at::Tensor blended = (1 - smooth) * scaled / r.factor + smooth * scaled;
    const at::Tensor medium = wavelength.ge(highWavelength).logical_and(wavelength.le(lowWavelength));
    return at::where(medium, blended, scaled);
}

// YaRN's m(s) = 0.1 · k · ln s + 1 (1 without scaling)
double yarnMscale(double scale, double k) { return scale <= 1 ? 1.0 : 0.1 * k * std::log(scale) + 1.0; }

// YaRN (Peng et al. 2023) as HF's _compute_yarn_parameters: dims that turn fewer than beta_slow
// times over the trained context are interpolated (divided by the factor), those turning more
// than beta_fast times kept, a linear ramp between.
at::Tensor yarnFrequencies(const RopeSettings& r, std::int64_t dim, std::int64_t maxPositions) {
    const double context = static_cast<double>(r.originalMaxPositions > 0 ? r.originalMaxPositions : maxPositions);
    const double d = static_cast<double>(dim);
    auto correctionDim = [&](double rotations) { return d * std::log(context / (rotations * 2 * M_PI)) / (2 * std::log(r.theta)); };
    double low = correctionDim(r.betaFast), high = correctionDim(r.betaSlow);
    if (r.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, d - 1);
    if (low == high) high += 0.001;  // as the reference: no zero-width ramp
    const at::Tensor ramp = ((at::arange(dim / 2, at::kLong).to(at::kFloat) - low) / (high - low)).clamp(0, 1);
    const at::Tensor kept = defaultFrequencies(r.theta, dim);
    return kept / r.factor * ramp + kept * (1 - ramp);
}

// LongRoPE (Phi-3, HF _compute_longrope_parameters): each frequency divided by its own factor, the
// short list for texts within the trained context, the long one past it.
at::Tensor longropeFrequencies(const RopeSettings& r, std::int64_t dim, std::int64_t tokens) {
    const std::vector<double>& factors = tokens > r.originalMaxPositions ? r.longFactor : r.shortFactor;
    const at::Tensor divisors = at::tensor(at::ArrayRef<double>(factors), at::kDouble).to(at::kFloat);
    return defaultFrequencies(r.theta, dim) / divisors;
}

}  // namespace

double ropeAttentionFactor(const RopeSettings& r) {
    if (r.scaling == "longrope") {
        if (r.attentionFactor > 0) return r.attentionFactor;
        if (r.factor <= 1) return 1.0;
        return std::sqrt(1 + std::log(r.factor) / std::log(static_cast<double>(r.originalMaxPositions)));
    }
    if (r.scaling != "yarn") return 1.0;
    if (r.attentionFactor > 0) return r.attentionFactor;
    if (r.mscale > 0 && r.mscaleAllDim > 0) return yarnMscale(r.factor, r.mscale) / yarnMscale(r.factor, r.mscaleAllDim);
    return yarnMscale(r.factor, 1.0);
}

at::Tensor ropeInverseFrequencies(const RopeSettings& r, std::int64_t headDim, std::int64_t tokens, std::int64_t maxPositions) {
    const std::int64_t dim = r.rotaryDims(headDim);
    if (r.scaling == "longrope") return longropeFrequencies(r, dim, tokens);
    if (r.scaling == "linear") return defaultFrequencies(r.theta, dim) / r.factor;
    if (r.scaling == "llama3") return llama3Frequencies(r, defaultFrequencies(r.theta, dim));
    if (r.scaling == "yarn") return yarnFrequencies(r, dim, maxPositions);
    if (r.scaling == "dynamic") {
        // NTK-aware: past the trained length the base grows with the text
        const double length = static_cast<double>(std::max(tokens, maxPositions));
        const double base = r.theta * std::pow(r.factor * length / static_cast<double>(maxPositions) - (r.factor - 1),
                                               static_cast<double>(dim) / static_cast<double>(dim - 2));
        return defaultFrequencies(base, dim);
    }
    return defaultFrequencies(r.theta, dim);
}

at::Tensor applyRotary(const at::Tensor& x, const at::Tensor& inverseFrequencies, double attentionFactor) {
    const std::int64_t rotary = 2 * inverseFrequencies.numel();
    if (rotary < x.size(2))  // partial rotary: the features past the rotated ones pass unchanged
        return at::cat({applyRotary(x.narrow(2, 0, rotary), inverseFrequencies, attentionFactor),
                        x.narrow(2, rotary, x.size(2) - rotary)},
                       -1);
    const std::int64_t n = x.size(1), half = x.size(2) / 2;
    const at::Tensor angles = at::outer(at::arange(n, at::kLong).to(at::kFloat), inverseFrequencies);  // [n, d/2]
    const at::Tensor both = at::cat({angles, angles}, -1);                                              // [n, d]
    const at::Tensor cos = both.cos() * attentionFactor, sin = both.sin() * attentionFactor;
    const at::Tensor rotated = at::cat({-x.narrow(2, half, half), x.narrow(2, 0, half)}, -1);
    return x * cos + rotated * sin;
}

at::Tensor applyPairRotary(const at::Tensor& x, const at::Tensor& inverseFrequencies, double attentionFactor) {
    const std::int64_t heads = x.size(0), n = x.size(1), half = x.size(2) / 2;
    const at::Tensor angles = at::outer(at::arange(n, at::kLong).to(at::kFloat), inverseFrequencies);  // [n, r/2]
    const at::Tensor cos = angles.cos() * attentionFactor, sin = angles.sin() * attentionFactor;
    const at::Tensor pairs = x.reshape({heads, n, half, 2});
    const at::Tensor even = pairs.select(3, 0), odd = pairs.select(3, 1);
    return at::stack({even * cos - odd * sin, odd * cos + even * sin}, 3).reshape({heads, n, 2 * half});
}

}  // namespace attnscope::engine
