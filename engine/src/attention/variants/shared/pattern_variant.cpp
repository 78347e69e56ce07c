// Helpers the pattern variants share (pattern_variant.h).

#include "attention/variants/shared/pattern_variant.h"

#include "attention/variants/shared/dense_plan_run.h"

#include <algorithm>

namespace attnscope::engine {

std::uint64_t patternRunBytes(const ProblemShape& s, double keysPerRow) {
    const double rows = static_cast<double>(s.heads) * static_cast<double>(s.n);
    // output [H, n, d] and lse + row status [H, n]; scratch: a group of 64 rows' scores and the
    // head's keys in panels, per thread (two threads counted)
    const double kept = rows * (static_cast<double>(s.d) * 4.0 + 5.0);
    const double scratch = 2.0 * (64.0 * (keysPerRow + 64.0) * 4.0 + static_cast<double>(s.m) * static_cast<double>(s.d) * 4.0);
    return static_cast<std::uint64_t>(kept + scratch);
}


void runPatternVariant(const Qkv& qkv, const BlockPattern& pattern, RunContext& ctx, AttentionResult& result) {
    PatternKernelInput input;
    input.pattern = &pattern;
    input.keyPadding = qkv.keyPadding;
    input.queryPadding = selfQueryPadding(qkv);
    input.slot = result.variantId;
    ctx.beginStage("attention");
    runPatternKernel(qkv, input, ctx, result);
    ctx.endStage();
    result.counters = ctx.counters();
}

void requireSelfAttention(const std::string& variant, const Qkv& qkv) {
    if (qkv.m() != qkv.n())
        throw EngineError(ErrorCode::InvalidArgument, variant + " needs as many keys as queries (self-attention); got n = " +
                                                          std::to_string(qkv.n()) + " queries and m = " +
                                                          std::to_string(qkv.m()) + " keys");
}

std::vector<std::uint8_t> selfQueryPadding(const Qkv& qkv) {
    if (qkv.m() != qkv.n()) return {};
    return qkv.keyPadding;
}

}  // namespace attnscope::engine
