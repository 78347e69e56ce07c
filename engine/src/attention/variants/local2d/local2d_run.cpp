// `local2d`: the k × k neighbourhood of each grid cell (local2d_pattern.cpp) through the pattern
// kernel, never as an n x n matrix.

#include "attention/variants/local2d/local2d_pattern.h"
#include "attention/variants/shared/pattern_variant.h"

#include <algorithm>

namespace attnscope::engine {
namespace {

class Local2d final : public Variant {
public:
    bool checksQkvValues() const override { return true; }  // in the pattern kernel's copies

    double scoredKeysPerQuery(const ProblemShape& s, const ParamValues& params) const override {
        const double k = static_cast<double>(paramInt(params, "window"));
        return std::min(static_cast<double>(s.m), k * k + static_cast<double>(paramInt(params, "prefix")));
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        const double k = static_cast<double>(paramInt(params, "window"));
        return patternRunBytes(s, k * (k + kGroupColumns) + static_cast<double>(paramInt(params, "prefix")));
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override {
        requireSelfAttention(info().id, qkv);
        const BlockPattern pattern = local2dPattern(params, qkv.heads(), qkv.n());
        AttentionResult result = startResult(info().id, params, qkv);
        runPatternVariant(qkv, pattern, ctx, result);
        return result;
    }

private:
    // A group reads its columns ± h on each of the k rows (local2d_pattern.cpp's kColumnsPerGroup).
    static constexpr double kGroupColumns = 64;
};

}  // namespace

namespace variants::local2d {
std::unique_ptr<Variant> kernel() { return std::make_unique<Local2d>(); }
}  // namespace variants::local2d

}  // namespace attnscope::engine
