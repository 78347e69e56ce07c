#include "variants/sparse_kernel.h"

#include "core/softmax_kernel.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace attnscope::engine {
namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
constexpr std::int32_t kUnowned = -1;
constexpr std::int32_t kFallback = -2;
// Progress is reported every this many tiles as well as between heads.
constexpr std::size_t kTilesPerCheckpoint = 256;

struct TileKeys {
    std::int64_t minKey = 0, maxKey = -1;
};

TileKeys tileKeyRange(const SparseTile& t, const std::vector<std::int32_t>& list) {
    if (t.listBegin >= 0) {
        if (t.listEnd <= t.listBegin) return {};
        return {list[static_cast<std::size_t>(t.listBegin)], list[static_cast<std::size_t>(t.listEnd - 1)]};
    }
    if (t.keyCount <= 0) return {};
    return {t.keyStart, t.keyStart + (t.keyCount - 1) * t.keyStep};
}

std::int64_t tileKeyCount(const SparseTile& t) { return t.listBegin >= 0 ? t.listEnd - t.listBegin : t.keyCount; }

// Calls f(tileRow, entry, keyIndexInTile) for every pattern entry (absolute index) in the tile.
// rowPtr points at this head's first row; pos maps a key to its index in a list tile (or -1).
template <class F>
void forEachTileEntry(const SparseTile& t, const std::vector<std::int32_t>& list, const std::int64_t* rowPtr,
                      const std::int32_t* col, const std::int32_t* pos, F&& f) {
    const TileKeys range = tileKeyRange(t, list);
    if (range.maxKey < range.minKey) return;
    const bool isList = t.listBegin >= 0;
    for (std::int64_t tr = 0; tr < t.rowCount; ++tr) {
        const std::int64_t i = t.rowStart + tr * t.rowStep;
        const std::int64_t e1 = rowPtr[i + 1];
        std::int64_t e = std::lower_bound(col + rowPtr[i], col + e1, static_cast<std::int32_t>(range.minKey)) - col;
        for (; e < e1 && col[e] <= range.maxKey; ++e) {
            std::int64_t idx;
            if (isList) {
                idx = pos[col[e]];
                if (idx < 0) continue;
            } else {
                const std::int64_t off = col[e] - t.keyStart;
                if (off % t.keyStep != 0) continue;
                idx = off / t.keyStep;
            }
            f(tr, e, idx);
        }
    }
}

// rows: [rowCount, d] view of rows rowStart, rowStart + step, ... of a contiguous [*, d] matrix.
at::Tensor rowView(const at::Tensor& matrix, std::int64_t start, std::int64_t step, std::int64_t count) {
    const std::int64_t d = matrix.size(1);
    return matrix.as_strided({count, d}, {step * d, 1}, matrix.storage_offset() + start * d);
}

// keys of a tile as a [keyCount, d] matrix: a strided view, or rows gathered into `gather`.
at::Tensor keyRows(const at::Tensor& matrix, const SparseTile& t, const std::vector<std::int32_t>& list,
                   at::Tensor& gather) {
    if (t.listBegin < 0) return rowView(matrix, t.keyStart, t.keyStep, t.keyCount);
    const std::int64_t d = matrix.size(1), count = t.listEnd - t.listBegin;
    at::Tensor out = gather.narrow(0, 0, count * d).view({count, d});
    const float* src = matrix.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (std::int64_t r = 0; r < count; ++r)
        std::memcpy(dst + r * d, src + static_cast<std::int64_t>(list[static_cast<std::size_t>(t.listBegin + r)]) * d,
                    static_cast<std::size_t>(d) * sizeof(float));
    return out;
}

void setListPositions(const SparseTile& t, const std::vector<std::int32_t>& list, std::int32_t* pos, bool set) {
    if (t.listBegin < 0) return;
    for (std::int64_t r = t.listBegin; r < t.listEnd; ++r)
        pos[list[static_cast<std::size_t>(r)]] = set ? static_cast<std::int32_t>(r - t.listBegin) : -1;
}

// An int32 view of a pooled float workspace (same element size), so that repeated runs reuse it.
std::int32_t* intWorkspace(RunContext& ctx, const std::string& slot, std::int64_t count) {
    at::Tensor t = ctx.pool().workspace(slot, {std::max<std::int64_t>(count, 1)});
    static_assert(sizeof(float) == sizeof(std::int32_t), "int32 workspace reuses float storage");
    return reinterpret_cast<std::int32_t*>(t.data_ptr<float>());
}

}  // namespace

