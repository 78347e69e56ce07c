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

#include "base/kernels/parallel_heads.h"
#include "base/runtime/worker_threads.h"
#include "base/kernels/blas_gemm.h"
#include "base/kernels/row_argmax.h"
#include "base/kernels/small_gemm.h"
#include "base/kernels/softmax_kernel.h"
#include "base/runtime/seeded_normal.h"
#include "attention/variants/shared/pattern_variant.h"
#include "attention/variants/reformer/reformer_geometry.h"

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
PlainTensor drawRotations(std::int64_t heads, std::int64_t d, const ReformerSettings& s, std::uint64_t seed) {
    const std::int64_t half = s.buckets / 2;
    PlainTensor rot = PlainTensor::zeros(DType::F32, {heads, d, s.hashes, half});
    float* p = rot.f32.data();
    const std::int64_t perHead = d * s.hashes * half;
    for (std::int64_t h = 0; h < heads; ++h) {
        SeededNormal gen(mixSeed(seed, kRotationStream + static_cast<std::uint64_t>(h)));
        for (std::int64_t i = 0; i < perHead; ++i) p[h * perHead + i] = static_cast<float>(gen.normal());
    }
    return rot;
}

// out = each of `rows` rows of x divided by max(|row|, 1e-12) (torch's F.normalize), the norm
// taken as the weights take it (reformer_weights.cpp), on the kernels' threads.
void normaliseRows(const float* x, std::int64_t rows, std::int64_t d, float* out) {
    constexpr std::int64_t kBlock = 4096;
    forEachItem((rows + kBlock - 1) / kBlock, [&](std::int64_t block, int) {
        for (std::int64_t r = block * kBlock; r < std::min(rows, (block + 1) * kBlock); ++r) {
            double sq = 0;
            for (std::int64_t c = 0; c < d; ++c) sq += static_cast<double>(x[r * d + c]) * x[r * d + c];
            const auto inv = static_cast<float>(1.0 / std::max(std::sqrt(sq), 1e-12));
            for (std::int64_t c = 0; c < d; ++c) out[r * d + c] = x[r * d + c] * inv;
        }
    });
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
    double scoredKeysPerQuery(const ProblemShape& s, const ParamValues& params) const override {
        const std::int64_t chunkLen = std::max<std::int64_t>(1, std::min(paramInt(params, "chunk_len"), s.n));
        const double window =
            static_cast<double>((paramInt(params, "n_chunks_before") + 1 + paramInt(params, "n_chunks_after")) * chunkLen);
        return static_cast<double>(paramInt(params, "n_hashes")) * std::min(window, static_cast<double>(s.m));
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        const std::int64_t chunkLen = std::max<std::int64_t>(1, std::min(paramInt(params, "chunk_len"), s.n));
        const double window =
            static_cast<double>((paramInt(params, "n_chunks_before") + 1 + paramInt(params, "n_chunks_after")) * chunkLen);
        const double hashes = static_cast<double>(paramInt(params, "n_hashes"));
        const double rows = static_cast<double>(s.heads * s.n), d = static_cast<double>(s.d);
        // kept: output, buckets and sorted order (I64), round weights, two row statistics;
        // scratch: normalised keys, and per worker (two counted) the rounds' outputs and sorted
        // keys and values of one head and a group of 32 chunks' scores
        const double kept = rows * (d * 4 + hashes * 20 + 8);
        const double scratch = rows * d * 4 + 2.0 * (static_cast<double>(s.n) * hashes * d * 12 +
                                                     32.0 * static_cast<double>(chunkLen) * (window + 2 * d) * 4);
        return static_cast<std::uint64_t>(kept + scratch);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;
    bool multipliesWithBlas() const override { return true; }  // (the hash rotations)
};

// The settings a run uses: n_buckets even (0: lucidrains' n / bucket_size, buckets of about one
// chunk, rounded up to even; trax's 2n / chunk_len doubles the hashing GEMM for the same chunks),
// chunk_len at most n (with a notice), each round padded to a multiple of chunk_len.
ReformerSettings reformerSettings(const ParamValues& params, std::int64_t n, RunContext& ctx) {
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
    if (s.buckets == 0) s.buckets = std::max<std::int64_t>(2, (n / s.chunkLen + 1) / 2 * 2);
    s.nPad = (n + s.chunkLen - 1) / s.chunkLen * s.chunkLen;
    if (s.nPad != n)
        ctx.warn("n = " + std::to_string(n) + " is not a multiple of chunk_len = " + std::to_string(s.chunkLen) +
                 "; each hash round is padded with " + std::to_string(s.nPad - n) +
                 " masked slots after its last bucket (padded keys get weight 0, padded queries are dropped)");
    return s;
}

// The hash stage: the random rotations, every token's bucket per round and the rounds' sorted
// orders (kept as diagnostics).
struct LshHashes {
    PlainTensor rotations;  ///< F32 [H, d, rounds, n_buckets/2]
    PlainTensor buckets, sorted;  ///< I64 [H, rounds, n], [H, rounds, nPad]
    std::vector<LshOrder> orders;  ///< per head
};

LshHashes hashHeads(const Qkv& qkv, const ReformerSettings& s, RunContext& ctx) {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), d = qkv.d();
    LshHashes out;
    out.rotations = drawRotations(heads, d, s, ctx.seed);
    out.buckets = ctx.pool().zeros(DType::I64, {heads, s.hashes, n});
    out.sorted = ctx.pool().zeros(DType::I64, {heads, s.hashes, s.nPad});
    const std::int64_t rotationsPerHead = d * s.hashes * (s.buckets / 2);
    const auto blockFloats = static_cast<std::size_t>(std::min(kHashBlockRows, n) * s.hashes * (s.buckets / 2));
    std::vector<float*> projBlocks(static_cast<std::size_t>(kernelThreads()));
    for (std::size_t w = 0; w < projBlocks.size(); ++w) projBlocks[w] = ctx.pool().scratch("reformer.proj" + std::to_string(w), blockFloats);
    out.orders.resize(static_cast<std::size_t>(heads));
    SingleThreadedBlas singleBlas;  // (one head's projections per worker)
    forEachItem(heads, [&](std::int64_t h, int worker) {
        LshOrder& order = out.orders[static_cast<std::size_t>(h)];
        order = hashAndSort(qkv.qHead(h), n, d, out.rotations.f32.data() + h * rotationsPerHead, s,
                            projBlocks[static_cast<std::size_t>(worker)], out.buckets.i64.data() + h * s.hashes * n);
        std::copy(order.token.begin(), order.token.end(), out.sorted.i64.begin() + h * s.hashes * s.nPad);
    });
    return out;
}

