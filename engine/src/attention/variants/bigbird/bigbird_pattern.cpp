// BigBird's block-sparse pattern (Zaheer et al. 2020; VARIANTS.md §5) in the block form every
// reference kernel implements: ITC: the first and last block global (they attend, and are
// attended by, every key), a 3-block window and r random blocks per query block; ETC: g extra
// global tokens in front. A random block that lands on the window is listed twice and counts
// twice (count_duplicates, as the references) or once (set semantics).

#include "attention/variants/bigbird/bigbird_pattern.h"

#include "base/api/engine_error.h"
#include "base/api/param_access.h"

#include <algorithm>
#include <string>

namespace attnscope::engine {
namespace {

struct BlockRef {
    std::int64_t block;
    PatternReason reason;
};

}  // namespace

BigBirdBlocks bigbirdBlocks(const ParamValues& params, std::int64_t n) {
    BigBirdBlocks s;
    s.block = paramInt(params, "block");
    s.random = paramInt(params, "random");
    s.etc = paramChoice(params, "form") == "etc";
    s.globalTokens = s.etc ? paramInt(params, "extra_global") : 0;
    if (s.globalTokens >= n)
        throw EngineError(ErrorCode::InvalidArgument, "bigbird: parameter 'extra_global' must be in [0, n-1] = [0, " +
                                                          std::to_string(n - 1) + "], got " + std::to_string(s.globalTokens));
    const std::int64_t longLen = n - s.globalTokens;
    if (longLen % s.block != 0)
        throw EngineError(ErrorCode::InvalidArgument,
                          "bigbird: the block form needs " + std::string(s.etc ? "n - extra_global" : "n") + " = " +
                              std::to_string(longLen) + " to be a multiple of parameter 'block' = " + std::to_string(s.block) +
                              " (set pad=true to pad the end with masked tokens, or choose a block that divides it)");
    s.blocks = longLen / s.block;
    const std::int64_t minBlocks = s.etc ? s.random + 3 : std::max<std::int64_t>(4, s.random > 0 ? s.random + 5 : 4);
    if (s.blocks < minBlocks)
        throw EngineError(ErrorCode::InvalidArgument, "bigbird: " + std::to_string(s.blocks) + " blocks of " +
                                                          std::to_string(s.block) + " are too few for random = " +
                                                          std::to_string(s.random) + " (needs at least " +
                                                          std::to_string(minBlocks) + " blocks: use a smaller block or random)");
    return s;
}

std::int64_t bigbirdPaddedLength(const ParamValues& params, std::int64_t n) {
    const std::int64_t b = paramInt(params, "block");
    const std::int64_t g = paramChoice(params, "form") == "etc" ? paramInt(params, "extra_global") : 0;
    if (g >= n || (n - g) % b == 0) return n;
    return g + (n - g + b - 1) / b * b;
}

// Per head: one group per query block against its key blocks, listed with their duplicates
// exactly as the pattern counts them (runs of consecutive blocks of one reason are one segment);
// the global rows against every key.
BlockPattern bigbirdPattern(const ParamValues& params, std::int64_t heads, std::int64_t n, const PlainTensor& randAttn) {
    const BigBirdBlocks s = bigbirdBlocks(params, n);
    const bool keepDuplicates = paramBool(params, "count_duplicates");
    const std::int64_t b = s.block, r = s.random, g = s.globalTokens, nb = s.blocks;
    const bool etc = s.etc;
    const std::int64_t randRows = s.randomRows();
    if (randAttn.dtype != DType::I64 || randAttn.shape != std::vector<std::int64_t>{heads, randRows, r})
        throw EngineError(ErrorCode::InvalidInput, "bigbird: rand_attn must be I64 [" + std::to_string(heads) + ", " +
                                                       std::to_string(randRows) + ", " + std::to_string(r) + "]");
    for (std::int64_t v : randAttn.i64)
        if (v < 0 || v >= nb)
            throw EngineError(ErrorCode::InvalidInput, "bigbird: rand_attn holds block " + std::to_string(v) +
                                                           " outside [0, " + std::to_string(nb) + ")");
    // Key-block list of a query block (VARIANTS.md §5): window and global first, random last, so a
    // stable sort keeps a duplicated block's window (or global) reason first.
    const auto blockList = [&](std::int64_t h, std::int64_t qb) {
        std::vector<BlockRef> list;
        if (!etc) list.push_back({0, PatternReason::Global});
        for (std::int64_t c = std::max<std::int64_t>(qb - 1, etc ? 0 : 1); c <= std::min(qb + 1, etc ? nb - 1 : nb - 2); ++c)
            list.push_back({c, PatternReason::Local});
        if (!etc) list.push_back({nb - 1, PatternReason::Global});
        for (std::int64_t t = 0; t < r; ++t)
            list.push_back({randAttn.i64[static_cast<std::size_t>((h * randRows + (etc ? qb : qb - 1)) * r + t)],
                            PatternReason::Random});
        std::stable_sort(list.begin(), list.end(), [](const BlockRef& a, const BlockRef& c) { return a.block < c.block; });
        if (!keepDuplicates)  // one entry per block, the first-listed reason
            list.erase(std::unique(list.begin(), list.end(),
                                   [](const BlockRef& a, const BlockRef& c) { return a.block == c.block; }),
                       list.end());
        return list;
    };
    BlockPattern pattern;
    pattern.n = pattern.m = n;
    for (std::int64_t h = 0; h < heads; ++h) {
        DensePlan plan;
        const auto addGlobalRows = [&](std::int64_t r0, std::int64_t r1) {
            for (std::int64_t i0 = r0; i0 < r1; i0 += kPatternRowsPerGroup) {
                plan.beginGroup(i0, 1, std::min(kPatternRowsPerGroup, r1 - i0));
                plan.addSegment(0, 1, n, false, PatternReason::Global);
            }
        };
        addGlobalRows(0, etc ? g : b);
        for (std::int64_t qb = etc ? 0 : 1; qb < (etc ? nb : nb - 1); ++qb) {
            const auto refs = blockList(h, qb);
            plan.beginGroup(g + qb * b, 1, b);
            if (g > 0) plan.addSegment(0, 1, g, false, PatternReason::Global);
            for (std::size_t t0 = 0; t0 < refs.size();) {
                std::size_t t1 = t0 + 1;
                while (t1 < refs.size() && refs[t1].block == refs[t1 - 1].block + 1 && refs[t1].reason == refs[t0].reason) ++t1;
                plan.addSegment(g + refs[t0].block * b, 1, (refs[t1 - 1].block - refs[t0].block + 1) * b, false,
                                refs[t0].reason);
                t0 = t1;
            }
        }
        if (!etc) addGlobalRows(n - b, n);
        pattern.heads.push_back(std::make_shared<const DensePlan>(std::move(plan)));
    }
    return pattern;
}

}  // namespace attnscope::engine