void SparseTiles::addRange(std::int64_t r0, std::int64_t rowStep, std::int64_t rowCount, std::int64_t k0,
                           std::int64_t keyStep, std::int64_t keyCount) {
    if (rowCount <= 0 || keyCount <= 0) return;
    SparseTile t;
    t.rowStart = r0;
    t.rowStep = rowStep;
    t.rowCount = rowCount;
    t.keyStart = k0;
    t.keyStep = keyStep;
    t.keyCount = keyCount;
    tiles.push_back(t);
}

void SparseTiles::addList(std::int64_t r0, std::int64_t rowStep, std::int64_t rowCount,
                          const std::vector<std::int32_t>& keys) {
    if (rowCount <= 0 || keys.empty()) return;
    SparseTile t;
    t.rowStart = r0;
    t.rowStep = rowStep;
    t.rowCount = rowCount;
    t.listBegin = static_cast<std::int64_t>(keyList.size());
    keyList.insert(keyList.end(), keys.begin(), keys.end());
    t.listEnd = static_cast<std::int64_t>(keyList.size());
    tiles.push_back(t);
}

void DensePlan::addGroup(std::int64_t rowStart, std::int64_t rowStep, std::int64_t rowCount,
                         std::initializer_list<DenseSegment> segs, std::int64_t masked) {
    beginGroup(rowStart, rowStep, rowCount, masked);
    for (const auto& seg : segs) addSegment(seg.keyStart, seg.keyStep, seg.keyCount);
}

void DensePlan::beginGroup(std::int64_t rowStart, std::int64_t rowStep, std::int64_t rowCount, std::int64_t masked) {
    DenseGroup g;
    g.rowStart = rowStart;
    g.rowStep = rowStep;
    g.rowCount = rowCount;
    g.segBegin = g.segEnd = static_cast<std::int64_t>(segments.size());
    g.maskedSegments = masked;
    groups.push_back(g);
}

void DensePlan::addSegment(std::int64_t keyStart, std::int64_t keyStep, std::int64_t keyCount) {
    segments.push_back(DenseSegment{keyStart, keyStep, keyCount});
    groups.back().segEnd = static_cast<std::int64_t>(segments.size());
}

namespace {

// Keys of a group's segments as one [keys, d] matrix: a strided view for a single segment,
// otherwise rows copied into `gather`.
at::Tensor segmentRows(const at::Tensor& matrix, const DensePlan& plan, const DenseGroup& g, std::int64_t keys,
                       const at::Tensor& gather) {
    if (g.segEnd - g.segBegin == 1) {
        const DenseSegment& s = plan.segments[static_cast<std::size_t>(g.segBegin)];
        return rowView(matrix, s.keyStart, s.keyStep, s.keyCount);
    }
    const std::int64_t d = matrix.size(1);
    at::Tensor out = gather.narrow(0, 0, keys * d).view({keys, d});
    const float* src = matrix.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) {
        const DenseSegment& s = plan.segments[static_cast<std::size_t>(si)];
        if (s.keyStep == 1) {
            std::memcpy(dst, src + s.keyStart * d, static_cast<std::size_t>(s.keyCount * d) * sizeof(float));
        } else {
            for (std::int64_t t = 0; t < s.keyCount; ++t)
                std::memcpy(dst + t * d, src + (s.keyStart + t * s.keyStep) * d, static_cast<std::size_t>(d) * sizeof(float));
        }
        dst += s.keyCount * d;
    }
    return out;
}