// One head's shared-QK attention over its sorted chunks, round by round, then the rounds combined
// by their log-sum-exp (lucidrains' LSHAttention in eval mode).
class ReformerHead {
public:
    /// slot: its scratch's prefix in the pool (one per worker); parallelGroups: the head's chunk
    /// groups on the kernels' threads, with progress (one head at a time), else all on the caller's.
    ReformerHead(const ReformerSettings& s, std::int64_t n, std::int64_t d, const std::vector<std::uint8_t>& keyPadding,
                 RunContext& ctx, std::string slot, bool parallelGroups)
        : m_s(s), m_n(n), m_d(d), m_keyPad(keyPadding), m_ctx(ctx), m_slot(std::move(slot)), m_parallelGroups(parallelGroups),
          m_scale(static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)))),
          m_lse(static_cast<std::size_t>(s.hashes * n)), m_roundMax(static_cast<std::size_t>(s.hashes * n)) {}

    /// q, keys (normalised q), v: the head's [n, d]; fills its output, round weights and row
    /// statistics (rowMax, rowSum [n]) and marks padded rows in status.
    void run(std::int64_t h, std::int64_t heads, const LshOrder& order, const float* q, const float* keys, const float* v,
             float* out, float* roundWeights, float* rowMax, float* rowSum, std::uint8_t* status) {
        m_order = &order;
        m_q = q;
        m_roundOut = scratch("rounds", m_s.hashes * m_n * m_d);
        extendKeys(keys, v);
        const std::int64_t chunks = m_s.chunks();
        const std::int64_t groups = (chunks + kChunksPerGroup - 1) / kChunksPerGroup;
        for (std::int64_t grp = 0; grp < groups; ++grp) {
            attendGroup(grp * kChunksPerGroup, std::min(kChunksPerGroup, chunks - grp * kChunksPerGroup));
            if (m_parallelGroups) m_ctx.checkpoint("attention", h * groups + grp + 1, heads * groups);
        }
        combineRounds(out, roundWeights, rowMax, rowSum, status);
    }

