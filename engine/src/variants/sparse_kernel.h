#pragma once
// The shared kernel of the pattern variants (sparse_strided, sparse_fixed, longformer, bigbird,
// star): exact softmax attention restricted to a CSR pattern, without any n x m matrix.
//
// The variant lists the pattern (SparsePattern, one row per (head, query) or shared by all
// heads) and a cover of it by tiles: a tile is a set of query rows (an arithmetic progression)
// times a set of keys (an arithmetic progression, or an explicit list that is gathered). Each
// tile's scores are one SGEMM into a reused workspace; a pattern entry takes its score from
// the first tile that contains it, so tiles may overlap. Scores live in an array aligned with
// the pattern's entries ([nnz] per head), the softmax runs on each CSR row (a key listed c times
// gets c copies, so its total weight is c·exp(s)/Z, VARIANTS.md "duplicates count twice"), and
// the output is a second SGEMM per tile over the weights scattered back into the workspace.
// Memory is O(nnz + tile), time O(sum of tile areas · d). The tiles give the weights when they are
// kept, and the whole result for patterns without a dense plan; the output otherwise comes from
// the dense plan (DensePlan below, dense_plan_kernel.cpp).

#include "variants/variant.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace attnscope::engine {

/// Query rows {rowStart + t·rowStep : t < rowCount} times keys {keyStart + t·keyStep : t <
/// keyCount}, or times keyList[listBegin, listEnd) (sorted, distinct) when listBegin >= 0.
struct SparseTile {
    std::int64_t rowStart = 0, rowStep = 1, rowCount = 0;
    std::int64_t keyStart = 0, keyStep = 1, keyCount = 0;
    std::int64_t listBegin = -1, listEnd = -1;
};

struct SparseTiles {
    std::vector<SparseTile> tiles;
    std::vector<std::int32_t> keyList;  ///< storage for list tiles

    /// Adds a tile of rows [r0, r1) step rowStep and keys [k0, k1) step keyStep (k0 is the first
    /// key); empty ranges are skipped.
    void addRange(std::int64_t r0, std::int64_t rowStep, std::int64_t rowCount, std::int64_t k0, std::int64_t keyStep,
                  std::int64_t keyCount);
    /// Adds a tile of the given rows times an explicit sorted key list.
    void addList(std::int64_t r0, std::int64_t rowStep, std::int64_t rowCount, const std::vector<std::int32_t>& keys);
};

/// Builds the tiles of one head; called once per head, before that head is computed.
using SparseTileFn = std::function<void(int head, SparseTiles& tiles)>;

/// The fast path that gives the output whenever nothing is padded (the weights, when kept, come
/// from the tiles above): the pattern of one head is described analytically as groups. A group is a set of query rows (an arithmetic progression)
/// times the concatenation of key segments (arithmetic progressions, or runs of the plan's
/// gathered keys; a segment may repeat, which counts its keys twice, as duplicates in the pattern
/// do). Row i of the group may attend, in a masked segment, the keys with index in [lo, hi) of
/// that segment (given by `range`); every key of the other segments. Scores, softmax and output
/// of a group are products on the allowed keys, an in-place row softmax and a second product: no
/// per-entry pass over the pattern. The allowed entries of the groups must be exactly the
/// pattern's entries of that head.
struct DenseSegment {
    std::int64_t keyStart = 0, keyStep = 1, keyCount = 0;
    bool masked = false;    ///< restricted per row by DensePlan::range
    bool gathered = false;  ///< keys gatheredKeys[keyStart + t] (keyStep 1), read from a per-head copy
};
struct DenseGroup {
    std::int64_t rowStart = 0, rowStep = 1, rowCount = 0;
    std::int64_t segBegin = 0, segEnd = 0;  ///< into DensePlan::segments
};
struct DensePlan {
    std::vector<DenseSegment> segments;
    std::vector<DenseGroup> groups;
    /// Keys that gathered segments index into (sorted or not; copied once per head, so that a
    /// group reads e.g. all earlier summary keys as one run instead of one segment per block).
    std::vector<std::int32_t> gatheredKeys;
    /// Allowed key indices [lo, hi) (clamped afterwards) of row `query` in the group's masked
    /// segment number segInGroup; lo, hi come in as [0, seg.keyCount).
    std::function<void(std::int64_t query, std::int64_t segInGroup, const DenseSegment& seg, std::int64_t& lo,
                       std::int64_t& hi)>
        range;
    /// True when every query row lies in exactly one group (its softmax is then finished in
    /// place); false when a row's keys are split over several groups (partial softmax merged).
    bool singleCover = true;
    /// Keys left to the strided keys pass (strided_keys_pass.h), run after the head's groups:
    /// row i also attends keys j ≡ i (mod step) with j <= i − gap·step and, when `above`,
    /// j >= i + gap·step. step 0: none. Needs every such row to have keys in the groups.
    struct StridedKeys {
        std::int64_t step = 0, gap = 0;
        bool above = false;
    } strided;

