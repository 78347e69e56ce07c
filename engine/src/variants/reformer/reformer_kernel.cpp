// `reformer`: Reformer LSH attention (Kitaev et al. 2020, arXiv 2001.04451) with the exact
// semantics of lucidrains' LSHAttention (VARIANTS.md §6): shared QK (keys are q/|q|, the given K
// is not used), angular LSH per round, sort by (round, bucket, position), chunks of chunk_len over
// the whole n_hashes·n list whose look-back/ahead wraps around the list, masks set in the order
// padding, causal, self (-5e4), other bucket, and rounds combined by their log-sum-exp, which is
// one softmax over the union of the rounds' candidates with duplicates counted.
//
// Cost: hashing O(n·d·n_hashes·n_buckets/2), a counting sort per round O(n + n_buckets), and per
// group of chunks two batched GEMMs over [chunk_len x window] scores: O(n_hashes·n·window·d).
// No n x n matrix and no listing of the candidates: the result keeps the buckets, the sorted order
// and each row's log-sum-exp, from which weights/reformer_weights.cpp recomputes any weight.

#include "kernels/blas_gemm.h"
#include "kernels/row_argmax.h"
#include "kernels/small_gemm.h"
#include "kernels/softmax_kernel.h"
#include "core/to_plain.h"
#include "qkv/seeded_normal.h"
#include "variants/pattern_variant.h"
#include "variants/reformer/reformer_geometry.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

