#include "io/image/pil_resize.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace attnscope::engine {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;
constexpr double kPi = 3.14159265358979323846;

double sinc(double x) {
    if (x == 0.0) return 1.0;
    x *= kPi;
    return std::sin(x) / x;
}

// Pillow's filters (libImaging/Resample.c) and their supports.
double filterAt(PilFilter f, double x) {
    if (f == PilFilter::Box) return x > -0.5 && x <= 0.5 ? 1.0 : 0.0;
    x = std::abs(x);
    switch (f) {
    case PilFilter::Box: break;
    case PilFilter::Bilinear: return x < 1.0 ? 1.0 - x : 0.0;
    case PilFilter::Hamming: return x < 1.0 ? sinc(x) * (0.54 + 0.46 * std::cos(kPi * x)) : 0.0;
    case PilFilter::Bicubic: {
        constexpr double a = -0.5;
        if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
        if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
        return 0.0;
    }
    case PilFilter::Lanczos: return x < 3.0 ? sinc(x) * sinc(x / 3.0) : 0.0;
    case PilFilter::Nearest: break;
    }
    return 0.0;
}

double support(PilFilter f) {
    switch (f) {
    case PilFilter::Box: return 0.5;
    case PilFilter::Bilinear: case PilFilter::Hamming: return 1.0;
    case PilFilter::Bicubic: return 2.0;
    case PilFilter::Lanczos: return 3.0;
    case PilFilter::Nearest: break;
    }
    return 0.0;
}

// One output position's input range and fixed-point weights.
struct Taps {
    std::int64_t first = 0;
    std::vector<std::int64_t> weights;
};

std::vector<Taps> coefficients(std::int64_t inSize, std::int64_t outSize, PilFilter f) {
    const double scale = static_cast<double>(inSize) / static_cast<double>(outSize);
    const double filterScale = std::max(scale, 1.0);
    const double reach = support(f) * filterScale;
    std::vector<Taps> out(static_cast<std::size_t>(outSize));
    for (std::int64_t o = 0; o < outSize; ++o) {
        const double centre = (static_cast<double>(o) + 0.5) * scale;
        const auto lo = std::max<std::int64_t>(0, static_cast<std::int64_t>(centre - reach + 0.5));
        const auto hi = std::min<std::int64_t>(inSize, static_cast<std::int64_t>(centre + reach + 0.5));
        std::vector<double> w;
        double total = 0;
        for (std::int64_t x = lo; x < hi; ++x) {
            w.push_back(filterAt(f, (static_cast<double>(x) - centre + 0.5) / filterScale));
            total += w.back();
        }
        Taps& taps = out[static_cast<std::size_t>(o)];
        taps.first = lo;
        for (double v : w) {
            const double k = total != 0.0 ? v / total : v;
            taps.weights.push_back(static_cast<std::int64_t>(k * (1 << kPrecisionBits) + (k < 0 ? -0.5 : 0.5)));
        }
    }
    return out;
}

std::uint8_t clip8(std::int64_t acc) {
    if (acc >= (std::int64_t{255} << kPrecisionBits)) return 255;  // Pillow: in >= 1 << (PRECISION_BITS + 8)
    if (acc <= 0) return 0;
    return static_cast<std::uint8_t>(acc >> kPrecisionBits);
}

// Bytes [3, h, w] resampled along x (`alongX`) or y to `outSize`.
std::vector<std::uint8_t> pass(const std::vector<std::uint8_t>& in, std::int64_t h, std::int64_t w, std::int64_t outSize,
                               bool alongX, PilFilter f) {
    const std::int64_t inSize = alongX ? w : h;
    const auto taps = coefficients(inSize, outSize, f);
    const std::int64_t oh = alongX ? h : outSize, ow = alongX ? outSize : w;
    std::vector<std::uint8_t> out(static_cast<std::size_t>(3 * oh * ow));
    for (int c = 0; c < 3; ++c)
        for (std::int64_t y = 0; y < oh; ++y)
            for (std::int64_t x = 0; x < ow; ++x) {
                const Taps& t = taps[static_cast<std::size_t>(alongX ? x : y)];
                std::int64_t acc = std::int64_t{1} << (kPrecisionBits - 1);
                for (std::size_t k = 0; k < t.weights.size(); ++k) {
                    const std::int64_t sy = alongX ? y : t.first + static_cast<std::int64_t>(k);
                    const std::int64_t sx = alongX ? t.first + static_cast<std::int64_t>(k) : x;
                    acc += in[static_cast<std::size_t>((c * h + sy) * w + sx)] * t.weights[k];
                }
                out[static_cast<std::size_t>((c * oh + y) * ow + x)] = clip8(acc);
            }
    return out;
}

// Pillow's NEAREST: source index floor((o + 0.5) · scale).
std::vector<std::uint8_t> nearest(const std::vector<std::uint8_t>& in, std::int64_t h, std::int64_t w, std::int64_t oh,
                                  std::int64_t ow) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(3 * oh * ow));
    const auto source = [](std::int64_t o, std::int64_t inSize, std::int64_t outSize) {
        return std::min(inSize - 1, static_cast<std::int64_t>((static_cast<double>(o) + 0.5) * static_cast<double>(inSize) /
                                                               static_cast<double>(outSize)));
    };
    for (int c = 0; c < 3; ++c)
        for (std::int64_t y = 0; y < oh; ++y)
            for (std::int64_t x = 0; x < ow; ++x)
                out[static_cast<std::size_t>((c * oh + y) * ow + x)] =
                    in[static_cast<std::size_t>((c * h + source(y, h, oh)) * w + source(x, w, ow))];
    return out;
}

}  // namespace

const char* pilFilterName(PilFilter filter) {
    switch (filter) {
    case PilFilter::Nearest: return "nearest";
    case PilFilter::Lanczos: return "lanczos";
    case PilFilter::Bilinear: return "bilinear";
    case PilFilter::Bicubic: return "bicubic";
    case PilFilter::Box: return "box";
    case PilFilter::Hamming: return "hamming";
    }
    return "?";
}

RgbImage resizePil(const RgbImage& image, std::int64_t height, std::int64_t width, PilFilter filter) {
    std::vector<std::uint8_t> bytes(image.rgb.size());
    for (std::size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<std::uint8_t>(std::lround(std::clamp(image.rgb[i], 0.0f, 1.0f) * 255.0f));
    std::int64_t h = image.height, w = image.width;
    if (filter == PilFilter::Nearest) {
        bytes = nearest(bytes, h, w, height, width);
    } else {
        if (width != w) bytes = pass(bytes, h, w, width, /*alongX=*/true, filter);
        w = width;
        if (height != h) bytes = pass(bytes, h, w, height, /*alongX=*/false, filter);
    }
    RgbImage out;
    out.height = height;
    out.width = width;
    out.rgb.resize(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) out.rgb[i] = static_cast<float>(bytes[i]) / 255.0f;
    return out;
}

}  // namespace attnscope::engine