    /// A group with the given segments, the first `masked` of them masked.
    void addGroup(std::int64_t rowStart, std::int64_t rowStep, std::int64_t rowCount,
                  std::initializer_list<DenseSegment> segs, std::int64_t masked);
    /// Starts a group whose segments are then appended with addSegment / addGatheredSegment.
    void beginGroup(std::int64_t rowStart, std::int64_t rowStep, std::int64_t rowCount);
    void addSegment(std::int64_t keyStart, std::int64_t keyStep, std::int64_t keyCount, bool masked = false);
    /// Appends gathered keys [first, first + count) of gatheredKeys as a segment.
    void addGatheredSegment(std::int64_t first, std::int64_t count, bool masked = false);
};

/// Fills the dense plan of one head, or returns false when the variant's parameters need the
/// general tile kernel (e.g. global tokens).
using DensePlanFn = std::function<bool(int head, DensePlan& plan)>;

struct SparseKernelInput {
    const SparsePattern* pattern = nullptr;
    SparseTileFn tilesForHead;
    /// [m] 1 = padded key (weight exactly 0); empty = none.
    std::vector<std::uint8_t> keyPadding;
    /// [n] 1 = padded query (row zeroed, row_status 2); empty = none.
    std::vector<std::uint8_t> queryPadding;
    /// Keep the weights aligned with the pattern (F32 [nnz] perHead, [heads, nnz] shared).
    bool keepWeights = true;
    std::string slot;  ///< buffer-pool slot prefix (the variant id)
    /// Optional fast path (used when !keepWeights and there is no padding).
    DensePlanFn densePlan;
};

/// q: [heads, n, d]; k, v: [heads, m, d] (contiguous float32). Fills result.output,
/// result.weights/weightsLayout, rowStatus, emptyRowCount and the counters' flops/entries.
/// Entries no tile covers are computed one by one (correct, slow); a tiling bug costs time only.
void runSparseKernel(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const SparseKernelInput& input,
                     RunContext& ctx, AttentionResult& result);

