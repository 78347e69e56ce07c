// `longformer`: Longformer attention (Beltagy et al. 2020): a (dilated) sliding window of w keys
// per side plus symmetric global tokens (pattern/longformer_pattern.cpp), on the pattern kernel
// (linear in n).

#include "attention/variants/longformer/longformer_pattern.h"
#include "attention/variants/shared/pattern_variant.h"

#include <limits>

namespace attnscope::engine {
namespace {

class Longformer final : public Variant {
public:
    bool checksQkvValues() const override { return true; }  // in the pattern kernel's copies

    double scoredKeysPerQuery(const ProblemShape& s, const ParamValues& params) const override {
        // (global rows score every key, but there are few of them)
        const double global = static_cast<double>(paramIntList(params, "global").size());
        return std::min(static_cast<double>(s.m), 2.0 * static_cast<double>(paramInt(params, "window")) + 1.0 + 2.0 * global);
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        return patternRunBytes(s, 2.0 * static_cast<double>(paramInt(params, "window")) + 1.0 +
                                      static_cast<double>(paramIntList(params, "global").size()));
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override {
        requireSelfAttention(info().id, qkv);
        // A window reaching past the text is the whole text: it runs as w = n - 1, with a notice,
        // and the result records the window used.
        ParamValues used = params;
        if (const std::int64_t window = paramInt(params, "window"); window >= qkv.n()) {
            ctx.warn("window = " + std::to_string(window) + " reaches past the " + std::to_string(qkv.n()) +
                     " tokens; using window = " + std::to_string(qkv.n() - 1));
            used["window"] = qkv.n() - 1;
        }
        const BlockPattern pattern = longformerPattern(used, qkv.heads(), qkv.n());
        AttentionResult result = startResult(info().id, used, qkv);
        runPatternVariant(qkv, pattern, ctx, result);
        return result;
    }
};

}  // namespace

namespace variants::longformer {
std::unique_ptr<Variant> kernel() { return std::make_unique<Longformer>(); }
}  // namespace variants::longformer

}  // namespace attnscope::engine
