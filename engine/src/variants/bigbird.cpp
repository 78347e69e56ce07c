// `bigbird`: BigBird block-sparse attention (Zaheer et al. 2020) in the block form every kernel
// implements (VARIANTS.md §5): global first/last blocks, a 3-block window and r random blocks
// per query block, duplicates counted; plus the paper's element graph as a second mask.

#include "qkv/seeded_normal.h"
#include "variants/sparse_kernel.h"

#include <algorithm>

namespace attnscope::engine {
namespace {

// Diagnostic `rand_hits` values: where a random block landed.
constexpr std::uint8_t kHitNone = 0, kHitWindow = 1, kHitGlobal = 2;
// Stream id of the random-block draws, mixed with the request seed and the head.
constexpr std::uint64_t kRandomStream = 0xB16B1D0000ull;

struct BlockRef {
    std::int64_t block;
    PatternReason reason;
};

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
    BigBird() {
        m_info.id = "bigbird";
        m_info.name = "BigBird (block sparse)";
        m_info.paper = "Zaheer et al. 2020, Big Bird: Transformers for Longer Sequences, arXiv 2007.14062";
        m_info.summary = "Blocks of b: first and last block global, a 3-block window and r random blocks per query "
                         "block (ITC), or extra global tokens prepended (ETC).";
        m_info.params.push_back(intParam("block", 4, 1, 1 << 20, "Block size b; n (ETC: n - extra_global) must be a multiple."));
        m_info.params.push_back(intParam("random", 1, 0, 64, "Random key blocks r per query block (drawn from the seed)."));
        m_info.params.push_back(boolParam("count_duplicates", true,
                                          "A block listed twice (random hitting the window) counts twice in the softmax, "
                                          "as the reference kernels do; false = set semantics."));
        m_info.params.push_back(choiceParam("form", "itc", {"itc", "etc"},
                                            "itc: global tokens are the first and last block; etc: the first "
                                            "extra_global positions act as extra global tokens."));
        m_info.params.push_back(intParam("extra_global", 2, 0, 1 << 20, "ETC only: number of extra global tokens g."));
    }

    const VariantInfo& info() const override { return m_info; }

    std::uint64_t denseBytes(const ProblemShape& s, const ParamValues& params, bool keepWeights) const override {
        const double b = static_cast<double>(paramInt(params, "block"));
        const double r = static_cast<double>(paramInt(params, "random"));
        const double g = paramChoice(params, "form") == "etc" ? static_cast<double>(paramInt(params, "extra_global")) : 2 * b;
        const double perHead = static_cast<double>(s.n) * ((5 + r) * b + g) + g * static_cast<double>(s.m);
        return 2 * sparsePatternBytes(s, perHead, true, keepWeights);  // computed pattern + element graph
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;

private:
    VariantInfo m_info;
};

AttentionResult BigBird::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    requireSelfAttention(m_info.id, qkv);
    const std::int64_t heads = qkv.heads(), n = qkv.n();
    const std::int64_t b = paramInt(params, "block"), r = paramInt(params, "random");
    const bool etc = paramChoice(params, "form") == "etc";
    const bool keepDuplicates = paramBool(params, "count_duplicates");
    const std::int64_t g = etc ? paramInt(params, "extra_global") : 0;  // extra global tokens [0, g)
    if (g >= n)
        throw EngineError(ErrorCode::InvalidArgument, "bigbird: parameter 'extra_global' must be in [0, n-1] = [0, " +
                                                          std::to_string(n - 1) + "], got " + std::to_string(g));
    const std::int64_t longLen = n - g;
    if (longLen % b != 0)
        throw EngineError(ErrorCode::InvalidArgument,
                          "bigbird: the block form needs " + std::string(etc ? "n - extra_global" : "n") + " = " +
                              std::to_string(longLen) + " to be a multiple of parameter 'block' = " + std::to_string(b) +
                              " (pad the input or choose a block that divides it)");
    const std::int64_t nb = longLen / b;
    const std::int64_t minBlocks = etc ? r + 3 : std::max<std::int64_t>(4, r > 0 ? r + 5 : 4);
    if (nb < minBlocks)
        throw EngineError(ErrorCode::InvalidArgument, "bigbird: " + std::to_string(nb) + " blocks of " + std::to_string(b) +
                                                          " are too few for random = " + std::to_string(r) + " (needs at least " +
                                                          std::to_string(minBlocks) + " blocks: use a smaller block or random)");

