#include "io/image/area_resize.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace attnscope::engine {
namespace {

// Output sample o of `out` covers source [o·s, (o+1)·s) with s = in / out: its weights over the
// source samples it touches, summing to 1.
struct Footprint {
    std::int64_t first = 0;
    std::vector<double> weights;
};

std::vector<Footprint> footprints(std::int64_t in, std::int64_t out) {
    std::vector<Footprint> result(static_cast<std::size_t>(out));
    const double scale = static_cast<double>(in) / static_cast<double>(out);
    for (std::int64_t o = 0; o < out; ++o) {
        const double begin = static_cast<double>(o) * scale, end = static_cast<double>(o + 1) * scale;
        Footprint& f = result[static_cast<std::size_t>(o)];
        f.first = std::min<std::int64_t>(in - 1, static_cast<std::int64_t>(std::floor(begin)));
        for (std::int64_t s = f.first; s < in && static_cast<double>(s) < end; ++s) {
            const double covered = std::min(end, static_cast<double>(s + 1)) - std::max(begin, static_cast<double>(s));
            f.weights.push_back(covered / scale);
        }
    }
    return result;
}

}  // namespace

RgbImage resizeArea(const RgbImage& image, std::int64_t height, std::int64_t width) {
    const std::int64_t h = image.height, w = image.width;
    const auto across = footprints(w, width), down = footprints(h, height);
    RgbImage out;
    out.height = height;
    out.width = width;
    out.rgb.assign(static_cast<std::size_t>(3 * height * width), 0.0f);
    std::vector<double> rows(static_cast<std::size_t>(h * width));  // one channel after the horizontal pass
    for (int c = 0; c < 3; ++c) {
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < width; ++x) {
                const Footprint& f = across[static_cast<std::size_t>(x)];
                double sum = 0;
                for (std::size_t t = 0; t < f.weights.size(); ++t)
                    sum += f.weights[t] * image.at(c, y, f.first + static_cast<std::int64_t>(t));
                rows[static_cast<std::size_t>(y * width + x)] = sum;
            }
        for (std::int64_t y = 0; y < height; ++y) {
            const Footprint& f = down[static_cast<std::size_t>(y)];
            for (std::int64_t x = 0; x < width; ++x) {
                double sum = 0;
                for (std::size_t t = 0; t < f.weights.size(); ++t)
                    sum += f.weights[t] * rows[static_cast<std::size_t>((f.first + static_cast<std::int64_t>(t)) * width + x)];
                out.rgb[static_cast<std::size_t>((c * height + y) * width + x)] = static_cast<float>(sum);
            }
        }
    }
    return out;
}

}  // namespace attnscope::engine