namespace attnscope::engine {
namespace {

constexpr std::uint64_t kRotationStream = 0x700000000ull;
constexpr float kSelfScore = kReformerSelfScore;
// Stands for lucidrains' -finfo.max: such an entry gets weight exactly 0 and is not in the pattern.
constexpr float kMaskedScore = -std::numeric_limits<float>::infinity();
constexpr std::int64_t kChunksPerGroup = 32;
constexpr std::int64_t kHashBlockRows = 256;  // tokens per block of hash projections

/// The hash-sorted order of one head: slot s = r·nPad + t of round r.
struct LshOrder {
    std::vector<std::int32_t> token;   ///< [hashes·nPad] token per slot; -1 = chunk padding
    std::vector<std::int32_t> bucket;  ///< [hashes·nPad] global bucket b + r·n_buckets; -1 = padding
};

// rotations: [H, d, hashes, buckets/2] ~ N(0, 1), one SeededNormal stream per head.
at::Tensor drawRotations(std::int64_t heads, std::int64_t d, const ReformerSettings& s, std::uint64_t seed) {
    const std::int64_t half = s.buckets / 2;
    at::Tensor rot = at::empty({heads, d, s.hashes, half}, at::kFloat);
    float* p = rot.data_ptr<float>();
    const std::int64_t perHead = d * s.hashes * half;
    for (std::int64_t h = 0; h < heads; ++h) {
        SeededNormal gen(mixSeed(seed, kRotationStream + static_cast<std::uint64_t>(h)));
        for (std::int64_t i = 0; i < perHead; ++i) p[h * perHead + i] = static_cast<float>(gen.normal());
    }
    return rot;
}

// buckets: [hashes, n] = argmax([xR_r ; -xR_r]) (first maximum wins, as torch.argmax), then the
// counting sort by (bucket, position) per round; chunk padding goes to the end of each round.
// The projections are computed for a block of tokens at a time into `projBlock`
// ([kHashBlockRows, hashes·n_buckets/2]) and hashed while in cache: the whole [n, hashes·half]
// matrix (64 MiB per head at 16k tokens) was allocated, written and read back per head.
LshOrder hashAndSort(const float* qp, std::int64_t n, std::int64_t d, const float* rotH, const ReformerSettings& s,
                     float* projBlock, std::int64_t* bucketsOut) {
    const std::int64_t half = s.buckets / 2, cols = s.hashes * half;
    for (std::int64_t t0 = 0; t0 < n; t0 += kHashBlockRows) {
        const std::int64_t rows = std::min(kHashBlockRows, n - t0);
        gemmRowMajor(false, rows, cols, d, qp + t0 * d, d, rotH, cols, projBlock, cols);
        for (std::int64_t t = 0; t < rows; ++t)
            for (std::int64_t r = 0; r < s.hashes; ++r) {
                // argmax of [x; -x] from the first maximum and the first minimum of x: the +x half
                // comes first, so it wins a tie (torch.argmax returns the first maximum).
                const float* x = projBlock + t * cols + r * half;
                std::int64_t iMax = 0, iMin = 0;
                firstMaxAndMinIndex(x, half, iMax, iMin);
                bucketsOut[r * n + t0 + t] = x[iMax] >= -x[iMin] ? iMax : half + iMin;
            }
    }
    LshOrder order;
    order.token.assign(static_cast<std::size_t>(s.hashes * s.nPad), -1);
    order.bucket.assign(static_cast<std::size_t>(s.hashes * s.nPad), -1);
    std::vector<std::int64_t> start(static_cast<std::size_t>(s.buckets + 1));
    for (std::int64_t r = 0; r < s.hashes; ++r) {
        const std::int64_t* b = bucketsOut + r * n;
        std::fill(start.begin(), start.end(), 0);
        for (std::int64_t t = 0; t < n; ++t) ++start[static_cast<std::size_t>(b[t] + 1)];
        for (std::int64_t i = 0; i < s.buckets; ++i) start[static_cast<std::size_t>(i + 1)] += start[static_cast<std::size_t>(i)];
        for (std::int64_t t = 0; t < n; ++t) {
            const std::size_t slot = static_cast<std::size_t>(r * s.nPad + start[static_cast<std::size_t>(b[t])]++);
            order.token[slot] = static_cast<std::int32_t>(t);
            order.bucket[slot] = static_cast<std::int32_t>(b[t] + r * s.buckets);
        }
    }
    return order;
}

// The masks of one score row when only chunk padding, causality and self can mask (no key
// padding, attend_across_buckets, nothing staged): the same values as the general loop, as
// selects that vectorise (this file is built with -fno-trapping-math).
void maskRowFast(float* x, const std::int32_t* keyTokens, std::int64_t count, std::int32_t query, float scale, bool causal) {
    for (std::int64_t e = 0; e < count; ++e) {
        const std::int32_t j = keyTokens[e];
        const bool masked = j < 0 || (causal && j > query);
        const float value = j == query ? kSelfScore : x[e] * scale;
        x[e] = masked ? kMaskedScore : value;
    }
}

// allow_duplicate_attention = false: each distinct key of a row's candidates counts once (every
// copy gets score - log(count), so the copies of a key sum to exp(score)); the union is one
// softmax. Row by row from the geometry; fills the output, round weights and row statistics.
void distinctKeysAttention(const ReformerGeometry& geometry, const float* q, const float* keys, const float* v,
                           std::int64_t n, std::int64_t d, float scale, std::int64_t hashes, float* out,
                           float* roundWeights, float* rowMax, float* rowSum, std::uint8_t* status,
                           const std::vector<std::uint8_t>& keyPad) {
    std::vector<ReformerCandidate> cands;
    std::vector<std::size_t> order;
    std::vector<double> value, roundLse;
    for (std::int64_t i = 0; i < n; ++i) {
        float* o = out + i * d;
        std::fill(o, o + d, 0.0f);
        if (!keyPad.empty() && keyPad[static_cast<std::size_t>(i)]) {
            status[i] = 2;
            rowMax[i] = -std::numeric_limits<float>::infinity();
            rowSum[i] = 0.0f;
            continue;
        }
        geometry.candidates(i, cands);
        order.resize(cands.size());
        for (std::size_t t = 0; t < order.size(); ++t) order[t] = t;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cands[a].key < cands[b].key; });
        value.assign(cands.size(), 0.0);
        const float* qi = q + i * d;
        for (std::size_t t = 0; t < cands.size(); ++t) {
            if (cands[t].self) {
                value[t] = kSelfScore;
                continue;
            }
            const float* kj = keys + static_cast<std::int64_t>(cands[t].key) * d;
            float dot = 0;
            for (std::int64_t c = 0; c < d; ++c) dot += qi[c] * kj[c];
            value[t] = static_cast<double>(dot * scale);
        }
        // distinct keys: M = the largest score, total = M + log Σ exp(score − M)
        double big = -std::numeric_limits<double>::infinity();
        for (double x : value) big = std::max(big, x);
        double sum = 0;
        for (std::size_t a = 0; a < order.size();) {
            std::size_t b = a;
            while (b < order.size() && cands[order[b]].key == cands[order[a]].key) ++b;
            sum += std::exp(value[order[a]] - big);
            a = b;
        }
        const double rest = std::log(sum), total = big + rest;
        rowMax[i] = static_cast<float>(big);
        rowSum[i] = static_cast<float>(std::exp(rest + (big - static_cast<double>(static_cast<float>(big)))));
        roundLse.assign(static_cast<std::size_t>(hashes), 0.0);
        for (std::size_t a = 0; a < order.size();) {
            std::size_t b = a;
            while (b < order.size() && cands[order[b]].key == cands[order[a]].key) ++b;
            const double w = std::exp(value[order[a]] - total);
            const float* vj = v + static_cast<std::int64_t>(cands[order[a]].key) * d;
            for (std::int64_t c = 0; c < d; ++c) o[c] += static_cast<float>(w) * vj[c];
            for (std::size_t t = a; t < b; ++t) roundLse[static_cast<std::size_t>(cands[order[t]].round)] += w / static_cast<double>(b - a);
            a = b;
        }
        for (std::int64_t r = 0; r < hashes; ++r) roundWeights[r * n + i] = static_cast<float>(roundLse[static_cast<std::size_t>(r)]);
    }
}