    // Random blocks: ITC [heads, nb-2, r] for query blocks 1..nb-2; ETC [heads, nb, r].
    const std::int64_t randRows = etc ? nb : nb - 2;
    PlainTensor randAttn = PlainTensor::zeros(DType::I64, {heads, randRows, r});
    PlainTensor randHits = PlainTensor::zeros(DType::U8, {heads, randRows, r});
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
    const auto randOf = [&](std::int64_t h, std::int64_t qb, std::int64_t s) {
        return randAttn.i64[static_cast<std::size_t>((h * randRows + (etc ? qb : qb - 1)) * r + s)];
    };

    // Key-block list of a query block (VARIANTS.md §5), window and global first, random last;
    // empty for global rows (they attend every key).
    const auto blockList = [&](std::int64_t h, std::int64_t qb) {
        std::vector<BlockRef> list;
        if (!etc && (qb == 0 || qb == nb - 1)) return list;
        if (!etc) list.push_back({0, PatternReason::Global});
        for (std::int64_t c = std::max<std::int64_t>(qb - 1, etc ? 0 : 1); c <= std::min(qb + 1, etc ? nb - 1 : nb - 2); ++c)
            list.push_back({c, PatternReason::Local});
        if (!etc) list.push_back({nb - 1, PatternReason::Global});
        for (std::int64_t s = 0; s < r; ++s) list.push_back({randOf(h, qb, s), PatternReason::Random});
        return list;
    };
    const auto isGlobalRow = [&](std::int64_t i) { return etc ? i < g : (i < b || i >= n - b); };

    PatternBuilder builder(n, n, true, heads * n * ((5 + r) * b + g));
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t i = 0; i < n; ++i) {
            // rows of one query block (and all global rows) list the same keys: copy the last row
            const bool sameAsPrevious = i > 0 && (isGlobalRow(i) ? isGlobalRow(i - 1)
                                                                 : !isGlobalRow(i - 1) && (i - g) / b == (i - 1 - g) / b);
            if (sameAsPrevious) {
                builder.repeatLastRow();
                continue;
            }
            if (isGlobalRow(i)) {
                for (std::int64_t j = 0; j < n; ++j) builder.add(j, PatternReason::Global);
            } else {
                for (std::int64_t j = 0; j < g; ++j) builder.add(j, PatternReason::Global);
                for (const auto& ref : blockList(h, (i - g) / b))
                    for (std::int64_t j = g + ref.block * b; j < g + (ref.block + 1) * b; ++j) builder.add(j, ref.reason);
            }
            builder.endRow(keepDuplicates);
        }

