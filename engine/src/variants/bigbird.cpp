// `bigbird`: BigBird block-sparse attention (Zaheer et al. 2020) in the block form every kernel
// implements (VARIANTS.md §5): global first/last blocks, a 3-block window and r random blocks
// per query block, duplicates counted; plus the paper's element graph as a second mask.

#include "qkv/seeded_normal.h"
#include "variants/padded_result.h"
#include "variants/sparse_kernel.h"

#include <ATen/Parallel.h>

#include <emmintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

namespace attnscope::engine {
namespace {

// Copies with non-temporal (cache-bypassing) stores for the 16-byte-aligned bulk. The listed
// pattern is written once per run and not read again by the fast path; streaming it to memory
// saves reading every destination line first (a plain store's read-for-ownership). The source
// must not have been written with streaming stores itself (it would be read back from memory).
// Callers issue _mm_sfence() before other threads read the destination.
void streamCopy(void* dstv, const void* srcv, std::size_t bytes) {
    auto* dst = static_cast<char*>(dstv);
    const auto* src = static_cast<const char*>(srcv);
    const std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(dst) & 15u)) & 15u;
    if (bytes < head + 64) {
        std::memcpy(dst, src, bytes);
        return;
    }
    std::memcpy(dst, src, head);
    dst += head;
    src += head;
    bytes -= head;
    for (; bytes >= 16; bytes -= 16, dst += 16, src += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
    std::memcpy(dst, src, bytes);
}

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
        m_info.params.push_back(boolParam("pad", false,
                                          "When b does not divide n (ETC: n - extra_global): pad the end with masked "
                                          "tokens to the next multiple and report the real tokens (false: refuse)."));
    }

    const VariantInfo& info() const override { return m_info; }
    bool checksQkvValues() const override { return true; }  // in the sparse kernel (runSparseKernel)

    std::uint64_t denseBytes(const ProblemShape& s, const ParamValues& params, bool keepWeights) const override {
        const double b = static_cast<double>(paramInt(params, "block"));
        const double r = static_cast<double>(paramInt(params, "random"));
        const double g = paramChoice(params, "form") == "etc" ? static_cast<double>(paramInt(params, "extra_global")) : 2 * b;
        const double perHead = static_cast<double>(s.n) * ((5 + r) * b + g) + g * static_cast<double>(s.m);
        return 2 * sparsePatternBytes(s, perHead, true, keepWeights);  // computed pattern + element graph
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;

private:
    /// run() on the input padded at the end to `padded` tokens (parameter `pad`), cropped back.
    AttentionResult runPadded(const Qkv& qkv, const ParamValues& params, RunContext& ctx, std::int64_t padded) const;

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
    if (longLen % b != 0) {
        if (paramBool(params, "pad")) return runPadded(qkv, params, ctx, g + (longLen + b - 1) / b * b);
        throw EngineError(ErrorCode::InvalidArgument,
                          "bigbird: the block form needs " + std::string(etc ? "n - extra_global" : "n") + " = " +
                              std::to_string(longLen) + " to be a multiple of parameter 'block' = " + std::to_string(b) +
                              " (set pad=true to pad the end with masked tokens, or choose a block that divides it)");
    }
    const std::int64_t nb = longLen / b;
    const std::int64_t minBlocks = etc ? r + 3 : std::max<std::int64_t>(4, r > 0 ? r + 5 : 4);
    if (nb < minBlocks)
        throw EngineError(ErrorCode::InvalidArgument, "bigbird: " + std::to_string(nb) + " blocks of " + std::to_string(b) +
                                                          " are too few for random = " + std::to_string(r) + " (needs at least " +
                                                          std::to_string(minBlocks) + " blocks: use a smaller block or random)");

    // Random blocks: ITC [heads, nb-2, r] for query blocks 1..nb-2; ETC [heads, nb, r].
    const std::int64_t randRows = etc ? nb : nb - 2;
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

    // The computed pattern. Row lengths are known up front (a global row lists every key, a row of
    // query block qb lists g + b · (its blocks, duplicates counted or not) keys), so the row
    // pointers come first and then every head fills its own rows, heads in parallel, straight into
    // recycled storage: the first row of a query block block by block in key order (a block
    // listed c > 1 times gives each of its keys c consecutive entries, exactly as a stable sort of
    // the listed entries would; set semantics keep the first-listed reason), the other rows of the
    // block, and the global rows, as copies of the row before them.
    ctx.beginStage("pattern");  // listing the pattern (counters.stages)
    const std::int64_t qbFirst = etc ? 0 : 1, qbEnd = etc ? nb : nb - 1;  // query blocks with a block list
    std::vector<std::vector<BlockRef>> sortedRefs(static_cast<std::size_t>(heads * nb));
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t qb = qbFirst; qb < qbEnd; ++qb) {
            auto& refs = sortedRefs[static_cast<std::size_t>(h * nb + qb)];
            refs = blockList(h, qb);
            std::stable_sort(refs.begin(), refs.end(), [](const BlockRef& a, const BlockRef& c) { return a.block < c.block; });
            if (!keepDuplicates)  // one entry per block, the first-listed reason
                refs.erase(std::unique(refs.begin(), refs.end(),
                                       [](const BlockRef& a, const BlockRef& c) { return a.block == c.block; }),
                           refs.end());
        }
    SparsePattern pattern;
    pattern.rows = n;
    pattern.cols = n;
    pattern.perHead = true;
    pattern.rowPtr = ctx.pool().take<std::int64_t>(static_cast<std::size_t>(heads * n + 1), true);
    pattern.rowPtr.resize(static_cast<std::size_t>(heads * n + 1));
    pattern.rowPtr[0] = 0;
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t len =
                isGlobalRow(i) ? n
                               : g + b * static_cast<std::int64_t>(sortedRefs[static_cast<std::size_t>(h * nb + (i - g) / b)].size());
            pattern.rowPtr[static_cast<std::size_t>(h * n + i + 1)] = pattern.rowPtr[static_cast<std::size_t>(h * n + i)] + len;
        }
    const auto total = static_cast<std::size_t>(pattern.rowPtr.back());
    pattern.colIdx = ctx.pool().take<std::int32_t>(total, true);
    pattern.colIdx.resize(total);
    pattern.reason = ctx.pool().take<std::uint8_t>(total, true);
    pattern.reason.resize(total);
    std::atomic<std::int64_t> nextHead{0};  // heads claimed one at a time (a busy machine)
    at::parallel_for(0, std::min<std::int64_t>(heads, at::get_num_threads()), 1, [&](std::int64_t, std::int64_t) {
        const std::int32_t* runCol = nullptr;  // first row of the current run of equal rows
        const std::uint8_t* runWhy = nullptr;
        for (std::int64_t h = nextHead.fetch_add(1); h < heads; h = nextHead.fetch_add(1))
            for (std::int64_t i = 0; i < n; ++i) {
                const auto e0 = static_cast<std::size_t>(pattern.rowPtr[static_cast<std::size_t>(h * n + i)]);
                const auto e1 = static_cast<std::size_t>(pattern.rowPtr[static_cast<std::size_t>(h * n + i + 1)]);
                std::int32_t* col = pattern.colIdx.data() + e0;
                std::uint8_t* why = pattern.reason.data() + e0;
                // rows of one query block (and all global rows) list the same keys: copy the last row
                const bool sameAsPrevious = i > 0 && (isGlobalRow(i) ? isGlobalRow(i - 1)
                                                                     : !isGlobalRow(i - 1) && (i - g) / b == (i - 1 - g) / b);
                if (sameAsPrevious) {  // from the run's first row, which plain stores left in cache
                    const std::size_t len = e1 - e0;
                    streamCopy(col, runCol, len * sizeof(std::int32_t));
                    streamCopy(why, runWhy, len);
                    continue;
                }
                runCol = col;
                runWhy = why;
                if (isGlobalRow(i)) {
                    for (std::int64_t j = 0; j < n; ++j) col[j] = static_cast<std::int32_t>(j);
                    std::memset(why, static_cast<int>(PatternReason::Global), static_cast<std::size_t>(n));
                    continue;
                }
                std::size_t e = 0;
                for (std::int64_t j = 0; j < g; ++j, ++e) {
                    col[e] = static_cast<std::int32_t>(j);
                    why[e] = static_cast<std::uint8_t>(PatternReason::Global);
                }
                const auto& refs = sortedRefs[static_cast<std::size_t>(h * nb + (i - g) / b)];
                for (std::size_t s0 = 0; s0 < refs.size();) {
                    std::size_t s1 = s0 + 1;
                    while (s1 < refs.size() && refs[s1].block == refs[s0].block) ++s1;
                    const std::int64_t k0 = g + refs[s0].block * b;
                    for (std::int64_t j = k0; j < k0 + b; ++j)
                        for (std::size_t t = s0; t < s1; ++t, ++e) {
                            col[e] = static_cast<std::int32_t>(j);
                            why[e] = static_cast<std::uint8_t>(refs[t].reason);
                        }
                    s0 = s1;
                }
                if (e != e1 - e0)
                    throw EngineError(ErrorCode::Internal, "bigbird: row length mismatch while listing the pattern");
            }
        _mm_sfence();  // the streamed rows are visible to every thread from here on
    });

    // The paper's element graph: global tokens (ITC: first and last block; ETC: the g extras),
    // a window |i - j| <= floor(3b/2) among the other tokens, and the keys of the drawn blocks.
    // A diagnostic for the mask view, as large as the computed pattern: built only when the
    // caller asked for weights (RunRequest::keepWeights), i.e. when the result is for viewing;
    // a benchmark or batch run without weights gets no element_* diagnostics.
    const bool wantElementGraph = ctx.keepPatternWeights || ctx.keepWeights;
    const std::int64_t globalRows = etc ? g : 2 * b;
    SparsePattern graph;
    if (wantElementGraph) {
        PatternBuilder element(ctx.pool(), n, n, true, heads,
                               heads * ((n - globalRows) * ((3 + r) * b + 2 * b + g + 1) + globalRows * n));
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
        graph = element.finish();
    }

    ctx.endStage();

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
            plan.beginGroup(g + qb * b, 1, b);
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
    runPatternVariant(qkv, std::move(pattern), tiles, ctx, result, densePlan);

    result.diagnostics["rand_attn"] = std::move(randAttn);
    result.diagnostics["rand_hits"] = std::move(randHits);
    if (wantElementGraph) {
        PlainTensor rowPtr;
        rowPtr.dtype = DType::I64;
        rowPtr.shape = {static_cast<std::int64_t>(graph.rowPtr.size())};
        rowPtr.i64 = std::move(graph.rowPtr);
        result.diagnostics["element_row_ptr"] = std::move(rowPtr);
        PlainTensor cols;
        cols.dtype = DType::I32;
        cols.shape = {graph.nnz()};
        cols.i32 = std::move(graph.colIdx);
        result.diagnostics["element_col_idx"] = std::move(cols);
        PlainTensor reasons;
        reasons.dtype = DType::U8;
        reasons.shape = {static_cast<std::int64_t>(graph.reason.size())};
        reasons.u8 = std::move(graph.reason);
        result.diagnostics["element_reason"] = std::move(reasons);
    }
    return result;
}

