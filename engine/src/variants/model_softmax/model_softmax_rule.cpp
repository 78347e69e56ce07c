#include "variants/model_softmax/model_softmax_rule.h"

#include "plain/engine_error.h"
#include "plain/param_access.h"

#include <attnscope/pattern_reason.h>

#include <cmath>
#include <cstring>
#include <string>

namespace attnscope::engine {

SoftmaxScoreRule modelSoftmaxRule(const ParamValues& params, std::int64_t heads, std::int64_t n, std::int64_t m,
                                  std::int64_t d, const PlainTensor* bias) {
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
    if (!bias) return rule;
    const std::vector<std::int64_t> shape{heads, n + m - 1};
    if (bias->dtype != DType::F32 || bias->shape != shape)
        throw EngineError(ErrorCode::InvalidInput, std::string("model_softmax: tensor '") + kRelativeBias + "' must be F32 [H, n + m - 1] = [" +
                                                       std::to_string(heads) + ", " + std::to_string(n + m - 1) + "], got " +
                                                       dtypeName(bias->dtype) + " with " + std::to_string(bias->shape.size()) + " dimensions");
    for (float v : bias->f32)
        if (!std::isfinite(v)) throw EngineError(ErrorCode::InvalidInput, std::string("model_softmax: tensor '") + kRelativeBias + "' holds NaN or infinite values");
    auto copy = std::shared_ptr<float[]>(new float[bias->f32.size()]);
    std::memcpy(copy.get(), bias->f32.data(), bias->f32.size() * sizeof(float));
    rule.relativeBias = SharedFloats{shape, std::shared_ptr<const float>(copy, copy.get())};
    return rule;
}

ReasonBits modelSoftmaxReason(const SoftmaxScoreRule& rule) {
    const PatternReason reason = rule.window > 0 ? PatternReason::Local : rule.causal ? PatternReason::Causal : PatternReason::Dense;
    return static_cast<ReasonBits>(1u << static_cast<unsigned>(reason));
}

}  // namespace attnscope::engine
