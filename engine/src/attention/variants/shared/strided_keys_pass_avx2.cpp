// The strided keys pass (strided_keys_pass.h) in AVX2: 8 residues per vector, 3 query rows at a
// time, scores, exp and weighted values in turn while the rows' scores are in L1.

#include "attention/variants/shared/strided_keys_pass.h"

#include "base/kernels/cpu_features.h"

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include "base/kernels/exp_avx2.h"
#include "base/kernels/finite_scan.h"
#include "base/kernels/row_exp.h"
#include "base/kernels/small_gemm.h"
#include "base/kernels/transpose8_avx2.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnscope::engine {
namespace {

// Query rows (u) per tile, keys (s) per score tile, value columns per output tile: 3 x 4
// accumulators and a register each for the 3 rows' vectors and the key's (or value's) vector.
constexpr int kRowTile = 3;
constexpr int kKeyTile = 4;
constexpr int kColumnTile = 4;
// Lane rows per group, and keys (lane rows) per block: a group's scores and weighted values stay
// in L2 while its keys and values go by a block at a time, each read once per group (read once
// per tile of 3 rows, the keys and values of a 16k-token head came from L3).
constexpr int kGroupRows = 16 * kRowTile;
constexpr int kKeyBlock = 32;

// The lane rows of one chunk of 8 residues r0..r0+7 in Q, K or V: lane row u (rows u·l + r0 + t)
// has column c as one vector at row(u) + c·colStride. In panels of 8 (copyToPanels; the step is a
// multiple of 8, so a lane row is one panel): colStride 8; transposed [d, ld]: colStride ld.
struct LaneRows {
    const float* base = nullptr;
    std::int64_t rowStride = 0, colStride = 0;
    const float* row(std::int64_t u) const { return base + u * rowStride; }
};

std::int64_t transposedStride(std::int64_t n) {
    std::int64_t ld = (n + 7) / 8 * 8 + 8;  // 8 readable floats past every row's last
    if (ld % 1024 == 0) ld += 8;            // rows 4 KiB apart would share an L1 set
    return ld;
}

bool panelLayout(std::int64_t step) { return step % 8 == 0; }

// Scores S[u][s] (lanes: residues) of the MU lane rows from u0 against the MS lane rows (keys)
// from s0, over all d columns.
template <int MU, int MS>
ATTNSCOPE_AVX2_FMA_TARGET inline __attribute__((always_inline)) void scoreTile(const LaneRows& q, const LaneRows& k,
                                                                                std::int64_t d, std::int64_t u0,
                                                                                std::int64_t s0, float* s,
                                                                                std::int64_t lds) {
    __m256 acc[MU][MS];
    for (int u = 0; u < MU; ++u)
        for (int t = 0; t < MS; ++t) acc[u][t] = _mm256_setzero_ps();
    const float* qr[MU];
    const float* kr[MS];
    for (int u = 0; u < MU; ++u) qr[u] = q.row(u0 + u);
    for (int t = 0; t < MS; ++t) kr[t] = k.row(s0 + t);
    for (std::int64_t c = 0; c < d; ++c) {
        __m256 qv[MU];
        for (int u = 0; u < MU; ++u) qv[u] = _mm256_loadu_ps(qr[u] + c * q.colStride);
        for (int t = 0; t < MS; ++t) {
            const __m256 kv = _mm256_loadu_ps(kr[t] + c * k.colStride);
            for (int u = 0; u < MU; ++u) acc[u][t] = _mm256_fmadd_ps(qv[u], kv, acc[u][t]);
        }
    }
    for (int u = 0; u < MU; ++u)
        for (int t = 0; t < MS; ++t) _mm256_storeu_ps(s + u * lds + t * 8, acc[u][t]);
}

// Scores of the MU lane rows from u0 against the `count` keys from s0, into s[u][s0 + t].
template <int MU>
ATTNSCOPE_AVX2_FMA_TARGET void scoreRows(const LaneRows& q, const LaneRows& k, std::int64_t d, std::int64_t u0,
                                         std::int64_t s0, std::int64_t count, float* s, std::int64_t lds) {
    std::int64_t t = 0;
    for (; t + kKeyTile <= count; t += kKeyTile)
        scoreTile<MU, kKeyTile>(q, k, d, u0, s0 + t, s + (s0 + t) * 8, lds);
    float* rest = s + (s0 + t) * 8;
    switch (count - t) {
        case 3: scoreTile<MU, 3>(q, k, d, u0, s0 + t, rest, lds); break;
        case 2: scoreTile<MU, 2>(q, k, d, u0, s0 + t, rest, lds); break;
        case 1: scoreTile<MU, 1>(q, k, d, u0, s0 + t, rest, lds); break;
        default: break;
    }
}

// out[u][c] (+)= sum over the `count` keys from s0 of P[u][s] · V[key s][c], for MC columns from
// c0 (lanes: residues; out rows of d vectors). Add: onto what out holds (a later block of keys).
template <int MU, int MC, bool Add>
ATTNSCOPE_AVX2_FMA_TARGET inline __attribute__((always_inline)) void valueTile(const LaneRows& v, std::int64_t s0,
                                                                                std::int64_t count, std::int64_t c0,
                                                                                const float* p, std::int64_t ldp,
                                                                                float* out, std::int64_t d) {
    __m256 acc[MU][MC];
    for (int u = 0; u < MU; ++u)
        for (int c = 0; c < MC; ++c)
            acc[u][c] = Add ? _mm256_loadu_ps(out + (u * d + c0 + c) * 8) : _mm256_setzero_ps();
    for (std::int64_t t = s0; t < s0 + count; ++t) {
        const float* vr = v.row(t) + c0 * v.colStride;
        __m256 pv[MU];
        for (int u = 0; u < MU; ++u) pv[u] = _mm256_loadu_ps(p + u * ldp + t * 8);
        for (int c = 0; c < MC; ++c) {
            const __m256 vv = _mm256_loadu_ps(vr + c * v.colStride);
            for (int u = 0; u < MU; ++u) acc[u][c] = _mm256_fmadd_ps(pv[u], vv, acc[u][c]);
        }
    }
    for (int u = 0; u < MU; ++u)
        for (int c = 0; c < MC; ++c) _mm256_storeu_ps(out + (u * d + c0 + c) * 8, acc[u][c]);
}

template <int MU, bool Add>
ATTNSCOPE_AVX2_FMA_TARGET void valueColumns(const LaneRows& v, std::int64_t d, std::int64_t s0, std::int64_t count,
                                            const float* p, std::int64_t ldp, float* out) {
    std::int64_t c = 0;
    for (; c + kColumnTile <= d; c += kColumnTile) valueTile<MU, kColumnTile, Add>(v, s0, count, c, p, ldp, out, d);
    switch (d - c) {
        case 3: valueTile<MU, 3, Add>(v, s0, count, c, p, ldp, out, d); break;
        case 2: valueTile<MU, 2, Add>(v, s0, count, c, p, ldp, out, d); break;
        case 1: valueTile<MU, 1, Add>(v, s0, count, c, p, ldp, out, d); break;
        default: break;
    }
}

template <int MU>
ATTNSCOPE_AVX2_FMA_TARGET void valueRows(const LaneRows& v, std::int64_t d, std::int64_t s0, std::int64_t count,
                                         const float* p, std::int64_t ldp, float* out) {
    if (s0 == 0)
        valueColumns<MU, false>(v, d, s0, count, p, ldp, out);
    else
        valueColumns<MU, true>(v, d, s0, count, p, ldp, out);
}

// row /= sum (rows whose sum is 0 left alone).
ATTNSCOPE_AVX2_FMA_TARGET inline void scaleRow(float* row, std::int64_t d, float sum) {
    if (sum == 0.0f) return;
    const float inv = 1.0f / sum;
    std::int64_t c = 0;
    for (; c + 8 <= d; c += 8) _mm256_storeu_ps(row + c, _mm256_mul_ps(_mm256_loadu_ps(row + c), _mm256_set1_ps(inv)));
    for (; c < d; ++c) row[c] *= inv;
}

// Lane row [d][8] back to rows: out[t][c] = (out[t][c] + lanes[c][t]) · inv[t] for the first
// `valid` rows t (rows d floats apart), 8 columns at a time through a transpose in registers.
ATTNSCOPE_AVX2_FMA_TARGET void addLaneRows(const float* lanes, std::int64_t d, std::int64_t valid, const float* inv,
                                           float* out) {
    std::int64_t c0 = 0;
    for (; c0 + 8 <= d; c0 += 8) {
        __m256 x[8];
        for (int k = 0; k < 8; ++k) x[k] = _mm256_loadu_ps(lanes + (c0 + k) * 8);
        transpose8x8(x);
        for (std::int64_t t = 0; t < valid; ++t) {
            float* o = out + t * d + c0;
            _mm256_storeu_ps(o, _mm256_mul_ps(_mm256_add_ps(_mm256_loadu_ps(o), x[t]), _mm256_set1_ps(inv[t])));
        }
    }
    for (; c0 < d; ++c0)
        for (std::int64_t t = 0; t < valid; ++t) out[t * d + c0] = (out[t * d + c0] + lanes[c0 * 8 + t]) * inv[t];
}

ATTNSCOPE_AVX2_FMA_TARGET inline __m256 laneMask(bool (&valid)[8]) {
    return _mm256_castsi256_ps(_mm256_setr_epi32(-valid[0], -valid[1], -valid[2], -valid[3], -valid[4], -valid[5],
                                                 -valid[6], -valid[7]));
}

// One chunk of 8 residues: lanes t = residues r0 + t.
struct Chunk {
    std::int64_t r0 = 0;
    std::int64_t keysOfLane[8] = {};  ///< keys of residue r0 + t (0 when t is past l)
};

// The scores of lane row u (keys [0, keys) computed, in row[s·8 + t]) become its weights: exp
// against the rows' running max (rescaling a row whose strided score exceeds it by more than
// kMaxReferenceExcess), 0 for keys the row does not attend; the sums go to p.rowSum. Returns the
// (query, key) entries added.
ATTNSCOPE_AVX2_FMA_TARGET std::int64_t rowWeights(const StridedKeysPass& p, const Chunk& chunk, std::int64_t u,
                                                  std::int64_t keys, float* row) {
    const std::int64_t n = p.n, l = p.step, r0 = chunk.r0, iu = u * l + r0;
    const __m256 scale = _mm256_set1_ps(p.scale), minusInf = _mm256_set1_ps(-INFINITY);
    // lane t: query iu + t, allowed keys s in [0, below) and [aboveFrom, keysOfLane[t])
    const std::int64_t below = std::clamp<std::int64_t>(u - p.gap + 1, 0, keys);
    const std::int64_t aboveFrom = p.above ? std::min(keys, u + p.gap) : keys;
    bool valid[8], keyValid[8];
    std::int64_t added = 0;
    for (int t = 0; t < 8; ++t) {
        valid[t] = r0 + t < l && iu + t < n;
        keyValid[t] = valid[t] && (keys - 1) * l + r0 + t < n;  // the last key s = keys - 1
        if (valid[t])
            added += below + (p.above ? std::max<std::int64_t>(0, chunk.keysOfLane[t] - aboveFrom) : 0);
    }
    if (added == 0) {
        std::fill(row, row + keys * 8, 0.0f);
        return 0;
    }
    const __m256 rowMask = laneMask(valid), lastKeyMask = laneMask(keyValid);
    const auto allowed = [&](std::int64_t s) { return s < below || s >= aboveFrom; };
    __m256 mx = minusInf;
    for (std::int64_t s = 0; s < keys; ++s)
        if (allowed(s))
            mx = _mm256_max_ps(mx, _mm256_blendv_ps(minusInf, _mm256_loadu_ps(row + s * 8),
                                                    s == keys - 1 ? lastKeyMask : rowMask));
    const __m256i rowBits = _mm256_castps_si256(rowMask);
    __m256 ref = _mm256_maskload_ps(p.rowMax + iu, rowBits);
    const __m256 excess =
        _mm256_and_ps(_mm256_and_ps(rowMask, _mm256_cmp_ps(mx, minusInf, _CMP_NEQ_OQ)),
                      _mm256_cmp_ps(_mm256_mul_ps(_mm256_sub_ps(mx, ref), scale), _mm256_set1_ps(kMaxReferenceExcess),
                                    _CMP_NLE_UQ));
    if (const int bits = _mm256_movemask_ps(excess); bits != 0) {
        alignas(32) float refs[8], maxes[8];
        _mm256_store_ps(refs, ref);
        _mm256_store_ps(maxes, mx);
        for (int t = 0; t < 8; ++t) {
            if (!(bits >> t & 1)) continue;
            const std::int64_t i = iu + t;
            const float keep = std::exp((refs[t] - maxes[t]) * p.scale);
            for (std::int64_t c = 0; c < p.d; ++c) p.out[i * p.d + c] *= keep;
            p.rowSum[i] *= keep;
            p.rowMax[i] = refs[t] = maxes[t];
        }
        ref = _mm256_load_ps(refs);
    }
    const __m256 shift = _mm256_mul_ps(ref, scale);
    __m256 sum = _mm256_setzero_ps();
    for (std::int64_t s = 0; s < keys; ++s) {
        __m256 e = _mm256_setzero_ps();
        if (allowed(s))
            e = _mm256_and_ps(exp8(_mm256_fmsub_ps(_mm256_loadu_ps(row + s * 8), scale, shift)),
                              s == keys - 1 ? lastKeyMask : rowMask);
        _mm256_storeu_ps(row + s * 8, e);
        sum = _mm256_add_ps(sum, e);
    }
    _mm256_maskstore_ps(p.rowSum + iu, rowBits, _mm256_add_ps(_mm256_maskload_ps(p.rowSum + iu, rowBits), sum));
    return added;
}

// Rows of lane rows [u0, u1) that are valid (t < l - r0, row < n) divided by their sums.
ATTNSCOPE_AVX2_FMA_TARGET void normaliseLaneRows(const StridedKeysPass& p, const Chunk& chunk, std::int64_t u0,
                                                 std::int64_t u1) {
    for (std::int64_t u = u0; u < u1; ++u)
        for (std::int64_t t = 0; t < 8 && chunk.r0 + t < p.step && u * p.step + chunk.r0 + t < p.n; ++t) {
            const std::int64_t i = u * p.step + chunk.r0 + t;
            scaleRow(p.out + i * p.d, p.d, p.rowSum[i]);
        }
}

}  // namespace

