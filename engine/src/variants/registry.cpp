#include "variants/variant.h"

#include <algorithm>

namespace attnscope::engine {

std::unique_ptr<Variant> makeFullAttention();
std::unique_ptr<Variant> makeSparseStrided();
std::unique_ptr<Variant> makeLongformer();
std::unique_ptr<Variant> makeSparseFixed();
std::unique_ptr<Variant> makeBigBird();
std::unique_ptr<Variant> makeTopKAttention();
std::unique_ptr<Variant> makeEntmaxAttention();
std::unique_ptr<Variant> makeStarAttention();
std::unique_ptr<Variant> makeLinearAttention();
std::unique_ptr<Variant> makePerformerAttention();
std::unique_ptr<Variant> makeLinformerAttention();
std::unique_ptr<Variant> makeReformerAttention();
std::unique_ptr<Variant> makeRoutingAttention();

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
    all.push_back(makeFullAttention());
    all.push_back(makeSparseStrided());
    all.push_back(makeSparseFixed());
    all.push_back(makeLongformer());
    all.push_back(makeBigBird());
    all.push_back(makeTopKAttention());
    all.push_back(makeEntmaxAttention());
    all.push_back(makeStarAttention());
    all.push_back(makeLinformerAttention());
    all.push_back(makeLinearAttention());
    all.push_back(makePerformerAttention());
    all.push_back(makeReformerAttention());
    all.push_back(makeRoutingAttention());
    return all;
}

}  // namespace attnscope::engine
