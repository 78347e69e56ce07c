#include "attention/variants/transformer_xl/transformer_xl_geometry.h"

#include "base/kernels/blas_gemm.h"
#include "base/api/engine_error.h"
#include "base/api/param_access.h"
#include "base/runtime/seeded_normal.h"

#include <algorithm>
#include <cmath>

namespace attnscope::engine::transformer_xl {
namespace {

constexpr std::uint64_t kBiasStream = 0x7A1B5000;  // + 2·head + (0: u, 1: v)
constexpr std::uint64_t kPositionStream = 0x7A1B6000;  // + row of W_r

std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

const PlainTensor& checkedInput(const std::map<std::string, PlainTensor>& inputs, const std::string& name,
                                const std::string& expected, std::vector<std::int64_t> shape, bool longerRows) {
    const PlainTensor& t = inputs.at(name);
    bool ok = t.dtype == DType::F32 && t.shape.size() == shape.size();
    for (std::size_t i = 0; ok && i < shape.size(); ++i)
        ok = longerRows && i == 1 ? t.shape[i] >= shape[i] : t.shape[i] == shape[i];
    if (!ok)
        throw EngineError(ErrorCode::InvalidInput, "transformer_xl: tensor '" + name + "' must be F32 " + expected +
                                                       " = " + shapeText(shape) + (longerRows ? " (or more rows)" : "") +
                                                       ", got " + dtypeName(t.dtype) + " " + shapeText(t.shape));
    return t;
}

}  // namespace

Settings settingsOf(const ParamValues& params) {
    Settings s;
    s.segment = paramInt(params, "segment");
    s.memory = paramInt(params, "memory");
    s.relative = paramBool(params, "relative");
    s.sameLength = paramBool(params, "same_length");
    if (s.segment < 1) throw EngineError(ErrorCode::InvalidArgument, "transformer_xl: segment must be at least 1");
    if (s.memory < 0) throw EngineError(ErrorCode::InvalidArgument, "transformer_xl: memory must be at least 0");
    if (s.sameLength && s.memory == 0)
        throw EngineError(ErrorCode::InvalidArgument,
                          "transformer_xl: same_length needs memory >= 1 (each query sees the last `memory` keys; "
                          "with memory 0 the reference's mask hides every key)");
    return s;
}

std::int64_t firstKey(const Settings& s, std::int64_t i) {
    if (s.sameLength) return std::max<std::int64_t>(0, i - s.memory + 1);
    return std::max<std::int64_t>(0, segmentStart(s, i) - s.memory);
}

void relativeEncoding(double delta, std::int64_t modelDim, float* out) {
    const std::int64_t half = (modelDim + 1) / 2;
    for (std::int64_t k = 0; k < half; ++k) {
        // inv_freq = 1 / 10000^(arange(0, modelDim, 2) / modelDim)
        const double angle = delta / std::pow(10000.0, static_cast<double>(2 * k) / static_cast<double>(modelDim));
        out[k] = static_cast<float>(std::sin(angle));
        out[half + k] = static_cast<float>(std::cos(angle));
    }
}

Parameters drawParameters(std::uint64_t seed, std::int64_t heads, std::int64_t d, const Settings& s) {
    Parameters p;
    p.wBias = PlainTensor::zeros(DType::F32, {heads, d});
    p.rBias = PlainTensor::zeros(DType::F32, {heads, d});
    for (std::int64_t h = 0; h < heads; ++h) {
        SeededNormal genU(mixSeed(seed, kBiasStream + 2 * static_cast<std::uint64_t>(h)));
        SeededNormal genV(mixSeed(seed, kBiasStream + 2 * static_cast<std::uint64_t>(h) + 1));
        for (std::int64_t c = 0; c < d; ++c) {
            p.wBias.f32[static_cast<std::size_t>(h * d + c)] = static_cast<float>(genU.normal());
            p.rBias.f32[static_cast<std::size_t>(h * d + c)] = static_cast<float>(genV.normal());
        }
    }
    // r = R W_r^T: [M + L, |R|] x [|R|, H·d], then laid out per head [H, M + L, d]
    const std::int64_t model = heads * d, width = encodingWidth(model), rows = distances(s);
    std::vector<float> wr(static_cast<std::size_t>(model * width));
    const double stdDev = 1.0 / std::sqrt(static_cast<double>(width));
    for (std::int64_t o = 0; o < model; ++o) {
        SeededNormal gen(mixSeed(seed, kPositionStream + static_cast<std::uint64_t>(o)));
        for (std::int64_t e = 0; e < width; ++e) wr[static_cast<std::size_t>(o * width + e)] = static_cast<float>(gen.normal() * stdDev);
    }
    std::vector<float> encoding(static_cast<std::size_t>(rows * width)), projected(static_cast<std::size_t>(rows * model));
    for (std::int64_t delta = 0; delta < rows; ++delta)
        relativeEncoding(static_cast<double>(delta), model, encoding.data() + delta * width);
    gemmRowMajor(true, rows, model, width, encoding.data(), width, wr.data(), width, projected.data(), model);
    p.posKeys = PlainTensor::zeros(DType::F32, {heads, rows, d});
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t delta = 0; delta < rows; ++delta)
            std::copy_n(projected.data() + delta * model + h * d, d, p.posKeys.f32.data() + (h * rows + delta) * d);
    return p;
}