std::int64_t stridedKeysScratchFloatsAvx2(std::int64_t n, std::int64_t d, std::int64_t step, bool keyPanels) {
    // panels: one chunk's Q and V lane rows (and all keys, unless the caller has them in panels);
    // transposed: all of Q, K and V
    const std::int64_t chunk = keysPerResidue(n, step) * 8 * d;
    const std::int64_t copies = panelLayout(step) ? 2 * chunk + (keyPanels ? 0 : (n + 7) / 8 * 8 * d)
                                                  : 3 * d * transposedStride(n);
    const std::int64_t scores = kGroupRows * keysPerResidue(n, step) * 8;
    const std::int64_t rowOutputs = kGroupRows * d * 8;
    return copies + scores + rowOutputs;
}

namespace {

// Where the pass keeps the rows in a lane layout, its scores and its output lanes. Panels when a
// chunk of residues starts on a panel (l % 8 == 0): each chunk's Q and V lane rows are copied as
// it starts, into a buffer small enough for L2; keys from the caller's panels of the head. Else
// transposed copies of the head, with zeros past row n (pad lanes' values must be finite: their
// weights are 0). Q and V are scanned for non-finite values as they are copied (p.nonFinite); K
// is the caller's to scan.
struct PassBuffers {
    bool panels = false;
    float *qRows = nullptr, *vRows = nullptr, *kRows = nullptr;
    const float* keyPanels = nullptr;
    std::int64_t ld = 0;    // transposed layout: the row stride
    std::int64_t lds = 0;   // scores: [kGroupRows][maxKeys][8], lds = maxKeys·8 floats per lane row
    float* scores = nullptr;
    float* rowOutputs = nullptr;  // [kGroupRows][d][8]
};

ATTNSCOPE_AVX2_FMA_TARGET PassBuffers layOutBuffers(const StridedKeysPass& p, const float* keyPanels, float* scratch) {
    const std::int64_t n = p.n, d = p.d;
    const std::int64_t maxKeys = keysPerResidue(n, p.step);
    PassBuffers b;
    b.panels = panelLayout(p.step);
    b.keyPanels = keyPanels;
    float* next = scratch;
    if (b.panels) {
        b.qRows = next;
        b.vRows = b.qRows + maxKeys * 8 * d;
        next = b.vRows + maxKeys * 8 * d;
        if (!keyPanels) {
            copyToPanels(n, d, p.k, d, next);
            b.keyPanels = next;
            next += (n + 7) / 8 * 8 * d;
        }
    } else {
        b.ld = transposedStride(n);
        const auto copy = [&](const float* rows, bool* scan) {
            float* dst = next;
            next += d * b.ld;
            if (scan) *scan = *scan || !allFinite(rows, static_cast<std::size_t>(n * d));
            transposeRows(n, d, rows, d, dst, b.ld);
            for (std::int64_t c = 0; c < d; ++c) std::fill(dst + c * b.ld + n, dst + (c + 1) * b.ld, 0.0f);
            return dst;
        };
        b.qRows = copy(p.q, p.nonFinite);
        b.kRows = copy(p.k, nullptr);
        b.vRows = copy(p.v, p.nonFinite);
    }
    b.scores = next;
    next += kGroupRows * maxKeys * 8;
    b.rowOutputs = next;
    b.lds = maxKeys * 8;
    return b;
}

// One chunk of 8 residues r0..r0+7: its lane rows u (rows u·l + r0 + t, u < rows) in Q, K, V.
struct ChunkRows {
    Chunk chunk;
    std::int64_t rows = 0;
    LaneRows q, k, v;
    // the keys s that the tile of rows [u0, u0 + kRowTile) computes: [0, tileKeys) (a row's keys
    // it does not attend get weight 0)
    std::int64_t tileKeys(const StridedKeysPass& p, std::int64_t u0) const {
        const std::int64_t uLast = std::min(rows, u0 + kRowTile) - 1;
        return p.above ? rows : std::min(rows, std::max<std::int64_t>(0, uLast - p.gap + 1));
    }
    std::int64_t tileRows(std::int64_t u0) const { return std::min<std::int64_t>(kRowTile, rows - u0); }
};

ATTNSCOPE_AVX2_FMA_TARGET ChunkRows chunkRows(const StridedKeysPass& p, const PassBuffers& b, std::int64_t r0) {
    const std::int64_t n = p.n, d = p.d, l = p.step;
    ChunkRows c;
    c.chunk.r0 = r0;
    c.rows = (n - r0 + l - 1) / l;  // lane rows u with u·l + r0 < n
    for (int t = 0; t < 8; ++t) c.chunk.keysOfLane[t] = r0 + t < l ? (n - r0 - t + l - 1) / l : 0;
    if (!b.panels) {
        c.q = LaneRows{b.qRows + r0, l, b.ld};
        c.k = LaneRows{b.kRows + r0, l, b.ld};
        c.v = LaneRows{b.vRows + r0, l, b.ld};
        return c;
    }
    for (std::int64_t u = 0; u < c.rows; ++u) {
        const std::int64_t iu = u * l + r0, count = std::min<std::int64_t>(8, n - iu);
        if (u + 1 < c.rows)  // the next lane row, l·d floats on: no hardware prefetcher follows
            for (std::int64_t t = iu + l; t < std::min(n, iu + l + 8); ++t)
                for (std::int64_t col = 0; col < d; col += 16) {
                    __builtin_prefetch(p.q + t * d + col, 0, 3);
                    __builtin_prefetch(p.v + t * d + col, 0, 3);
                }
        copyToPanels(count, d, p.q + iu * d, d, b.qRows + u * 8 * d, p.nonFinite);
        copyToPanels(count, d, p.v + iu * d, d, b.vRows + u * 8 * d, p.nonFinite);
    }
    c.q = LaneRows{b.qRows, 8 * d, 8};
    c.v = LaneRows{b.vRows, 8 * d, 8};
    c.k = LaneRows{b.keyPanels + r0 * d, l * d, 8};
    return c;
}

// Prefetches: the group's output rows (l·d floats apart, written by the groups long before),
// read again at its end, and (panels) the next chunk's query and value rows, copied when it starts.
ATTNSCOPE_AVX2_FMA_TARGET void prefetchOutputRows(const StridedKeysPass& p, std::int64_t r0, std::int64_t g0,
                                                  std::int64_t g1) {
    const std::int64_t n = p.n, d = p.d, l = p.step;
    for (std::int64_t i = g0 * l + r0; i < std::min(n, g1 * l); i += l)
        for (std::int64_t t = i; t < std::min({n, i + 8, i - r0 + l}); ++t)
            for (std::int64_t c = 0; c < d; c += 16) __builtin_prefetch(p.out + t * d + c, 1, 2);
}

ATTNSCOPE_AVX2_FMA_TARGET void prefetchNextChunk(const StridedKeysPass& p, std::int64_t r0, std::int64_t g0,
                                                 std::int64_t g1) {
    const std::int64_t n = p.n, d = p.d, l = p.step;
    for (std::int64_t u = g0; u < g1; ++u)
        for (std::int64_t t = u * l + r0 + 8; t < std::min(n, u * l + r0 + 16); ++t)
            for (std::int64_t c = 0; c < d; c += 16) {
                __builtin_prefetch(p.q + t * d + c, 0, 2);
                __builtin_prefetch(p.v + t * d + c, 0, 2);
            }
}

// One group of lane rows [g0, g1) of a chunk, in four steps while its scores stay in L2: scores
// S[u][s] block by block, weights (exp, sums) row by row, weighted values P·V, then the rows
// added to the output (normalised when p.normalise). Returns the weights added.
ATTNSCOPE_AVX2_FMA_TARGET std::int64_t attendGroup(const StridedKeysPass& p, const PassBuffers& b, const ChunkRows& c,
                                                   std::int64_t g0, std::int64_t g1) {
    const std::int64_t n = p.n, d = p.d, l = p.step, lds = b.lds, r0 = c.chunk.r0;
    std::int64_t groupKeys = 0;
    for (std::int64_t u0 = g0; u0 < g1; u0 += kRowTile) groupKeys = std::max(groupKeys, c.tileKeys(p, u0));
    prefetchOutputRows(p, r0, g0, g1);
    for (std::int64_t s0 = 0; s0 < groupKeys; s0 += kKeyBlock)
        for (std::int64_t u0 = g0; u0 < g1; u0 += kRowTile) {
            const std::int64_t count = std::min(c.tileKeys(p, u0), s0 + kKeyBlock) - s0;
            if (count <= 0) continue;
            float* tileScores = b.scores + (u0 - g0) * lds;
            switch (c.tileRows(u0)) {
                case 3: scoreRows<3>(c.q, c.k, d, u0, s0, count, tileScores, lds); break;
                case 2: scoreRows<2>(c.q, c.k, d, u0, s0, count, tileScores, lds); break;
                default: scoreRows<1>(c.q, c.k, d, u0, s0, count, tileScores, lds); break;
            }
        }
    if (b.panels && r0 + 8 < std::min(l, n)) prefetchNextChunk(p, r0, g0, g1);
    std::int64_t added = 0;
    for (std::int64_t u0 = g0; u0 < g1; u0 += kRowTile) {
        const std::int64_t keys = c.tileKeys(p, u0);
        if (keys == 0) {  // (causal rows before the first strided key)
            if (p.normalise) normaliseLaneRows(p, c.chunk, u0, u0 + c.tileRows(u0));
            continue;
        }
        for (std::int64_t u = u0; u < u0 + c.tileRows(u0); ++u)
            added += rowWeights(p, c.chunk, u, keys, b.scores + (u - g0) * lds);
    }
    for (std::int64_t s0 = 0; s0 < groupKeys; s0 += kKeyBlock)
        for (std::int64_t u0 = g0; u0 < g1; u0 += kRowTile) {
            const std::int64_t count = std::min(c.tileKeys(p, u0), s0 + kKeyBlock) - s0;
            if (count <= 0) continue;
            const float* tileWeights = b.scores + (u0 - g0) * lds;
            float* tileOutputs = b.rowOutputs + (u0 - g0) * d * 8;
            switch (c.tileRows(u0)) {
                case 3: valueRows<3>(c.v, d, s0, count, tileWeights, lds, tileOutputs); break;
                case 2: valueRows<2>(c.v, d, s0, count, tileWeights, lds, tileOutputs); break;
                default: valueRows<1>(c.v, d, s0, count, tileWeights, lds, tileOutputs); break;
            }
        }
    for (std::int64_t u0 = g0; u0 < g1; u0 += kRowTile) {
        if (c.tileKeys(p, u0) == 0) continue;
        for (std::int64_t u = u0; u < u0 + c.tileRows(u0); ++u) {
            const std::int64_t iu = u * l + r0;
            const std::int64_t valid = std::min<std::int64_t>({8, n - iu, l - r0});
            float inv[8];
            for (std::int64_t t = 0; t < valid; ++t) {
                const float sum = p.rowSum[iu + t];
                inv[t] = p.normalise && sum != 0.0f ? 1.0f / sum : 1.0f;
            }
            addLaneRows(b.rowOutputs + (u - g0) * d * 8, d, valid, inv, p.out + iu * d);
        }
    }
    return added;
}

}  // namespace

// Shapes: the chunks of 8 residues r0 = 0, 8, .. < l; each chunk's lane rows u < ceil((n − r0)/l)
// in groups of kGroupRows.
ATTNSCOPE_AVX2_FMA_TARGET std::int64_t addStridedKeysAvx2(const StridedKeysPass& p, const float* keyPanels,
                                                          float* scratch) {
    const PassBuffers buffers = layOutBuffers(p, keyPanels, scratch);
    std::int64_t added = 0;
    for (std::int64_t r0 = 0; r0 < std::min(p.step, p.n); r0 += 8) {
        const ChunkRows chunk = chunkRows(p, buffers, r0);
        for (std::int64_t g0 = 0; g0 < chunk.rows; g0 += kGroupRows)
            added += attendGroup(p, buffers, chunk, g0, std::min(chunk.rows, g0 + kGroupRows));
    }
    return added;
}

}  // namespace attnscope::engine
#endif