// The dense-plan fast path (see DensePlan). Returns false, having done nothing, when the variant
// has no plan for these parameters.
bool runDensePlanKernel(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const SparseKernelInput& input,
                        RunContext& ctx, AttentionResult& result) {
    const SparsePattern& pattern = *input.pattern;
    const std::int64_t heads = q.size(0), n = q.size(1), d = q.size(2);
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    const bool strict = std::getenv("ATTNSCOPE_SPARSE_STRICT") != nullptr;

    DensePlan plan;
    if (!input.densePlan(0, plan)) return false;

    auto outBuffer = ctx.pool().resultBuffer(input.slot + ".output", static_cast<std::size_t>(heads * n * d));
    at::Tensor out = tensorOver(*outBuffer, {heads, n, d});
    PlainTensor status = PlainTensor::zeros(DType::U8, {heads, n});
    std::int64_t emptyRows = 0;
    double flops = 0;
    std::int64_t entriesComputed = 0;
    std::uint64_t workspaceBytes = 0;
    std::vector<std::uint8_t> groupStatus;

    for (std::int64_t h = 0; h < heads; ++h) {
        if (h > 0) {
            plan = DensePlan{};
            if (!input.densePlan(static_cast<int>(h), plan))
                throw EngineError(ErrorCode::Internal, input.slot + ": dense plan missing for head " + std::to_string(h));
        }
        const std::int64_t* rowPtr = pattern.rowPtr.data() + (pattern.perHead ? h * n : 0);
        const std::int64_t eCount = rowPtr[n] - rowPtr[0];
        std::int64_t maxRows = 1, maxKeys = 1;
        bool gathers = false;
        for (const auto& g : plan.groups) {
            std::int64_t keys = 0;
            for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) keys += plan.segments[static_cast<std::size_t>(si)].keyCount;
            maxRows = std::max(maxRows, g.rowCount);
            maxKeys = std::max(maxKeys, keys);
            gathers = gathers || g.segEnd - g.segBegin > 1;
        }
        const bool merge = !plan.singleCover;
        at::Tensor scoresWs = ctx.pool().workspace(input.slot + ".dense_scores", {maxRows * maxKeys});
        at::Tensor gatherK = gathers ? ctx.pool().workspace(input.slot + ".dense_k", {maxKeys * d}) : at::Tensor();
        at::Tensor gatherV = gathers ? ctx.pool().workspace(input.slot + ".dense_v", {maxKeys * d}) : at::Tensor();
        at::Tensor partWs = merge ? ctx.pool().workspace(input.slot + ".dense_part", {maxRows * (d + 2) + 2 * n}) : at::Tensor();
        workspaceBytes = std::max<std::uint64_t>(
            workspaceBytes, static_cast<std::uint64_t>(maxRows * maxKeys + (gathers ? 2 * maxKeys * d : 0) +
                                                       (merge ? maxRows * (d + 2) + 2 * n : 0)) * 4);
        groupStatus.assign(static_cast<std::size_t>(maxRows), 0);
        const at::Tensor qh = q[h], kh = k[h], vh = v[h];
        at::Tensor outH = out[h];
        float* op = outH.data_ptr<float>();
        float* accMax = merge ? partWs.data_ptr<float>() + maxRows * (d + 2) : nullptr;
        float* accSum = merge ? accMax + n : nullptr;
        if (merge) {
            outH.zero_();
            std::fill(accMax, accMax + n, kMinusInf);
            std::fill(accSum, accSum + n, 0.0f);
        }
        std::uint8_t* rowStatus = status.u8.data() + h * n;
        std::int64_t allowed = 0;

        for (std::size_t gi = 0; gi < plan.groups.size(); ++gi) {
            const DenseGroup& g = plan.groups[gi];
            const std::int64_t rows = g.rowCount;
            std::int64_t keys = 0;
            for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) keys += plan.segments[static_cast<std::size_t>(si)].keyCount;
            if (rows <= 0 || keys <= 0) continue;
            at::Tensor s = scoresWs.narrow(0, 0, rows * keys).view({rows, keys});
            at::mm_out(s, rowView(qh, g.rowStart, g.rowStep, rows), segmentRows(kh, plan, g, keys, gatherK).t());
            entriesComputed += rows * keys;
            float* sp = s.data_ptr<float>();
            float* partMax = merge ? partWs.data_ptr<float>() + maxRows * d : nullptr;
            float* partSum = merge ? partMax + maxRows : nullptr;
            std::atomic<std::int64_t> allowedInGroup{0};
            at::parallel_for(0, rows, 8, [&](std::int64_t r0, std::int64_t r1) {
                std::int64_t count = 0;
                for (std::int64_t r = r0; r < r1; ++r) {
                    float* row = sp + r * keys;
                    const std::int64_t i = g.rowStart + r * g.rowStep;
                    std::int64_t off = 0, rowAllowed = keys;
                    for (std::int64_t si = g.segBegin; si < g.segBegin + g.maskedSegments; ++si) {
                        const std::int64_t cnt = plan.segments[static_cast<std::size_t>(si)].keyCount;
                        std::int64_t lo = 0, hi = cnt;
                        plan.range(i, si - g.segBegin, plan.segments[static_cast<std::size_t>(si)], lo, hi);
                        lo = std::clamp<std::int64_t>(lo, 0, cnt);
                        hi = std::clamp<std::int64_t>(hi, lo, cnt);
                        std::fill(row + off, row + off + lo, kMinusInf);
                        std::fill(row + off + hi, row + off + cnt, kMinusInf);
                        rowAllowed -= cnt - (hi - lo);
                        off += cnt;
                    }
                    count += rowAllowed;
                }
                allowedInGroup += count;
                if (merge)
                    expRowsInPlace(sp + r0 * keys, r1 - r0, keys, keys, scale, partMax + r0, partSum + r0);
                else
                    softmaxRowsInPlace(sp + r0 * keys, r1 - r0, keys, keys, scale, groupStatus.data() + r0);
            });
            allowed += allowedInGroup.load();
            const at::Tensor vRows = segmentRows(vh, plan, g, keys, gatherV);
            if (!merge) {
                at::Tensor outRows = rowView(outH, g.rowStart, g.rowStep, rows);
                at::mm_out(outRows, s, vRows);
                for (std::int64_t r = 0; r < rows; ++r)
                    if (groupStatus[static_cast<std::size_t>(r)]) {
                        groupStatus[static_cast<std::size_t>(r)] = 0;
                        rowStatus[g.rowStart + r * g.rowStep] = 1;
                        ++emptyRows;
                    }
            } else {
                at::Tensor part = partWs.narrow(0, 0, rows * d).view({rows, d});
                at::mm_out(part, s, vRows);
                const float* pp = part.data_ptr<float>();
                for (std::int64_t r = 0; r < rows; ++r) {
                    const float sum = partSum[r];
                    if (sum == 0.0f) continue;
                    const std::int64_t i = g.rowStart + r * g.rowStep;
                    float* o = op + i * d;
                    const float* p = pp + r * d;
                    if (accSum[i] == 0.0f) {
                        std::memcpy(o, p, static_cast<std::size_t>(d) * sizeof(float));
                        accMax[i] = partMax[r];
                        accSum[i] = sum;
                        continue;
                    }
                    const float mx = std::max(accMax[i], partMax[r]);
                    const float a = std::exp((accMax[i] - mx) * scale), b = std::exp((partMax[r] - mx) * scale);
                    for (std::int64_t c = 0; c < d; ++c) o[c] = o[c] * a + p[c] * b;
                    accSum[i] = accSum[i] * a + sum * b;
                    accMax[i] = mx;
                }
            }
            if ((gi + 1) % kTilesPerCheckpoint == 0) ctx.checkpoint("attention", h, heads);
        }
        if (merge) {
            for (std::int64_t i = 0; i < n; ++i) {
                float* o = op + i * d;
                if (accSum[i] == 0.0f) {
                    std::fill(o, o + d, 0.0f);
                    rowStatus[i] = 1;
                    ++emptyRows;
                    continue;
                }
                const float inv = 1.0f / accSum[i];
                for (std::int64_t c = 0; c < d; ++c) o[c] *= inv;
            }
        }
        if (allowed != eCount && strict)
            throw EngineError(ErrorCode::Internal, input.slot + ": dense plan of head " + std::to_string(h) + " allows " +
                                                       std::to_string(allowed) + " entries, the pattern lists " +
                                                       std::to_string(eCount));
        flops += 4.0 * static_cast<double>(eCount) * static_cast<double>(d);
        ctx.checkpoint("attention", h + 1, heads);
    }

    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    result.emptyRowCount = emptyRows;
    if (std::any_of(status.u8.begin(), status.u8.end(), [](std::uint8_t st) { return st != 0; }))
        result.rowStatus = std::move(status);
    auto& c = ctx.counters();
    c.flops += flops;
    c.entriesComputed += entriesComputed;
    ctx.noteBytes(outBuffer->size() * sizeof(float) + workspaceBytes + static_cast<std::uint64_t>(pattern.nnz()) * 5 +
                  pattern.rowPtr.size() * 8);
    return true;
}

}  // namespace