AttentionResult BigBird::runPadded(const Qkv& qkv, const ParamValues& params, RunContext& ctx,
                                   std::int64_t padded) const {
    const std::int64_t heads = qkv.heads(), n = qkv.n();
    ctx.checkQkvValuesNow();  // the request's own values (the padding rows are zeros)
    AttentionResult result = run(padQkv(qkv, padded - n), params, ctx);
    cropPaddedResult(result, n);
    // the element graph, a pattern of the padded sequence too
    if (auto rowPtr = result.diagnostics.find("element_row_ptr"); rowPtr != result.diagnostics.end()) {
        PlainTensor& cols = result.diagnostics.at("element_col_idx");
        PlainTensor& reasons = result.diagnostics.at("element_reason");
        SparsePattern graph;
        graph.rows = graph.cols = padded;
        graph.perHead = true;
        graph.rowPtr = std::move(rowPtr->second.i64);
        graph.colIdx = std::move(cols.i32);
        graph.reason = std::move(reasons.u8);
        cropPattern(graph, heads, n, nullptr, 1);
        const std::int64_t nnz = graph.nnz();
        rowPtr->second.shape = {static_cast<std::int64_t>(graph.rowPtr.size())};
        rowPtr->second.i64 = std::move(graph.rowPtr);
        cols.shape = {nnz};
        cols.i32 = std::move(graph.colIdx);
        reasons.shape = {nnz};
        reasons.u8 = std::move(graph.reason);
    }
    result.diagnostics["padded_length"] = PlainTensor::fromI64({1}, {padded});
    ctx.warn("padded " + std::to_string(n) + " tokens to " + std::to_string(padded) + " (a multiple of block " +
             std::to_string(paramInt(params, "block")) + "; the " + std::to_string(padded - n) +
             " padding tokens are masked and left out of the result; rand_attn counts the blocks of the padded sequence)");
    return result;
}

}  // namespace

std::unique_ptr<Variant> makeBigBird() { return std::make_unique<BigBird>(); }

}  // namespace attnscope::engine
