#include "attention/variants/shared/padded_result.h"

#include <algorithm>
#include <cstring>

namespace attnscope::engine {

Qkv padQkv(const Qkv& qkv, std::int64_t extra) {
    const std::int64_t heads = qkv.heads(), d = qkv.d(), m = qkv.m();
    // each head's rows, then `extra` zero rows
    const auto pad = [&](const SharedFloats& t) {
        const std::int64_t rows = t.shape[1];
        auto values = std::make_shared<std::vector<float>>(static_cast<std::size_t>(heads * (rows + extra) * d), 0.0f);
        for (std::int64_t h = 0; h < heads; ++h)
            std::copy_n(t.data.get() + h * rows * d, rows * d, values->begin() + h * (rows + extra) * d);
        SharedFloats out;
        out.shape = {heads, rows + extra, d};
        out.data = std::shared_ptr<const float>(values, values->data());
        return out;
    };
    Qkv out;
    out.q = pad(qkv.q);
    out.k = pad(qkv.k);
    out.v = pad(qkv.v);
    out.keyPadding = qkv.keyPadding.empty() ? std::vector<std::uint8_t>(static_cast<std::size_t>(m), 0) : qkv.keyPadding;
    out.keyPadding.resize(static_cast<std::size_t>(m + extra), 1);
    return out;
}

namespace {

// Rows [0, n) of each head of a [heads, padded, width] tensor.
template <class T>
std::vector<T> cropRows(const std::vector<T>& values, std::int64_t heads, std::int64_t padded, std::int64_t n,
                        std::int64_t width) {
    std::vector<T> out(static_cast<std::size_t>(heads * n * width));
    for (std::int64_t h = 0; h < heads; ++h)
        std::copy_n(values.begin() + h * padded * width, n * width, out.begin() + h * n * width);
    return out;
}

}  // namespace

void cropPaddedResult(AttentionResult& result, std::int64_t n) {
    const std::int64_t heads = result.heads, padded = result.n, d = result.d;
    if (n >= padded) return;
    auto output = std::make_shared<std::vector<float>>(cropRows(*result.output.values, heads, padded, n, d));
    result.output = SharedTensorF32{{heads, n, d}, std::move(output)};
    for (auto& [name, t] : result.stats)
        if (t.dtype == DType::F32 && t.shape == std::vector<std::int64_t>{heads, padded})
            t = PlainTensor::fromF32({heads, n}, cropRows(t.f32, heads, padded, n, 1));
    result.emptyRowCount = 0;
    if (!result.rowStatus.u8.empty()) {
        std::vector<std::uint8_t> status = cropRows(result.rowStatus.u8, heads, padded, n, 1);
        result.emptyRowCount = std::count(status.begin(), status.end(), std::uint8_t{1});
        if (std::any_of(status.begin(), status.end(), [](std::uint8_t v) { return v != 0; }))
            result.rowStatus = PlainTensor::fromU8({heads, n}, std::move(status));
        else
            result.rowStatus = PlainTensor{};
    }
    result.n = n;
    result.m = n;
}

}  // namespace attnscope::engine