    // The paper's element graph: global tokens (ITC: first and last block; ETC: the g extras),
    // a window |i - j| <= floor(3b/2) among the other tokens, and the keys of the drawn blocks.
    PatternBuilder element(n, n, true, heads * n * ((3 + r) * b + 2 * b + g));
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t i = 0; i < n; ++i) {
            if (isGlobalRow(i)) {
                for (std::int64_t j = 0; j < n; ++j) element.add(j, PatternReason::Global);
            } else {
                // the global keys (ETC: [0, g); ITC: the first and last block), without an O(n) scan
                for (std::int64_t j = 0; j < (etc ? g : b); ++j) element.add(j, PatternReason::Global);
                if (!etc)
                    for (std::int64_t j = n - b; j < n; ++j) element.add(j, PatternReason::Global);
                for (std::int64_t j = std::max(g, i - 3 * b / 2); j <= std::min(n - 1, i + 3 * b / 2); ++j)
                    element.add(j, PatternReason::Local);
                for (std::int64_t s = 0; s < r; ++s) {
                    const std::int64_t blk = randOf(h, (i - g) / b, s);
                    for (std::int64_t j = g + blk * b; j < g + (blk + 1) * b; ++j) element.add(j, PatternReason::Random);
                }
            }
            element.endRow(false);
        }
    SparsePattern graph = element.finish();

    AttentionResult result = startResult(m_info.id, params, qkv);
    const auto tiles = [&](int h, SparseTiles& t) {
        for (std::int64_t i0 = 0; i0 < n;) {
            // chunks never straddle a query block or the global rows
            const std::int64_t blockEnd = isGlobalRow(i0) ? (etc ? g : (i0 < b ? b : n)) : g + ((i0 - g) / b + 1) * b;
            const std::int64_t i1 = std::min({n, blockEnd, i0 + kSparseRowsPerTile});
            if (isGlobalRow(i0)) {
                t.addRange(i0, 1, i1 - i0, 0, 1, n);
            } else {
                if (g > 0) t.addRange(i0, 1, i1 - i0, 0, 1, g);
                std::vector<std::int64_t> blocks;
                for (const auto& ref : blockList(h, (i0 - g) / b)) blocks.push_back(ref.block);
                std::sort(blocks.begin(), blocks.end());
                blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
                for (std::size_t s = 0; s < blocks.size();) {  // consecutive blocks become one tile
                    std::size_t e = s + 1;
                    while (e < blocks.size() && blocks[e] == blocks[e - 1] + 1) ++e;
                    t.addRange(i0, 1, i1 - i0, g + blocks[s] * b, 1, (blocks[e - 1] - blocks[s] + 1) * b);
                    s = e;
                }
            }
            i0 = i1;
        }
    };
    // Fast path: one group per query block against its key blocks, listed with their
    // duplicates exactly as the pattern counts them; global rows against every key.
    const auto densePlan = [&](int h, DensePlan& plan) {
        const std::int64_t globalEnd = etc ? g : b;
        const auto addGlobalRows = [&](std::int64_t r0, std::int64_t r1) {
            for (std::int64_t i0 = r0; i0 < r1; i0 += kSparseRowsPerTile)
                plan.addGroup(i0, 1, std::min(kSparseRowsPerTile, r1 - i0), {DenseSegment{0, 1, n}}, 0);
        };
        addGlobalRows(0, globalEnd);
        std::vector<std::int64_t> blocks;
        for (std::int64_t qb = etc ? 0 : 1; qb < (etc ? nb : nb - 1); ++qb) {
            blocks.clear();
            for (const auto& ref : blockList(h, qb)) blocks.push_back(ref.block);
            std::sort(blocks.begin(), blocks.end());
            if (!keepDuplicates) blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
            plan.beginGroup(g + qb * b, 1, b, 0);
            if (g > 0) plan.addSegment(0, 1, g);
            for (std::size_t s = 0; s < blocks.size();) {  // runs of consecutive distinct blocks: one segment
                std::size_t e = s + 1;
                while (e < blocks.size() && blocks[e] == blocks[e - 1] + 1) ++e;
                plan.addSegment(g + blocks[s] * b, 1, (blocks[e - 1] - blocks[s] + 1) * b);
                s = e;
            }
        }
        if (!etc) addGlobalRows(n - b, n);
        return true;
    };
    runPatternVariant(qkv, builder.finish(), tiles, ctx, result, densePlan);

    result.diagnostics["rand_attn"] = std::move(randAttn);
    result.diagnostics["rand_hits"] = std::move(randHits);
    result.diagnostics["element_row_ptr"] = PlainTensor::fromI64({static_cast<std::int64_t>(graph.rowPtr.size())}, graph.rowPtr);
    PlainTensor cols;
    cols.dtype = DType::I32;
    cols.shape = {graph.nnz()};
    cols.i32 = std::move(graph.colIdx);
    result.diagnostics["element_col_idx"] = std::move(cols);
    result.diagnostics["element_reason"] = PlainTensor::fromU8({static_cast<std::int64_t>(graph.reason.size())}, graph.reason);
    return result;
}

}  // namespace

std::unique_ptr<Variant> makeBigBird() { return std::make_unique<BigBird>(); }

}  // namespace attnscope::engine