private:
    float* scratch(const char* name, std::int64_t floats) {
        return m_ctx.pool().scratch(m_slot + name, static_cast<std::size_t>(floats));
    }

    bool padded(std::int64_t t) const { return !m_keyPad.empty() && m_keyPad[static_cast<std::size_t>(t)] != 0; }

    void copyRow(float* dst, const float* src, std::int32_t t) const {
        if (t < 0) std::fill(dst, dst + m_d, 0.0f);
        else std::memcpy(dst, src + static_cast<std::int64_t>(t) * m_d, static_cast<std::size_t>(m_d) * sizeof(float));
    }

    // The sorted keys and values once, with the last `before` chunks repeated in front and the
    // first `after` chunks behind: every chunk's window (chunks c - before .. c + after, wrapping)
    // is then the contiguous rows c·L .. c·L + WL of these copies, read in place by the products.
    void extendKeys(const float* keys, const float* v) {
        const std::int64_t L = m_s.chunkLen, C = m_s.chunks(), extChunks = C + m_s.before + m_s.after;
        m_extK = scratch("ext_k", extChunks * L * m_d);
        m_extV = scratch("ext_v", extChunks * L * m_d);
        m_keyToken.resize(static_cast<std::size_t>(extChunks * L));
        m_keyBucket.resize(static_cast<std::size_t>(extChunks * L));
        for (std::int64_t e = 0; e < extChunks; ++e) {
            const std::int64_t wc = ((e - m_s.before) % C + C) % C;
            for (std::int64_t b = 0; b < L; ++b) {
                const std::int32_t t = m_order->token[static_cast<std::size_t>(wc * L + b)];
                m_keyToken[static_cast<std::size_t>(e * L + b)] = t;
                m_keyBucket[static_cast<std::size_t>(e * L + b)] = m_order->bucket[static_cast<std::size_t>(wc * L + b)];
                copyRow(m_extK + (e * L + b) * m_d, keys, t);
                copyRow(m_extV + (e * L + b) * m_d, v, t);
            }
        }
    }

    // One query row of chunk c in sorted slot `slot`: masks (in the reference's order: padding,
    // causal, self, other bucket), then the round's softmax in place; its log-sum-exp kept.
    void softmaxRow(float* x, std::int64_t c, std::int64_t slot) {
        const std::int64_t WL = m_s.window(), L = m_s.chunkLen;
        const std::int32_t i = m_order->token[static_cast<std::size_t>(slot)];
        if (i < 0 || padded(i)) {
            std::fill(x, x + WL, 0.0f);
            return;
        }
        const std::int64_t round = slot / m_s.nPad;
        const std::int32_t qBucket = m_order->bucket[static_cast<std::size_t>(slot)];
        const std::int32_t* kt = m_keyToken.data() + c * L;
        const std::int32_t* kb = m_keyBucket.data() + c * L;
        if (m_keyPad.empty() && m_s.acrossBuckets) {
            maskRowFast(x, kt, WL, i, m_scale, m_s.causal);
        } else {
            for (std::int64_t e = 0; e < WL; ++e) {
                const std::int32_t j = kt[e];
                float value = x[e] * m_scale;
                if (j < 0 || padded(j) || (m_s.causal && i < j)) value = kMaskedScore;
                if (j == i) value = kSelfScore;
                if (!m_s.acrossBuckets && kb[e] != qBucket) value = kMaskedScore;
                x[e] = value;
            }
        }
        // x - max is exact in float even near the self value -5e4, where the float ulp is 0.004;
        // the log-sum-exp itself is kept in double for the same reason.
        float mx = 0, sum = 0;
        expRowsInPlace(x, 1, WL, WL, 1.0f, &mx, &sum);
        const float inv = 1.0f / sum;
        for (std::int64_t e = 0; e < WL; ++e) x[e] *= inv;
        m_lse[static_cast<std::size_t>(round * m_n + i)] = static_cast<double>(mx) + std::log(static_cast<double>(sum));
        m_roundMax[static_cast<std::size_t>(round * m_n + i)] = mx;
    }

    // Chunks c0 .. c0 + G: qs [G, L, d] the chunks' queries, scores [G, L, WL], outs [G, L, d];
    // per chunk scores, masks, softmax and P·V on the kernels' threads, each SGEMM on one thread.
    void attendGroup(std::int64_t c0, std::int64_t G) {
        const std::int64_t L = m_s.chunkLen, WL = m_s.window(), d = m_d;
        float* qsp = scratch("qs", G * L * d);
        float* sp = scratch("scores", G * L * WL);
        float* outsp = scratch("outs", G * L * d);
        for (std::int64_t a = 0; a < G * L; ++a) copyRow(qsp + a * d, m_q, m_order->token[static_cast<std::size_t>(c0 * L + a)]);
        const auto chunk = [&](std::int64_t g) {
            const std::int64_t c = c0 + g;
            smallGemmABt(L, WL, d, qsp + g * L * d, d, m_extK + c * L * d, d, sp + g * L * WL, WL);
            for (std::int64_t row = g * L; row < (g + 1) * L; ++row) softmaxRow(sp + row * WL, c, c0 * L + row);
            smallGemmAB(L, d, WL, sp + g * L * WL, WL, m_extV + c * L * d, d, outsp + g * L * d, d);
        };
        if (m_parallelGroups) {
            SingleThreadedBlas singleBlas;
            forEachItem(G, [&](std::int64_t g, int) { chunk(g); });
        } else {
            for (std::int64_t g = 0; g < G; ++g) chunk(g);
        }
        for (std::int64_t row = 0; row < G * L; ++row) {
            const std::int64_t slot = c0 * L + row;
            const std::int32_t i = m_order->token[static_cast<std::size_t>(slot)];
            if (i < 0 || padded(i)) continue;
            std::memcpy(m_roundOut + ((slot / m_s.nPad) * m_n + i) * d, outsp + row * d, static_cast<std::size_t>(d) * sizeof(float));
        }
    }

    // The union softmax's normaliser: total = log Σ_r exp(lse_r) = M + log Σ_r exp(lse_r − M), kept
    // as M (the largest shift, a float) and the sum Σ_r exp(lse_r − M), so that a weight
    // exp(v − M) / sum loses nothing near -5e4; the rounds' outputs weighted by exp(lse_r − total).
    void combineRounds(float* out, float* rw, float* maxH, float* rowSumH, std::uint8_t* status) const {
        const std::int64_t n = m_n, d = m_d;
        for (std::int64_t i = 0; i < n; ++i) {
            if (padded(i)) {
                status[i] = 2;
                maxH[i] = -std::numeric_limits<float>::infinity();
                rowSumH[i] = 0.0f;
                continue;
            }
            float big = -std::numeric_limits<float>::infinity();
            for (std::int64_t r = 0; r < m_s.hashes; ++r) big = std::max(big, m_roundMax[static_cast<std::size_t>(r * n + i)]);
            double sum = 0;
            for (std::int64_t r = 0; r < m_s.hashes; ++r) sum += std::exp(m_lse[static_cast<std::size_t>(r * n + i)] - big);
            const double total = static_cast<double>(big) + std::log(sum);
            maxH[i] = big;
            rowSumH[i] = static_cast<float>(sum);
            float* o = out + i * d;
            for (std::int64_t r = 0; r < m_s.hashes; ++r) {
                const auto w = static_cast<float>(std::exp(m_lse[static_cast<std::size_t>(r * n + i)] - total));
                rw[r * n + i] = w;
                const float* src = m_roundOut + (r * n + i) * d;
                for (std::int64_t c = 0; c < d; ++c) o[c] += w * src[c];
            }
        }
    }

    const ReformerSettings& m_s;
    std::int64_t m_n, m_d;
    const std::vector<std::uint8_t>& m_keyPad;
    RunContext& m_ctx;
    const std::string m_slot;
    const bool m_parallelGroups;
    float m_scale;
    // Per round and row: the log-sum-exp (double: near the self score -5e4 a float ulp is 0.004)
    // and the max it was shifted by.
    std::vector<double> m_lse;
    std::vector<float> m_roundMax;
    const LshOrder* m_order = nullptr;
    const float* m_q = nullptr;
    float *m_roundOut = nullptr, *m_extK = nullptr, *m_extV = nullptr;
    std::vector<std::int32_t> m_keyToken, m_keyBucket;
};

