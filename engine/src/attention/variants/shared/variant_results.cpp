// What every variant's run shares (variant.h): its result's start and its row status.

#include "attention/variants/variant.h"

#include <algorithm>

namespace attnscope::engine {

AttentionResult startResult(const std::string& variantId, const ParamValues& params, const Qkv& qkv) {
    AttentionResult result;
    result.variantId = variantId;
    result.params = params;
    result.heads = qkv.heads();
    result.n = qkv.n();
    result.m = qkv.m();
    result.d = qkv.d();
    return result;
}

void keepRowStatus(PlainTensor&& status, AttentionResult& result, RunContext& ctx) {
    if (std::any_of(status.u8.begin(), status.u8.end(), [](std::uint8_t v) { return v != 0; }))
        result.rowStatus = std::move(status);
    else
        ctx.pool().give(std::move(status.u8));
}

}  // namespace attnscope::engine