namespace {
void runTileKernel(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const SparseKernelInput& input,
                   RunContext& ctx, AttentionResult& result, bool computeOutput);
}  // namespace

void runSparseKernel(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const SparseKernelInput& input,
                     RunContext& ctx, AttentionResult& result) {
    // The output comes from the dense plan whenever the variant has one and nothing is padded;
    // weights, when kept, from the tile kernel below (pass 1 and the softmax only), so that the
    // output is the same bit for bit with and without kept weights.
    const bool denseOutput = input.densePlan && input.keyPadding.empty() && input.queryPadding.empty();
    if (denseOutput && !input.keepWeights && runDensePlanKernel(q, k, v, input, ctx, result)) return;
    if (denseOutput && input.keepWeights) {
        DensePlan probe;
        if (input.densePlan(0, probe)) {
            runTileKernel(q, k, v, input, ctx, result, /*computeOutput=*/false);
            const std::int64_t emptyRows = result.emptyRowCount;
            PlainTensor rowStatus = result.rowStatus;
            const double flops = ctx.counters().flops;
            runDensePlanKernel(q, k, v, input, ctx, result);
            ctx.counters().flops = flops;  // the same useful FLOPs, counted once
            result.emptyRowCount = emptyRows;
            result.rowStatus = std::move(rowStatus);
            return;
        }
    }
    runTileKernel(q, k, v, input, ctx, result, /*computeOutput=*/true);
}