AttentionResult ReformerAttention::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    requireSelfAttention(info().id, qkv);
    const std::int64_t heads = qkv.heads(), n = qkv.n(), d = qkv.d();
    const ReformerSettings s = reformerSettings(params, n, ctx);
    AttentionResult result = startResult(info().id, params, qkv);
    result.params["n_buckets"] = s.buckets;  // the values actually used, so the file recomputes
    result.params["chunk_len"] = s.chunkLen;
    const std::vector<std::uint8_t>& keyPad = qkv.keyPadding;

    ctx.beginStage("hash");
    LshHashes hashes = hashHeads(qkv, s, ctx);
    ctx.endStage();

    ctx.beginStage("attention");
    auto outBuffer = ctx.pool().resultBuffer("reformer.output", static_cast<std::size_t>(heads * n * d));
    std::fill(outBuffer->begin(), outBuffer->end(), 0.0f);
    // keys: [H, n, d] = q / max(|q|, 1e-12) (F.normalize)
    float* keys = ctx.pool().scratch("reformer.keys", static_cast<std::size_t>(heads * n * d));
    normaliseRows(qkv.q.data.get(), heads * n, d, keys);
    PlainTensor roundWeights = ctx.pool().zeros(DType::F32, {heads, s.hashes, n});
    PlainTensor rowMax = ctx.pool().zeros(DType::F32, {heads, n});
    PlainTensor rowSum = ctx.pool().zeros(DType::F32, {heads, n});
    PlainTensor status = ctx.pool().zeros(DType::U8, {heads, n});
    // Heads on the kernels' threads, each worker with its own scratch; with fewer heads than
    // threads, one head at a time with its chunk groups spread over the threads instead.
    const int workers = headWorkers(heads);
    std::vector<std::unique_ptr<ReformerHead>> runners;
    for (int w = 0; w < workers; ++w)
        runners.push_back(std::make_unique<ReformerHead>(s, n, d, keyPad, ctx, "reformer.w" + std::to_string(w) + ".", workers == 1));
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
    forEachHead(heads, "attention", ctx, [&](std::int64_t h, int worker) {
        const float* qp = qkv.qHead(h);
        const float* kp = keys + h * n * d;
        const float* vp = qkv.vHead(h);
        float* outH = outBuffer->data() + h * n * d;
        float* rw = roundWeights.f32.data() + h * s.hashes * n;
        float* maxH = rowMax.f32.data() + h * n;
        float* rowSumH = rowSum.f32.data() + h * n;
        if (s.allowDuplicates) {
            runners[static_cast<std::size_t>(worker)]->run(h, heads, hashes.orders[static_cast<std::size_t>(h)], qp, kp, vp, outH,
                                                           rw, maxH, rowSumH, status.u8.data() + h * n);
            return;
        }
        // Each distinct key once: the union of the rounds' candidates as one softmax, row by row.
        const ReformerGeometry geometry(s, n, hashes.sorted.i64.data() + h * s.hashes * s.nPad,
                                        hashes.buckets.i64.data() + h * s.hashes * n, keyPad);
        distinctKeysAttention(geometry, qp, kp, vp, n, d, scale, s.hashes, outH, rw, maxH, rowSumH, status.u8.data() + h * n,
                              keyPad);
    });
    ctx.endStage();

    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    keepRowStatus(std::move(status), result, ctx);
    result.stats["row_max"] = std::move(rowMax);
    result.stats["row_sum"] = std::move(rowSum);
    result.diagnostics["rotations"] = std::move(hashes.rotations);
    result.diagnostics["buckets"] = std::move(hashes.buckets);
    result.diagnostics["sorted"] = std::move(hashes.sorted);
    result.diagnostics["round_weights"] = std::move(roundWeights);

    auto& counters = ctx.counters();
    const std::int64_t L = s.chunkLen, WL = s.window(), C = s.chunks();
    const double entries = static_cast<double>(heads * s.hashes * s.nPad * WL);
    counters.flops = 2.0 * static_cast<double>(heads * n * d * s.hashes * (s.buckets / 2)) + 4.0 * entries * static_cast<double>(d);
    counters.entriesComputed = static_cast<std::int64_t>(entries);
    ctx.noteBytes(outBuffer->size() * sizeof(float) + static_cast<std::uint64_t>(heads * n * d) * 4 +
                  static_cast<std::uint64_t>(workers) *
                      static_cast<std::uint64_t>(s.hashes * n * d + 2 * (C + s.before + s.after) * L * d + kChunksPerGroup * (L * d * 2 + L * WL)) * 4);
    result.counters = counters;
    return result;
}

}  // namespace

namespace variants::reformer {
std::unique_ptr<Variant> kernel() { return std::make_unique<ReformerAttention>(); }
}  // namespace variants::reformer

}  // namespace attnscope::engine