/// Collects CSR rows. Each row is sorted by key (stable, so among equal keys the first-added
/// reason is kept when duplicates are dropped).
class PatternBuilder {
public:
    PatternBuilder(std::int64_t rows, std::int64_t cols, bool perHead, std::int64_t reserveEntries);
    /// Takes the CSR vectors from the pool's recycled storage (memory an earlier, released result
    /// already mapped), so that a steady-state run builds its pattern without page faults.
    /// rowSets: heads when perHead, else 1.
    PatternBuilder(BufferPool& pool, std::int64_t rows, std::int64_t cols, bool perHead, std::int64_t rowSets,
                   std::int64_t reserveEntries);
    void add(std::int64_t key, PatternReason reason) {
        m_row.push_back({static_cast<std::int32_t>(key), static_cast<std::uint8_t>(reason)});
    }
    /// Closes the current row; keepDuplicates = false keeps one entry per key.
    void endRow(bool keepDuplicates = false);
    /// Appends keys key0, key0 + step, ... (count of them) straight to the current row, without
    /// sorting: the caller appends a row's keys in ascending order (equal keys only as intended
    /// duplicates) and closes it with closeRow(). Not to be mixed with add() in one row.
    void appendRange(std::int64_t key0, std::int64_t step, std::int64_t count, PatternReason reason) {
        if (count <= 0) return;
        auto& c = m_pattern.colIdx;
        const std::size_t old = c.size();
        c.resize(old + static_cast<std::size_t>(count));
        std::int32_t* p = c.data() + old;
        for (std::int64_t t = 0; t < count; ++t) p[t] = static_cast<std::int32_t>(key0 + t * step);
        m_pattern.reason.resize(old + static_cast<std::size_t>(count), static_cast<std::uint8_t>(reason));
    }
    /// Appends one key straight to the current row (see appendRange).
    void append(std::int64_t key, PatternReason reason) {
        m_pattern.colIdx.push_back(static_cast<std::int32_t>(key));
        m_pattern.reason.push_back(static_cast<std::uint8_t>(reason));
    }
    /// Closes a row filled with appendRange / append.
    void closeRow() {
        m_pattern.rowPtr.push_back(static_cast<std::int64_t>(m_pattern.colIdx.size()));
        m_sideHoldsLastRow = false;
    }
    /// Appends a row equal to the last closed row (rows of one query block), without sorting.
    void repeatLastRow();
    SparsePattern finish();

private:
    struct Entry {
        std::int32_t key;
        std::uint8_t reason;
    };
    SparsePattern m_pattern;
    std::vector<Entry> m_row;
    std::vector<std::int32_t> m_lastCols;
    std::vector<std::uint8_t> m_lastReasons;
    bool m_sideHoldsLastRow = false;  ///< m_lastCols/m_lastReasons equal the last closed row
};

/// Bytes of a listed pattern with `entries` entries plus its aligned weights, as the budget check
/// counts them, and the dense export (weights + mask) when keepWeights.
std::uint64_t sparsePatternBytes(const ProblemShape& shape, double entriesPerHead, bool perHead, bool keepWeights);

/// Parameter-schema helpers shared by the sparse variants.
ParamSpec boolParam(const std::string& name, bool value, const std::string& help);
ParamSpec intParam(const std::string& name, std::int64_t value, double minValue, double maxValue, const std::string& help);
ParamSpec choiceParam(const std::string& name, const std::string& value, std::vector<std::string> choices,
                      const std::string& help);
ParamSpec intListParam(const std::string& name, std::vector<std::int64_t> value, double minValue, double maxValue,
                       const std::string& help);

/// Runs the kernel on the variant's pattern (moved into result.pattern) as the "attention"
/// stage, with the request's key padding, and copies the counters into the result.
void runPatternVariant(const Qkv& qkv, SparsePattern pattern, const SparseTileFn& tiles, RunContext& ctx,
                       AttentionResult& result, const DensePlanFn& densePlan = {});

/// Tiles rows {r, r + P, r + 2P, ...} for every residue r < P in chunks of `rowsPerTile`, with
/// keys {r + s·P : s in [s0, s1)} where (s0, s1) = keySpan(u0, u1) for the chunk's row steps
/// [u0, u1) (P = 1: plain blocks of consecutive rows). Keys are clamped to [0, m).
void addResidueTiles(SparseTiles& tiles, std::int64_t n, std::int64_t m, std::int64_t period,
                     std::int64_t rowsPerTile,
                     const std::function<std::pair<std::int64_t, std::int64_t>(std::int64_t, std::int64_t)>& keySpan);

constexpr std::int64_t kSparseRowsPerTile = 64;

/// Throws EngineError(InvalidArgument) naming the variant and the rule when m != n.
void requireSelfAttention(const std::string& variant, const Qkv& qkv);

/// Query padding of self-attention: the key padding when m == n, else empty.
std::vector<std::uint8_t> selfQueryPadding(const Qkv& qkv);

}  // namespace attnscope::engine