namespace {

void runTileKernel(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const SparseKernelInput& input,
                   RunContext& ctx, AttentionResult& result, bool computeOutput) {
    const SparsePattern& pattern = *input.pattern;
    const std::int64_t heads = q.size(0), n = q.size(1), m = k.size(1), d = q.size(2);
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    const std::int64_t nnz = pattern.nnz();

    std::shared_ptr<std::vector<float>> outBuffer;
    at::Tensor out;
    if (computeOutput) {
        outBuffer = ctx.pool().resultBuffer(input.slot + ".output", static_cast<std::size_t>(heads * n * d));
        out = tensorOver(*outBuffer, {heads, n, d});
    }
    std::shared_ptr<std::vector<float>> weightBuffer;
    std::int64_t maxHeadEntries = 0;
    for (std::int64_t h = 0; h < (pattern.perHead ? heads : 1); ++h)
        maxHeadEntries = std::max(maxHeadEntries, pattern.rowPtr[(h + 1) * n] - pattern.rowPtr[h * n]);
    if (input.keepWeights)
        weightBuffer = ctx.pool().resultBuffer(input.slot + ".weights",
                                               static_cast<std::size_t>(pattern.perHead ? nnz : heads * nnz));
    at::Tensor scratchScores =
        input.keepWeights ? at::Tensor() : ctx.pool().workspace(input.slot + ".scores", {std::max<std::int64_t>(maxHeadEntries, 1)});
    std::int32_t* owner = intWorkspace(ctx, input.slot + ".owner", maxHeadEntries);
    std::int32_t* pos = intWorkspace(ctx, input.slot + ".pos", m);
    std::fill(pos, pos + m, -1);

    PlainTensor status = PlainTensor::zeros(DType::U8, {heads, n});
    std::int64_t emptyRows = 0;
    double flops = 0;
    std::int64_t entriesComputed = 0;
    std::uint64_t workspaceBytes = 0;
    const std::int32_t* col = pattern.colIdx.data();

    for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t rowBase = pattern.perHead ? h * n : 0;
        const std::int64_t* rowPtr = pattern.rowPtr.data() + rowBase;
        const std::int64_t eBase = rowPtr[0], eCount = rowPtr[n] - eBase;
        // scores: [eCount] aligned with this head's entries; they become the weights in place.
        float* scores = input.keepWeights ? weightBuffer->data() + (pattern.perHead ? eBase : h * nnz)
                                          : scratchScores.data_ptr<float>();
        // scores and owner are indexed by entry - eBase (entries are numbered across heads).
        std::int32_t* own = owner;
        std::fill(owner, owner + eCount, kUnowned);

        SparseTiles tiles;
        input.tilesForHead(static_cast<int>(h), tiles);
        std::int64_t maxArea = 1, maxKeys = 1;
        for (const auto& t : tiles.tiles) {
            maxArea = std::max(maxArea, t.rowCount * tileKeyCount(t));
            if (t.listBegin >= 0) maxKeys = std::max(maxKeys, tileKeyCount(t));
        }
        at::Tensor tileWs = ctx.pool().workspace(input.slot + ".tile", {maxArea});
        at::Tensor gatherWs = ctx.pool().workspace(input.slot + ".gather", {maxKeys * d});
        workspaceBytes = std::max<std::uint64_t>(workspaceBytes, static_cast<std::uint64_t>(maxArea + maxKeys * d) * 4);
        const at::Tensor qh = q[h], kh = k[h], vh = v[h];
        std::vector<std::int64_t> ownedByTile(tiles.tiles.size(), 0);

        // Pass 1: scores of every entry, each from the first tile that contains it.
        for (std::size_t ti = 0; ti < tiles.tiles.size(); ++ti) {
            const SparseTile& t = tiles.tiles[ti];
            const std::int64_t kc = tileKeyCount(t);
            // tile scores: [rowCount, kc] = Q_rows K_keys^T (unscaled; the softmax scales)
            at::Tensor s = tileWs.narrow(0, 0, t.rowCount * kc).view({t.rowCount, kc});
            at::mm_out(s, rowView(qh, t.rowStart, t.rowStep, t.rowCount), keyRows(kh, t, tiles.keyList, gatherWs).t());
            entriesComputed += t.rowCount * kc;
            const float* sp = s.data_ptr<float>();
            setListPositions(t, tiles.keyList, pos, true);
            std::int64_t owned = 0;
            forEachTileEntry(t, tiles.keyList, rowPtr, col, pos, [&](std::int64_t tr, std::int64_t e, std::int64_t idx) {
                if (own[e - eBase] != kUnowned) return;
                own[e - eBase] = static_cast<std::int32_t>(ti);
                scores[e - eBase] = sp[tr * kc + idx];
                ++owned;
            });
            setListPositions(t, tiles.keyList, pos, false);
            ownedByTile[ti] = owned;
            if ((ti + 1) % kTilesPerCheckpoint == 0) ctx.checkpoint("attention", h, heads);
        }
        // Entries no tile covered: one dot product each (a safety net, not the fast path). The
        // tests set ATTNSCOPE_SPARSE_STRICT so that a tiling gap fails instead of running slowly.
        if (std::getenv("ATTNSCOPE_SPARSE_STRICT")) {
            const auto uncovered = std::count(owner, owner + eCount, kUnowned);
            if (uncovered > 0)
                throw EngineError(ErrorCode::Internal, input.slot + ": " + std::to_string(uncovered) +
                                                           " pattern entries not covered by the kernel's tiles");
        }
        const float* qp = qh.data_ptr<float>();
        const float* kp = kh.data_ptr<float>();
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t e = rowPtr[i]; e < rowPtr[i + 1]; ++e) {
                if (own[e - eBase] != kUnowned) continue;
                own[e - eBase] = kFallback;
                float dot = 0;
                for (std::int64_t c = 0; c < d; ++c) dot += qp[i * d + c] * kp[col[e] * d + c];
                scores[e - eBase] = dot;
                ++entriesComputed;
            }