class ReformerAttention final : public Variant {
public:
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        const std::int64_t chunkLen = std::max<std::int64_t>(1, std::min(paramInt(params, "chunk_len"), s.n));
        const double window =
            static_cast<double>((paramInt(params, "n_chunks_before") + 1 + paramInt(params, "n_chunks_after")) * chunkLen);
        const double hashes = static_cast<double>(paramInt(params, "n_hashes"));
        const double rows = static_cast<double>(s.heads * s.n), d = static_cast<double>(s.d);
        // kept: output, buckets and sorted order (I64), round weights, two row statistics;
        // scratch: normalised keys, the rounds' outputs and sorted keys and values of one head,
        // and a group of 32 chunks' scores
        const double kept = rows * (d * 4 + hashes * 20 + 8);
        const double scratch = rows * d * 4 + static_cast<double>(s.n) * hashes * d * 12 +
                               32.0 * static_cast<double>(chunkLen) * (window + 2 * d) * 4;
        return static_cast<std::uint64_t>(kept + scratch);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;
};

AttentionResult ReformerAttention::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    requireSelfAttention(info().id, qkv);
    const std::int64_t heads = qkv.heads(), n = qkv.n(), d = qkv.d();
    ReformerSettings s;
    s.buckets = paramInt(params, "n_buckets");
    s.hashes = paramInt(params, "n_hashes");
    s.chunkLen = paramInt(params, "chunk_len");
    s.before = paramInt(params, "n_chunks_before");
    s.after = paramInt(params, "n_chunks_after");
    s.causal = paramBool(params, "causal");
    s.acrossBuckets = paramBool(params, "attend_across_buckets");
    s.allowDuplicates = paramBool(params, "allow_duplicate_attention");
    if (s.buckets % 2 != 0)
        throw EngineError(ErrorCode::InvalidArgument, "reformer: n_buckets must be even (angular LSH uses [xR; -xR] with "
                                                      "R of n_buckets/2 columns), got " + std::to_string(s.buckets));
    if (s.chunkLen > n) {
        ctx.warn("chunk_len = " + std::to_string(s.chunkLen) + " is more than the " + std::to_string(n) +
                 " tokens; using chunk_len = " + std::to_string(n));
        s.chunkLen = n;
    }
    // Auto: lucidrains' n / bucket_size (buckets of about one chunk), rounded up to even. trax's
    // 2·n / chunk_len doubles the hashing GEMM for the same chunk structure.
    if (s.buckets == 0) s.buckets = std::max<std::int64_t>(2, (n / s.chunkLen + 1) / 2 * 2);
    s.nPad = (n + s.chunkLen - 1) / s.chunkLen * s.chunkLen;
    if (s.nPad != n)
        ctx.warn("n = " + std::to_string(n) + " is not a multiple of chunk_len = " + std::to_string(s.chunkLen) +
                 "; each hash round is padded with " + std::to_string(s.nPad - n) +
                 " masked slots after its last bucket (padded keys get weight 0, padded queries are dropped)");

    AttentionResult result = startResult(info().id, params, qkv);
    result.params["n_buckets"] = s.buckets;  // the values actually used, so the file recomputes
    result.params["chunk_len"] = s.chunkLen;
    const std::int64_t L = s.chunkLen, WL = s.window(), C = s.chunks();
    const std::vector<std::uint8_t>& keyPad = qkv.keyPadding;
    const auto padded = [&](std::int64_t t) { return !keyPad.empty() && keyPad[static_cast<std::size_t>(t)] != 0; };
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));

    ctx.beginStage("hash");
    const at::Tensor rotations = drawRotations(heads, d, s, ctx.seed);
    PlainTensor buckets = ctx.pool().zeros(DType::I64, {heads, s.hashes, n});
    PlainTensor sorted = ctx.pool().zeros(DType::I64, {heads, s.hashes, s.nPad});
    std::vector<LshOrder> orders;
    const at::Tensor queries = qkv.q.contiguous();
    float* projBlock =
        ctx.pool().workspace("reformer.proj", {std::min(kHashBlockRows, n) * s.hashes * (s.buckets / 2)}).data_ptr<float>();
    for (std::int64_t h = 0; h < heads; ++h) {
        orders.push_back(hashAndSort(queries[h].data_ptr<float>(), n, d, rotations[h].data_ptr<float>(), s, projBlock,
                                     buckets.i64.data() + h * s.hashes * n));
        std::copy(orders.back().token.begin(), orders.back().token.end(), sorted.i64.begin() + h * s.hashes * s.nPad);
    }
    ctx.endStage();

    ctx.beginStage("attention");
    auto outBuffer = ctx.pool().resultBuffer("reformer.output", static_cast<std::size_t>(heads * n * d));
    at::Tensor out = tensorOver(*outBuffer, {heads, n, d});
    out.zero_();
    // keys: [H, n, d] = q / max(|q|, 1e-12) (F.normalize)
    at::Tensor keys = ctx.pool().workspace("reformer.keys", {heads, n, d});
    keys.copy_(qkv.q);
    keys.div_(keys.norm(2, 2, true).clamp_min(1e-12));
    PlainTensor roundWeights = ctx.pool().zeros(DType::F32, {heads, s.hashes, n});
    PlainTensor rowMax = ctx.pool().zeros(DType::F32, {heads, n});
    PlainTensor rowSum = ctx.pool().zeros(DType::F32, {heads, n});
    PlainTensor status = ctx.pool().zeros(DType::U8, {heads, n});
    std::vector<std::int32_t> keyToken, keyBucket;
    // Per round and row: the log-sum-exp (double: near the self score -5e4 a float ulp is 0.004)
    // and the max it was shifted by.
    std::vector<double> lse(static_cast<std::size_t>(s.hashes * n));
    std::vector<float> roundMax(static_cast<std::size_t>(s.hashes * n));
    const std::int64_t groups = (C + kChunksPerGroup - 1) / kChunksPerGroup;

    for (std::int64_t h = 0; h < heads; ++h) {
        const float* qp = qkv.q[h].data_ptr<float>();
        const float* kp = keys[h].data_ptr<float>();
        const float* vp = qkv.v[h].data_ptr<float>();
        float* outH = out[h].data_ptr<float>();
        float* rw = roundWeights.f32.data() + h * s.hashes * n;
        float* maxH = rowMax.f32.data() + h * n;
        float* rowSumH = rowSum.f32.data() + h * n;
        if (!s.allowDuplicates) {
            // Each distinct key once: the union of the rounds' candidates as one softmax, row by row.
            const ReformerGeometry geometry(s, n, sorted.i64.data() + h * s.hashes * s.nPad,
                                            buckets.i64.data() + h * s.hashes * n, keyPad);
            distinctKeysAttention(geometry, qp, kp, vp, n, d, scale, s.hashes, outH, rw, maxH, rowSumH,
                                  status.u8.data() + h * n, keyPad);
            ctx.checkpoint("attention", h + 1, heads);
            continue;
        }
        const LshOrder& order = orders[static_cast<std::size_t>(h)];
        // rounds: [hashes, n, d], each round's output o_r(i) before the log-sum-exp combination
        at::Tensor rounds = ctx.pool().workspace("reformer.rounds", {s.hashes, n, d});
        float* roundOut = rounds.data_ptr<float>();

        // The sorted keys and values once per head, with the last `before` chunks repeated in
        // front and the first `after` chunks behind: every chunk's window (chunks c - before ..
        // c + after, wrapping) is then the contiguous rows c·L .. c·L + WL of these copies, read
        // in place by the products (gathering each window copied every key twice or more).
        const std::int64_t extChunks = C + s.before + s.after;
        float* extK = ctx.pool().workspace("reformer.ext_k", {extChunks * L * d}).data_ptr<float>();
        float* extV = ctx.pool().workspace("reformer.ext_v", {extChunks * L * d}).data_ptr<float>();
        const auto copyRow = [d](float* dst, const float* src, std::int32_t t) {
            if (t < 0) std::fill(dst, dst + d, 0.0f);
            else std::memcpy(dst, src + static_cast<std::int64_t>(t) * d, static_cast<std::size_t>(d) * sizeof(float));
        };
        keyToken.resize(static_cast<std::size_t>(extChunks * L));
        keyBucket.resize(static_cast<std::size_t>(extChunks * L));
        for (std::int64_t e = 0; e < extChunks; ++e) {
            const std::int64_t wc = ((e - s.before) % C + C) % C;
            for (std::int64_t b = 0; b < L; ++b) {
                const std::int32_t t = order.token[static_cast<std::size_t>(wc * L + b)];
                keyToken[static_cast<std::size_t>(e * L + b)] = t;
                keyBucket[static_cast<std::size_t>(e * L + b)] = order.bucket[static_cast<std::size_t>(wc * L + b)];
                copyRow(extK + (e * L + b) * d, kp, t);
                copyRow(extV + (e * L + b) * d, vp, t);
            }
        }

        for (std::int64_t grp = 0; grp < groups; ++grp) {
            const std::int64_t c0 = grp * kChunksPerGroup, G = std::min(kChunksPerGroup, C - c0);
            // qs: [G, L, d] the chunks' queries; scores: [G, L, WL]; outs: [G, L, d]
            float* qsp = ctx.pool().workspace("reformer.qs", {G * L * d}).data_ptr<float>();
            float* sp = ctx.pool().workspace("reformer.scores", {G * L * WL}).data_ptr<float>();
            float* outsp = ctx.pool().workspace("reformer.outs", {G * L * d}).data_ptr<float>();
            for (std::int64_t a = 0; a < G * L; ++a) copyRow(qsp + a * d, qp, order.token[static_cast<std::size_t>(c0 * L + a)]);

            // Per chunk: scores, masks, the per-round softmax in place and P·V; chunks on the
            // intra-op threads, each SGEMM on one thread.
            SingleThreadedBlas singleBlas;
            at::parallel_for(0, G, 1, [&](std::int64_t g0, std::int64_t g1) {
                for (std::int64_t g = g0; g < g1; ++g) {
                    const std::int64_t c = c0 + g;
                    smallGemmABt(L, WL, d, qsp + g * L * d, d, extK + c * L * d, d, sp + g * L * WL, WL);
                    for (std::int64_t row = g * L; row < (g + 1) * L; ++row) {
                        const std::int64_t slot = c0 * L + row;
                        const std::int32_t i = order.token[static_cast<std::size_t>(slot)];
                        float* x = sp + row * WL;
                        if (i < 0 || padded(i)) {
                            std::fill(x, x + WL, 0.0f);
                            continue;
                        }
                        const std::int64_t round = slot / s.nPad;
                        const std::int32_t qBucket = order.bucket[static_cast<std::size_t>(slot)];
                        const std::int32_t* kt = keyToken.data() + c * L;
                        const std::int32_t* kb = keyBucket.data() + c * L;
                        if (keyPad.empty() && s.acrossBuckets)
                            maskRowFast(x, kt, WL, i, scale, s.causal);
                        else
                            for (std::int64_t e = 0; e < WL; ++e) {
                                const std::int32_t j = kt[e];
                                // Set in the reference's order: padding, causal, self, other bucket.
                                float value = x[e] * scale;
                                if (j < 0 || padded(j) || (s.causal && i < j)) value = kMaskedScore;
                                if (j == i) value = kSelfScore;
                                if (!s.acrossBuckets && kb[e] != qBucket) value = kMaskedScore;
                                x[e] = value;
                            }
                        // x - max is exact in float even near the self value -5e4, where the float
                        // ulp is 0.004; the log-sum-exp itself is kept in double for the same reason.
                        float mx = 0, sum = 0;
                        expRowsInPlace(x, 1, WL, WL, 1.0f, &mx, &sum);
                        const float inv = 1.0f / sum;
                        for (std::int64_t e = 0; e < WL; ++e) x[e] *= inv;
                        lse[static_cast<std::size_t>(round * n + i)] = static_cast<double>(mx) + std::log(static_cast<double>(sum));
                        roundMax[static_cast<std::size_t>(round * n + i)] = mx;
                    }
                    smallGemmAB(L, d, WL, sp + g * L * WL, WL, extV + c * L * d, d, outsp + g * L * d, d);
                }
            });
            const float* op = outsp;
            for (std::int64_t row = 0; row < G * L; ++row) {
                const std::int64_t slot = c0 * L + row;
                const std::int32_t i = order.token[static_cast<std::size_t>(slot)];
                if (i < 0 || padded(i)) continue;
                std::memcpy(roundOut + ((slot / s.nPad) * n + i) * d, op + row * d, static_cast<std::size_t>(d) * sizeof(float));
            }
            ctx.checkpoint("attention", h * groups + grp + 1, heads * groups);
        }

        for (std::int64_t i = 0; i < n; ++i) {
            if (padded(i)) {
                status.u8[static_cast<std::size_t>(h * n + i)] = 2;
                maxH[i] = -std::numeric_limits<float>::infinity();
                rowSumH[i] = 0.0f;
                continue;
            }
            // The union softmax's normaliser: total = log Σ_r exp(lse_r) = M + log Σ_r exp(lse_r − M),
            // kept as M (the largest shift, a float) and the sum Σ_r exp(lse_r − M), so that a weight
            // exp(v − M) / sum loses nothing near -5e4.
            float big = -std::numeric_limits<float>::infinity();
            for (std::int64_t r = 0; r < s.hashes; ++r) big = std::max(big, roundMax[static_cast<std::size_t>(r * n + i)]);
            double sum = 0;
            for (std::int64_t r = 0; r < s.hashes; ++r) sum += std::exp(lse[static_cast<std::size_t>(r * n + i)] - big);
            const double rest = std::log(sum), total = static_cast<double>(big) + rest;
            maxH[i] = big;
            rowSumH[i] = static_cast<float>(sum);
            float* o = outH + i * d;
            for (std::int64_t r = 0; r < s.hashes; ++r) {
                const auto w = static_cast<float>(std::exp(lse[static_cast<std::size_t>(r * n + i)] - total));
                rw[r * n + i] = w;
                const float* src = roundOut + (r * n + i) * d;
                for (std::int64_t c = 0; c < d; ++c) o[c] += w * src[c];
            }
        }
    }
    ctx.endStage();

    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    keepRowStatus(std::move(status), result, ctx);
    result.stats["row_max"] = std::move(rowMax);
    result.stats["row_sum"] = std::move(rowSum);
    result.diagnostics["rotations"] = toPlain(rotations);
    result.diagnostics["buckets"] = std::move(buckets);
    result.diagnostics["sorted"] = std::move(sorted);
    result.diagnostics["round_weights"] = std::move(roundWeights);

    auto& counters = ctx.counters();
    const double entries = static_cast<double>(heads * s.hashes * s.nPad * WL);
    counters.flops = 2.0 * static_cast<double>(heads * n * d * s.hashes * (s.buckets / 2)) + 4.0 * entries * static_cast<double>(d);
    counters.entriesComputed = static_cast<std::int64_t>(entries);
    ctx.noteBytes(outBuffer->size() * sizeof(float) + static_cast<std::uint64_t>(s.hashes * n * d) * 4 +
                  static_cast<std::uint64_t>(2 * (C + s.before + s.after) * L * d + kChunksPerGroup * (L * d * 2 + L * WL)) * 4);
    result.counters = counters;
    return result;
}

}  // namespace

namespace variants::reformer {
std::unique_ptr<Variant> kernel() { return std::make_unique<ReformerAttention>(); }
}  // namespace variants::reformer

}  // namespace attnscope::engine