Parameters parametersFor(const std::map<std::string, PlainTensor>* inputs, std::uint64_t seed, std::int64_t heads,
                         std::int64_t d, const Settings& s) {
    static const char* kNames[] = {"r_w_bias", "r_r_bias", "pos_keys"};
    int given = 0;
    for (const char* name : kNames) given += inputs && inputs->count(name) ? 1 : 0;
    if (given == 0) return drawParameters(seed, heads, d, s);
    if (given != 3)
        throw EngineError(ErrorCode::InvalidInput,
                          "transformer_xl: r_w_bias, r_r_bias and pos_keys are given together or not at all");
    Parameters p;
    p.wBias = checkedInput(*inputs, "r_w_bias", "[H, d]", {heads, d}, false);
    p.rBias = checkedInput(*inputs, "r_r_bias", "[H, d]", {heads, d}, false);
    const PlainTensor& pos = checkedInput(*inputs, "pos_keys", "[H, memory + segment, d]", {heads, distances(s), d}, true);
    const std::int64_t givenRows = pos.shape[1], rows = distances(s);
    p.posKeys = PlainTensor::zeros(DType::F32, {heads, rows, d});
    for (std::int64_t h = 0; h < heads; ++h)
        std::copy_n(pos.f32.data() + h * givenRows * d, rows * d, p.posKeys.f32.data() + h * rows * d);
    for (const PlainTensor* t : {&p.wBias, &p.rBias, &p.posKeys})
        for (float x : t->f32)
            if (!std::isfinite(x)) throw EngineError(ErrorCode::InvalidInput, "transformer_xl: r_w_bias, r_r_bias and pos_keys must be finite");
    return p;
}

}  // namespace attnscope::engine::transformer_xl

#include "attention/weights/row_scores.h"

namespace attnscope::engine::transformer_xl {

void rowScores(const float* q, const float* keys, const float* u, const float* v, const float* posKeys, std::int64_t d,
               std::int64_t i, std::int64_t first, bool relative, float scale, float* out, float* scratch) {
    const std::int64_t count = i - first + 1;
    if (!relative) {
        dotRange(q, keys, d, first, count, out);
    } else {
        float* qu = scratch;
        float* qv = scratch + d;
        float* byDistance = scratch + 2 * d;
        for (std::int64_t c = 0; c < d; ++c) {
            qu[c] = q[c] + u[c];
            qv[c] = q[c] + v[c];
        }
        dotRange(qu, keys, d, first, count, out);
        dotRange(qv, posKeys, d, 0, count, byDistance);  // distances 0 … i − first
        for (std::int64_t t = 0; t < count; ++t) out[t] += byDistance[count - 1 - t];
    }
    for (std::int64_t t = 0; t < count; ++t) out[t] *= scale;
}

}  // namespace attnscope::engine::transformer_xl