        // Softmax over each CSR row; padded keys are masked, padded queries zeroed.
        std::uint8_t* rowStatus = status.u8.data() + h * n;
        std::atomic<std::int64_t> emptyInHead{0};
        at::parallel_for(0, n, 64, [&](std::int64_t i0, std::int64_t i1) {
            std::int64_t empty = 0;
            for (std::int64_t i = i0; i < i1; ++i) {
                const std::int64_t e0 = rowPtr[i], len = rowPtr[i + 1] - e0;
                if (!input.keyPadding.empty())
                    for (std::int64_t e = e0; e < e0 + len; ++e)
                        if (input.keyPadding[static_cast<std::size_t>(col[e])]) scores[e - eBase] = kMinusInf;
                if (!input.queryPadding.empty() && input.queryPadding[static_cast<std::size_t>(i)]) {
                    std::fill(scores + (e0 - eBase), scores + (e0 - eBase) + len, 0.0f);
                    rowStatus[i] = 2;
                    continue;
                }
                if (len == 0) {
                    rowStatus[i] = 1;
                    ++empty;
                    continue;
                }
                empty += softmaxRowsInPlace(scores + (e0 - eBase), 1, len, len, scale, rowStatus + i);
            }
            emptyInHead += empty;
        });
        emptyRows += emptyInHead.load();

