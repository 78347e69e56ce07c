// The Star-Transformer's connectivity (Guo et al. 2019; VARIANTS.md): each token attends its ring
// neighbours i-1, i, i+1 (the ring closed when cyclic; fastNLP leaves it open) and the relay, key
// n: the mean of the keys.

#include "attention/variants/star/star_pattern.h"

#include "base/api/param_access.h"

#include <algorithm>

namespace attnscope::engine {

BlockPattern starPattern(const ParamValues& params, std::int64_t heads, std::int64_t n) {
    const bool cyclic = paramBool(params, "cyclic") && n > 2;  // n <= 2: the ring is closed already
    DensePlan plan;
    for (std::int64_t i0 = 0; i0 < n; i0 += kPatternRowsPerGroup) {
        const std::int64_t i1 = std::min(n, i0 + kPatternRowsPerGroup);
        const std::int64_t k0 = std::max<std::int64_t>(0, i0 - 1), k1 = std::min(n, i1 + 1);
        plan.beginGroup(i0, 1, i1 - i0);
        plan.addSegment(k0, 1, k1 - k0, /*masked=*/true, PatternReason::Ring);
        plan.addSegment(n, 1, 1, false, PatternReason::Relay);
    }
    if (cyclic) {  // the ring's two closing edges, merged into the rows' softmax
        plan.singleCover = false;
        plan.beginGroup(0, 1, 1);
        plan.addSegment(n - 1, 1, 1, false, PatternReason::Ring);
        plan.beginGroup(n - 1, 1, 1);
        plan.addSegment(0, 1, 1, false, PatternReason::Ring);
    }
    plan.range = [](std::int64_t i, std::int64_t, const DenseSegment& seg, std::int64_t& lo, std::int64_t& hi) {
        lo = i - 1 - seg.keyStart;
        hi = i + 2 - seg.keyStart;
    };
    BlockPattern pattern;
    pattern.n = n;
    pattern.m = n + 1;
    pattern.heads.assign(static_cast<std::size_t>(heads), std::make_shared<const DensePlan>(std::move(plan)));
    return pattern;
}

}  // namespace attnscope::engine
