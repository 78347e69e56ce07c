// `longformer`: Longformer attention (Beltagy et al. 2020): a (dilated) sliding window of w keys
// per side plus symmetric global tokens (pattern/longformer_pattern.cpp), on the pattern kernel
// (linear in n).

#include "pattern/pattern_variants.h"
#include "variants/pattern_variant.h"

#include <limits>

namespace attnscope::engine {
namespace {

class Longformer final : public Variant {
public:
    Longformer() {
        m_info.id = "longformer";
        m_info.name = "Longformer";
        m_info.paper = "Beltagy et al. 2020, Longformer: The Long-Document Transformer, arXiv 2004.05150";
        m_info.summary = "Sliding window i-w*d .. i+w*d in steps of d, plus global tokens that attend to and are "
                         "attended by every token.";
        m_info.params.push_back(intParam("window", 4, 0, 1 << 24,
                                         "Keys per side w (one-sided, as allenai; HF attention_window = 2w). Below n."));
        m_info.params.push_back(intListParam("dilation", {1}, 1, 1 << 20,
                                             "Dilation d: one value for all heads, or one value per head."));
        m_info.params.push_back(intListParam("global", {}, 0, std::numeric_limits<std::int32_t>::max(),
                                             "Global token indices (distinct, below n)."));
        m_info.params.push_back(boolParam("causal", false, "Only keys j <= i, global entries included."));
    }

    const VariantInfo& info() const override { return m_info; }
    bool checksQkvValues() const override { return true; }  // in the pattern kernel's copies

    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        return patternRunBytes(s, 2.0 * static_cast<double>(paramInt(params, "window")) + 1.0 +
                                      static_cast<double>(paramIntList(params, "global").size()));
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override {
        requireSelfAttention(m_info.id, qkv);
        const BlockPattern pattern = longformerPattern(params, qkv.heads(), qkv.n());
        AttentionResult result = startResult(m_info.id, params, qkv);
        runPatternVariant(qkv, pattern, ctx, result);
        return result;
    }

private:
    VariantInfo m_info;
};

}  // namespace

std::unique_ptr<Variant> makeLongformer() { return std::make_unique<Longformer>(); }

}  // namespace attnscope::engine
