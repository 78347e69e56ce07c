#include "variants/variant.h"

#include "variants/variant_list.h"

#include <attnscope/variant_catalog.h>

#include <algorithm>

namespace attnscope::engine {

#define ATTNSCOPE_DECLARE_KERNEL(id) \
    namespace variants::id {            \
    std::unique_ptr<Variant> kernel();  \
    }
ATTNSCOPE_VARIANTS(ATTNSCOPE_DECLARE_KERNEL)
#undef ATTNSCOPE_DECLARE_KERNEL

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

std::vector<std::unique_ptr<Variant>> makeAllVariants() {
    std::vector<std::unique_ptr<Variant>> all;
#define ATTNSCOPE_KERNEL(id)                      \
    all.push_back(variants::id::kernel());        \
    all.back()->bindInfo(*findVariantInfo(#id));
    ATTNSCOPE_VARIANTS(ATTNSCOPE_KERNEL)
#undef ATTNSCOPE_KERNEL
    return all;
}

}  // namespace attnscope::engine