        if (!computeOutput) {
            flops += 4.0 * static_cast<double>(eCount) * static_cast<double>(d);
            ctx.checkpoint("attention", h + 1, heads);
            continue;
        }
        // Pass 2: output rows += W_tile V_keys, W_tile holding the weights of the tile's own entries.
        at::Tensor outH = out[h];
        outH.zero_();
        for (std::size_t ti = 0; ti < tiles.tiles.size(); ++ti) {
            if (ownedByTile[ti] == 0) continue;
            const SparseTile& t = tiles.tiles[ti];
            const std::int64_t kc = tileKeyCount(t);
            at::Tensor w = tileWs.narrow(0, 0, t.rowCount * kc).view({t.rowCount, kc});
            w.zero_();
            float* wp = w.data_ptr<float>();
            setListPositions(t, tiles.keyList, pos, true);
            forEachTileEntry(t, tiles.keyList, rowPtr, col, pos, [&](std::int64_t tr, std::int64_t e, std::int64_t idx) {
                if (own[e - eBase] == static_cast<std::int32_t>(ti)) wp[tr * kc + idx] += scores[e - eBase];  // duplicates add up
            });
            setListPositions(t, tiles.keyList, pos, false);
            at::Tensor rows = rowView(outH, t.rowStart, t.rowStep, t.rowCount);
            at::addmm_out(rows, rows, w, keyRows(vh, t, tiles.keyList, gatherWs));
            if ((ti + 1) % kTilesPerCheckpoint == 0) ctx.checkpoint("attention", h, heads);
        }
        float* op = outH.data_ptr<float>();
        const float* vp = vh.data_ptr<float>();
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t e = rowPtr[i]; e < rowPtr[i + 1]; ++e)
                if (own[e - eBase] == kFallback)
                    for (std::int64_t c = 0; c < d; ++c) op[i * d + c] += scores[e - eBase] * vp[col[e] * d + c];
        // useful FLOPs: q·k and w·v on the pattern's entries only (tile waste is not counted)
        flops += 4.0 * static_cast<double>(eCount) * static_cast<double>(d);
        ctx.checkpoint("attention", h + 1, heads);
    }

    if (computeOutput) result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    if (input.keepWeights) {
        result.weightsLayout = WeightsLayout::AlignedWithPattern;
        result.weights = SharedTensorF32{pattern.perHead ? std::vector<std::int64_t>{nnz} : std::vector<std::int64_t>{heads, nnz},
                                         weightBuffer};
    }
    result.emptyRowCount = emptyRows;
    if (std::any_of(status.u8.begin(), status.u8.end(), [](std::uint8_t s) { return s != 0; }))
        result.rowStatus = std::move(status);
    auto& c = ctx.counters();
    c.flops += flops;
    c.entriesComputed += entriesComputed;
    std::uint64_t bytes = static_cast<std::uint64_t>(heads * n * d) * sizeof(float) + workspaceBytes +
                          static_cast<std::uint64_t>(maxHeadEntries + m) * 4 + static_cast<std::uint64_t>(nnz) * 5 +
                          pattern.rowPtr.size() * 8;
    bytes += input.keepWeights ? weightBuffer->size() * sizeof(float) : static_cast<std::uint64_t>(maxHeadEntries) * 4;
    ctx.noteBytes(bytes);
}

}  // namespace

PatternBuilder::PatternBuilder(std::int64_t rows, std::int64_t cols, bool perHead, std::int64_t reserveEntries) {
    m_pattern.rows = rows;
    m_pattern.cols = cols;
    m_pattern.perHead = perHead;
    m_pattern.rowPtr.reserve(static_cast<std::size_t>(rows) + 1);
    m_pattern.rowPtr.push_back(0);
    m_pattern.colIdx.reserve(static_cast<std::size_t>(std::max<std::int64_t>(reserveEntries, 0)));
    m_pattern.reason.reserve(static_cast<std::size_t>(std::max<std::int64_t>(reserveEntries, 0)));
}

