#include "attention/variants/model_softmax/model_softmax_rule.h"

#include "base/api/engine_error.h"
#include "base/api/param_access.h"

#include <attnscope/pattern_reason.h>

#include <cmath>
#include <cstring>
#include <string>

namespace attnscope::engine {

namespace {

// A finite F32 tensor of exactly `shape`, copied (the rule outlives the request's inputs).
SharedFloats checkedCopy(const PlainTensor& t, const char* name, const std::vector<std::int64_t>& shape, const char* shapeWords) {
    if (t.dtype != DType::F32 || t.shape != shape) {
        std::string expected;
        for (auto s : shape) expected += (expected.empty() ? "" : ", ") + std::to_string(s);
        throw EngineError(ErrorCode::InvalidInput, std::string("model_softmax: tensor '") + name + "' must be F32 " + shapeWords + " = [" +
                                                       expected + "], got " + dtypeName(t.dtype) + " with " +
                                                       std::to_string(t.shape.size()) + " dimensions");
    }
    for (float v : t.f32)
        if (!std::isfinite(v)) throw EngineError(ErrorCode::InvalidInput, std::string("model_softmax: tensor '") + name + "' holds NaN or infinite values");
    auto copy = std::shared_ptr<float[]>(new float[t.f32.size()]);
    std::memcpy(copy.get(), t.f32.data(), t.f32.size() * sizeof(float));
    return SharedFloats{shape, std::shared_ptr<const float>(copy, copy.get())};
}

}  // namespace

SoftmaxScoreRule modelSoftmaxRule(const ParamValues& params, std::int64_t heads, std::int64_t n, std::int64_t m,
                                  std::int64_t d, const PlainTensor* bias, const PlainTensor* sinks) {
    SoftmaxScoreRule rule;
    const double scale = paramFloat(params, "scale"), softcap = paramFloat(params, "softcap");
    if (!std::isfinite(scale) || scale < 0 || !std::isfinite(softcap) || softcap < 0)
        throw EngineError(ErrorCode::InvalidArgument, "model_softmax: scale and softcap must be finite and >= 0");
    rule.scale = scale > 0 ? static_cast<float>(scale) : 1.0f / std::sqrt(static_cast<float>(d));
    rule.softcap = static_cast<float>(softcap);
    rule.causal = paramBool(params, "causal");
    rule.window = paramInt(params, "window");
    rule.n = n;
    rule.m = m;
    if (bias) rule.relativeBias = checkedCopy(*bias, kRelativeBias, {heads, n + m - 1}, "[H, n + m - 1]");
    if (sinks) rule.sinks = checkedCopy(*sinks, kSinks, {heads}, "[H]");
    return rule;
}

ReasonBits modelSoftmaxReason(const SoftmaxScoreRule& rule) {
    const PatternReason reason = rule.window > 0 ? PatternReason::Local : rule.causal ? PatternReason::Causal : PatternReason::Dense;
    return static_cast<ReasonBits>(1u << static_cast<unsigned>(reason));
}

}  // namespace attnscope::engine
