#include "variants/padded_result.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>

namespace attnscope::engine {

Qkv padQkv(const Qkv& qkv, std::int64_t extra) {
    const std::int64_t heads = qkv.heads(), d = qkv.d(), m = qkv.m();
    const auto pad = [&](const at::Tensor& t) { return at::cat({t, at::zeros({heads, extra, d}, t.options())}, 1); };
    Qkv out{pad(qkv.q), pad(qkv.k), pad(qkv.v), {}};
    out.keyPadding = qkv.keyPadding.empty() ? std::vector<std::uint8_t>(static_cast<std::size_t>(m), 0) : qkv.keyPadding;
    out.keyPadding.resize(static_cast<std::size_t>(m + extra), 1);
    return out;
}

std::vector<float> cropPattern(SparsePattern& pattern, std::int64_t rowSets, std::int64_t n,
                               const std::vector<float>* alignedWeights, std::int64_t weightSets) {
    const std::int64_t rows = pattern.rows, nnz = pattern.nnz();
    std::vector<std::int64_t> rowPtr;
    rowPtr.reserve(static_cast<std::size_t>(rowSets * n + 1));
    rowPtr.push_back(0);
    std::vector<std::int64_t> kept;  // entry indices kept, in order
    for (std::int64_t s = 0; s < rowSets; ++s)
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t r = s * rows + i;
            for (std::int64_t e = pattern.rowPtr[static_cast<std::size_t>(r)];
                 e < pattern.rowPtr[static_cast<std::size_t>(r + 1)]; ++e)
                if (pattern.colIdx[static_cast<std::size_t>(e)] < n) kept.push_back(e);
            rowPtr.push_back(static_cast<std::int64_t>(kept.size()));
        }
    for (std::size_t t = 0; t < kept.size(); ++t) {  // in place: kept[t] >= t
        const auto e = static_cast<std::size_t>(kept[t]);
        pattern.colIdx[t] = pattern.colIdx[e];
        pattern.reason[t] = pattern.reason[e];
    }
    pattern.colIdx.resize(kept.size());
    pattern.reason.resize(kept.size());
    pattern.rowPtr = std::move(rowPtr);
    pattern.rows = n;
    pattern.cols = n;
    std::vector<float> weights;
    if (!alignedWeights) return weights;
    weights.resize(kept.size() * static_cast<std::size_t>(weightSets));
    for (std::int64_t w = 0; w < weightSets; ++w)
        for (std::size_t t = 0; t < kept.size(); ++t)
            weights[static_cast<std::size_t>(w) * kept.size() + t] =
                (*alignedWeights)[static_cast<std::size_t>(w * nnz + kept[t])];
    return weights;
}

void cropPaddedResult(AttentionResult& result, std::int64_t n) {
    const std::int64_t heads = result.heads, padded = result.n, m = result.m, d = result.d;
    if (n >= padded) return;
    {
        auto output = std::make_shared<std::vector<float>>(static_cast<std::size_t>(heads * n * d));
        for (std::int64_t h = 0; h < heads; ++h)
            std::memcpy(output->data() + h * n * d, result.output.data() + h * padded * d,
                        static_cast<std::size_t>(n * d) * sizeof(float));
        result.output = SharedTensorF32{{heads, n, d}, std::move(output)};
    }
    SparsePattern& pattern = result.pattern;
    const std::int64_t rowSets = pattern.perHead ? heads : 1;
    if (!pattern.implicitDense) {
        const bool alignedKept = result.weightsLayout == WeightsLayout::AlignedWithPattern && !result.weights.empty();
        std::vector<float> aligned = cropPattern(pattern, rowSets, n, alignedKept ? result.weights.values.get() : nullptr,
                                                 pattern.perHead ? 1 : heads);
        if (alignedKept) {
            const auto entries = static_cast<std::int64_t>(aligned.size()) / (pattern.perHead ? 1 : heads);
            result.weights = SharedTensorF32{pattern.perHead ? std::vector<std::int64_t>{entries}
                                                             : std::vector<std::int64_t>{heads, entries},
                                             std::make_shared<std::vector<float>>(std::move(aligned))};
        }
    } else {
        pattern.rows = n;
        pattern.cols = n;
    }
    if (result.weightsLayout == WeightsLayout::Dense && !result.weights.empty()) {
        auto dense = std::make_shared<std::vector<float>>(static_cast<std::size_t>(heads * n * n));
        for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t i = 0; i < n; ++i)
                std::memcpy(dense->data() + (h * n + i) * n, result.weights.data() + (h * padded + i) * m,
                            static_cast<std::size_t>(n) * sizeof(float));
        result.weights = SharedTensorF32{{heads, n, n}, std::move(dense)};
    }
    result.emptyRowCount = 0;
    if (!result.rowStatus.u8.empty()) {
        std::vector<std::uint8_t> status(static_cast<std::size_t>(heads * n));
        for (std::int64_t h = 0; h < heads; ++h)
            std::copy_n(result.rowStatus.u8.begin() + h * padded, n, status.begin() + h * n);
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