void PatternBuilder::endRow(bool keepDuplicates) {
    const bool sorted =
        std::is_sorted(m_row.begin(), m_row.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
    if (!sorted)
        std::stable_sort(m_row.begin(), m_row.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
    for (std::size_t e = 0; e < m_row.size(); ++e) {
        if (!keepDuplicates && e > 0 && m_row[e].key == m_row[e - 1].key) continue;
        m_pattern.colIdx.push_back(m_row[e].key);
        m_pattern.reason.push_back(m_row[e].reason);
    }
    m_pattern.rowPtr.push_back(static_cast<std::int64_t>(m_pattern.colIdx.size()));
    m_row.clear();
}

void PatternBuilder::repeatLastRow() {
    auto& rp = m_pattern.rowPtr;
    const auto b = static_cast<std::size_t>(rp[rp.size() - 2]), e = static_cast<std::size_t>(rp.back());
    const std::size_t len = e - b;
    m_pattern.colIdx.resize(e + len);
    m_pattern.reason.resize(e + len);
    std::copy_n(m_pattern.colIdx.begin() + static_cast<std::ptrdiff_t>(b), len, m_pattern.colIdx.begin() + static_cast<std::ptrdiff_t>(e));
    std::copy_n(m_pattern.reason.begin() + static_cast<std::ptrdiff_t>(b), len, m_pattern.reason.begin() + static_cast<std::ptrdiff_t>(e));
    rp.push_back(static_cast<std::int64_t>(e + len));
}

SparsePattern PatternBuilder::finish() { return std::move(m_pattern); }

std::uint64_t sparsePatternBytes(const ProblemShape& s, double entriesPerHead, bool perHead, bool keepWeights) {
    const double heads = static_cast<double>(s.heads);
    const double listed = perHead ? entriesPerHead * heads : entriesPerHead;
    // pattern (I32 column + U8 reason), weights (F32 per head), kernel scratch (scores + owner)
    double bytes = listed * 5 + entriesPerHead * heads * 4 + entriesPerHead * 8 + static_cast<double>(s.n) * heads * 8;
    if (keepWeights) bytes += static_cast<double>(s.n) * static_cast<double>(s.m) * heads * 5;
    return static_cast<std::uint64_t>(bytes);
}

ParamSpec boolParam(const std::string& name, bool value, const std::string& help) {
    ParamSpec p;
    p.name = name;
    p.type = ParamType::Bool;
    p.defaultValue = value;
    p.minValue = 0;
    p.maxValue = 1;
    p.help = help;
    return p;
}

ParamSpec intParam(const std::string& name, std::int64_t value, double minValue, double maxValue, const std::string& help) {
    ParamSpec p;
    p.name = name;
    p.type = ParamType::Int;
    p.defaultValue = value;
    p.minValue = minValue;
    p.maxValue = maxValue;
    p.help = help;
    return p;
}

ParamSpec choiceParam(const std::string& name, const std::string& value, std::vector<std::string> choices,
                      const std::string& help) {
    ParamSpec p;
    p.name = name;
    p.type = ParamType::Choice;
    p.defaultValue = value;
    p.choices = std::move(choices);
    p.help = help;
    return p;
}

ParamSpec intListParam(const std::string& name, std::vector<std::int64_t> value, double minValue, double maxValue,
                       const std::string& help) {
    ParamSpec p;
    p.name = name;
    p.type = ParamType::IntList;
    p.defaultValue = std::move(value);
    p.minValue = minValue;
    p.maxValue = maxValue;
    p.help = help;
    return p;
}

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

void runPatternVariant(const Qkv& qkv, SparsePattern pattern, const SparseTileFn& tiles, RunContext& ctx,
                       AttentionResult& result, const DensePlanFn& densePlan) {
    result.pattern = std::move(pattern);
    SparseKernelInput input;
    input.pattern = &result.pattern;
    input.tilesForHead = tiles;
    input.keyPadding = qkv.keyPadding;
    input.queryPadding = selfQueryPadding(qkv);
    input.keepWeights = ctx.keepPatternWeights || ctx.keepWeights;
    input.slot = result.variantId;
    input.densePlan = densePlan;
    ctx.beginStage("attention");
    runSparseKernel(qkv.q, qkv.k, qkv.v, input, ctx, result);
    ctx.endStage();
    result.counters = ctx.counters();
}

void addResidueTiles(SparseTiles& tiles, std::int64_t n, std::int64_t m, std::int64_t period, std::int64_t rowsPerTile,
                     const std::function<std::pair<std::int64_t, std::int64_t>(std::int64_t, std::int64_t)>& keySpan) {
    for (std::int64_t r = 0; r < std::min(period, n); ++r) {
        const std::int64_t rows = (n - r + period - 1) / period;
        const std::int64_t keys = (m - r + period - 1) / period;  // keys r + s·P < m
        for (std::int64_t u0 = 0; u0 < rows; u0 += rowsPerTile) {
            const std::int64_t u1 = std::min(rows, u0 + rowsPerTile);
            auto [s0, s1] = keySpan(u0, u1);
            s0 = std::max<std::int64_t>(s0, 0);
            s1 = std::min(s1, keys);
            if (s1 > s0) tiles.addRange(r + u0 * period, period, u1 - u0, r + s0 * period, period, s1 - s0);
        }
    }
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
