// `bigbird`: BigBird block-sparse attention (Zaheer et al. 2020) in the block form every kernel
// implements (VARIANTS.md §5; pattern/bigbird_pattern.cpp): global first/last blocks, a 3-block
// window and r random blocks per query block, duplicates counted. The random blocks are drawn
// here, from the seed; the paper's element graph derives from them (weights/bigbird_element_graph).

#include "attention/variants/bigbird/bigbird_pattern.h"
#include "base/runtime/seeded_normal.h"
#include "attention/variants/shared/padded_result.h"
#include "attention/variants/shared/pattern_variant.h"

#include <algorithm>
#include <cstdint>

namespace attnscope::engine {
namespace {

// Diagnostic `rand_hits` values: where a random block landed.
constexpr std::uint8_t kHitNone = 0, kHitWindow = 1, kHitGlobal = 2;
// Stream id of the random-block draws, mixed with the request seed and the head.
constexpr std::uint64_t kRandomStream = 0xB16B1D0000ull;

// r distinct values drawn uniformly from `candidates` (partial Fisher-Yates on our generator).
std::vector<std::int64_t> drawDistinct(std::vector<std::int64_t> candidates, std::int64_t r, SeededNormal& gen) {
    std::vector<std::int64_t> out;
    for (std::int64_t t = 0; t < r; ++t) {
        const auto remaining = static_cast<std::uint64_t>(candidates.size()) - static_cast<std::uint64_t>(t);
        const auto pick = static_cast<std::size_t>(t) + static_cast<std::size_t>(gen.nextU64() % remaining);
        std::swap(candidates[static_cast<std::size_t>(t)], candidates[pick]);
        out.push_back(candidates[static_cast<std::size_t>(t)]);
    }
    return out;
}

std::vector<std::int64_t> blockRange(std::int64_t from, std::int64_t to) {  // [from, to)
    std::vector<std::int64_t> out;
    for (std::int64_t b = from; b < to; ++b) out.push_back(b);
    return out;
}

// google-research bigbird_block_rand_mask (the "paper plan"), drawing from all middle blocks
// (last_idx = -1): row i excludes its window except for the last two middle rows, which
// sample from every middle block and can therefore hit their window (counted twice).
std::vector<std::int64_t> itcCandidates(std::int64_t i, std::int64_t nb) {
    if (i == 1) return blockRange(3, nb - 1);
    if (i == 2) return blockRange(4, nb - 1);
    if (i == nb - 3 || i == nb - 2) return blockRange(1, nb - 1);
    std::vector<std::int64_t> out = blockRange(1, i - 1);
    for (std::int64_t b = i + 2; b < nb - 1; ++b) out.push_back(b);
    return out;
}

class BigBird final : public Variant {
public:
    bool checksQkvValues() const override { return true; }  // in the pattern kernel's copies

    double scoredKeysPerQuery(const ProblemShape& s, const ParamValues& params) const override {
        const double b = static_cast<double>(paramInt(params, "block")), r = static_cast<double>(paramInt(params, "random"));
        const double g = paramChoice(params, "form") == "etc" ? static_cast<double>(paramInt(params, "extra_global")) : 2 * b;
        return std::min(static_cast<double>(s.m), (3 + r) * b + 2 * g);
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        const double b = static_cast<double>(paramInt(params, "block"));
        const double r = static_cast<double>(paramInt(params, "random"));
        const double g = paramChoice(params, "form") == "etc" ? static_cast<double>(paramInt(params, "extra_global")) : 2 * b;
        // global rows attend every key: their groups' scores are the widest scratch
        return patternRunBytes(s, std::max((5 + r) * b + g, static_cast<double>(s.m)));
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;

private:
    /// run() on the input padded at the end to `padded` tokens (parameter `pad`), cropped back.
    AttentionResult runPadded(const Qkv& qkv, const ParamValues& params, RunContext& ctx, std::int64_t padded) const;
};

AttentionResult BigBird::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    requireSelfAttention(info().id, qkv);
    const std::int64_t heads = qkv.heads(), n = qkv.n();
    if (const std::int64_t padded = bigbirdPaddedLength(params, n); padded != n && paramBool(params, "pad"))
        return runPadded(qkv, params, ctx, padded);
    const BigBirdBlocks blocks = bigbirdBlocks(params, n);
    const std::int64_t r = blocks.random, nb = blocks.blocks;
    const bool etc = blocks.etc;

    // Random blocks: ITC [heads, nb-2, r] for query blocks 1..nb-2; ETC [heads, nb, r].
    const std::int64_t randRows = blocks.randomRows();
    PlainTensor randAttn = ctx.pool().zeros(DType::I64, {heads, randRows, r});
    PlainTensor randHits = ctx.pool().zeros(DType::U8, {heads, randRows, r});
    for (std::int64_t h = 0; h < heads; ++h) {
        SeededNormal gen(mixSeed(ctx.seed, kRandomStream + static_cast<std::uint64_t>(h)));
        for (std::int64_t t = 0; t < randRows; ++t) {
            const std::int64_t qb = etc ? t : t + 1;
            std::vector<std::int64_t> candidates;
            if (etc) {
                for (std::int64_t c = 0; c < nb; ++c)
                    if (std::abs(c - qb) > 1) candidates.push_back(c);
            } else {
                candidates = itcCandidates(qb, nb);
            }
            const auto drawn = drawDistinct(candidates, r, gen);
            for (std::int64_t s = 0; s < r; ++s) {
                const std::size_t at = static_cast<std::size_t>((h * randRows + t) * r + s);
                const std::int64_t blk = drawn[static_cast<std::size_t>(s)];
                randAttn.i64[at] = blk;
                const bool global = !etc && (blk == 0 || blk == nb - 1);
                randHits.u8[at] = global ? kHitGlobal : std::abs(blk - qb) <= 1 ? kHitWindow : kHitNone;
            }
        }
    }
    const BlockPattern pattern = bigbirdPattern(params, heads, n, randAttn);
    AttentionResult result = startResult(info().id, params, qkv);
    runPatternVariant(qkv, pattern, ctx, result);
    result.diagnostics["rand_attn"] = std::move(randAttn);
    result.diagnostics["rand_hits"] = std::move(randHits);
    return result;
}

AttentionResult BigBird::runPadded(const Qkv& qkv, const ParamValues& params, RunContext& ctx,
                                   std::int64_t padded) const {
    const std::int64_t n = qkv.n();
    ctx.checkQkvValuesNow();  // the request's own values (the padding rows are zeros)
    AttentionResult result = run(padQkv(qkv, padded - n), params, ctx);
    cropPaddedResult(result, n);
    result.diagnostics["padded_length"] = PlainTensor::fromI64({1}, {padded});
    ctx.warn("padded " + std::to_string(n) + " tokens to " + std::to_string(padded) + " (a multiple of block " +
             std::to_string(paramInt(params, "block")) + "; the " + std::to_string(padded - n) +
             " padding tokens are masked and left out of the result; rand_attn counts the blocks of the padded sequence)");
    return result;
}

}  // namespace

namespace variants::bigbird {
std::unique_ptr<Variant> kernel() { return std::make_unique<BigBird>(); }
}  // namespace variants::bigbird

}  // namespace attnscope::engine
