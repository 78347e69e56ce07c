#pragma once
// The one definition of a pattern variant's pattern (sparse_strided, sparse_fixed, longformer,
// bigbird, star): which keys each query row may attend, and why, in the block form the kernel
// computes (dense_plan_kernel.cpp). Everything else derives from it: the row keys and reasons of
// the weight tiles (PatternRows below), the mask view, `--write-pattern`, and the kernel's work.
// Plain C++ (no LibTorch), so result files are read back and tiles recomputed without it.
//
// A group is a set of query rows (an arithmetic progression) times the concatenation of key
// segments (arithmetic progressions, or runs of the pattern's gathered keys; a segment may
// repeat, which counts its keys twice, as BigBird's duplicated blocks do). Row i of the group may
// attend, in a masked segment, the keys with index in [lo, hi) of that segment (given by
// `range`); every key of the other segments. A row may lie in several groups (its keys are the
// union, duplicates counted). The strided rule adds keys j ≡ i (mod step) beyond a gap.

#include <attnscope/types.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

namespace attnscope::engine {

struct DenseSegment {
    std::int64_t keyStart = 0, keyStep = 1, keyCount = 0;
    bool masked = false;    ///< restricted per row by DensePlan::range
    bool gathered = false;  ///< keys gatheredKeys[keyStart + t] (keyStep 1), read from a per-head copy
    PatternReason reason = PatternReason::Local;  ///< why its keys are allowed
    bool skipExcluded = false;  ///< the keys DensePlan::excluded marks are not in this segment
};

struct DenseGroup {
    std::int64_t rowStart = 0, rowStep = 1, rowCount = 0;
    std::int64_t segBegin = 0, segEnd = 0;  ///< into DensePlan::segments
};

/// The pattern of one head (see the file comment).
struct DensePlan {
    std::vector<DenseSegment> segments;
    std::vector<DenseGroup> groups;
    /// Keys that gathered segments index into (sorted or not; copied once per head, so that a
    /// group reads e.g. all earlier summary keys as one run instead of one segment per block).
    std::vector<std::int32_t> gatheredKeys;
    /// Allowed key indices [lo, hi) (clamped afterwards) of row `query` in the group's masked
    /// segment number segInGroup; lo, hi come in as [0, seg.keyCount). Captures by value: the
    /// pattern outlives the run that built it (the result's weights read it).
    std::function<void(std::int64_t query, std::int64_t segInGroup, const DenseSegment& seg, std::int64_t& lo,
                       std::int64_t& hi)>
        range;
    /// True when every query row lies in exactly one group (its softmax is then finished in
    /// place); false when a row's keys are split over several groups (partial softmax merged).
    bool singleCover = true;
    /// Keys of the strided keys pass (strided_keys_pass.h), run after the head's groups: row i
    /// also attends keys j ≡ i (mod step) with j <= i − gap·step and, when `above`,
    /// j >= i + gap·step (reason Stride). step 0: none. Every such row has keys in the groups.
    struct StridedKeys {
        std::int64_t step = 0, gap = 0;
        bool above = false;
    } strided;
    /// [m] 1 = the key is left out of every segment marked skipExcluded (Longformer's window
    /// segments leave out the global keys, which every row attends once, through its global
    /// segment); empty = none.
    std::vector<std::uint8_t> excluded;

    /// A group with the given segments (their reasons as given), the first `masked` of them masked.
    void addGroup(std::int64_t rowStart, std::int64_t rowStep, std::int64_t rowCount,
                  std::initializer_list<DenseSegment> segs, std::int64_t masked);
    /// Starts a group whose segments are then appended with addSegment / addGatheredSegment.
    void beginGroup(std::int64_t rowStart, std::int64_t rowStep, std::int64_t rowCount);
    void addSegment(std::int64_t keyStart, std::int64_t keyStep, std::int64_t keyCount, bool masked = false,
                    PatternReason reason = PatternReason::Local, bool skipExcluded = false);
    /// Appends gathered keys [first, first + count) of gatheredKeys as a segment.
    void addGatheredSegment(std::int64_t first, std::int64_t count, bool masked = false,
                            PatternReason reason = PatternReason::Local);
    /// The allowed key indices [lo, hi) of row i in segment `seg` (number segInGroup of its group),
    /// clamped to the segment.
    void allowedInSegment(std::int64_t i, std::int64_t segInGroup, const DenseSegment& seg, std::int64_t& lo,
                          std::int64_t& hi) const;
};

/// The patterns of every head of one run (heads share one object when their patterns agree).
struct BlockPattern {
    std::int64_t n = 0, m = 0;
    std::vector<std::shared_ptr<const DensePlan>> heads;  ///< [heads]
    const DensePlan& head(std::int64_t h) const { return *heads[static_cast<std::size_t>(h)]; }
};

/// One row's allowed keys, ascending and distinct, with the times each is listed and why.
struct RowKeys {
    std::vector<std::int32_t> keys;
    std::vector<std::uint8_t> multiplicity;
    std::vector<std::uint16_t> reasons;  ///< bits (1 << PatternReason)
    void clear() {
        keys.clear();
        multiplicity.clear();
        reasons.clear();
    }
};

/// A row's (key, reason) listing, in any order, into `out`: ascending and distinct keys, a key
/// listed c times with multiplicity c (at most 255) and the OR of its reasons; among equal keys the
/// first-listed reason comes first (stable).
void mergeKeyListing(std::vector<std::pair<std::int32_t, std::uint8_t>>& listing, RowKeys& out);

/// Row access to one head's DensePlan: which groups hold a row (an index built once), and the
/// row's keys from its groups' segments and the strided rule.
class PatternRows {
public:
    PatternRows(std::shared_ptr<const DensePlan> plan, std::int64_t n, std::int64_t m);

    /// The keys of row i, ascending, duplicates merged into multiplicities. `scratch` is reused.
    void rowKeys(std::int64_t i, RowKeys& out, std::vector<std::pair<std::int32_t, std::uint8_t>>& scratch) const;
    /// Entries of row i, duplicates counted (the number a listing would hold).
    std::int64_t rowEntries(std::int64_t i) const;
    const DensePlan& plan() const { return *m_plan; }

private:
    /// fn(segment, lo, hi) for every segment of a group holding row i: its allowed positions [lo, hi).
    template <class Fn>
    void forEachSegment(std::int64_t i, Fn fn) const;
    /// Key of position t of a segment.
    std::int64_t keyAt(const DenseSegment& seg, std::int64_t t) const;
    /// True when `key` is excluded and the segment skips excluded keys.
    bool skips(const DenseSegment& seg, std::int64_t key) const;

    std::shared_ptr<const DensePlan> m_plan;
    std::int64_t m_n = 0, m_m = 0;
    std::vector<std::int64_t> m_rowStart;  ///< [n + 1] into m_groupOf
    std::vector<std::int32_t> m_groupOf;   ///< groups holding each row, in plan order
};

/// Query rows per group of the band-like patterns (the kernel computes 3-6 rows at a time over
/// the rows' own keys, so this sets the setup cost per group, not the waste).
constexpr std::int64_t kPatternRowsPerGroup = 64;

/// Rewrites a pattern's strided rule (DensePlan::strided) as explicit groups of rows of one
/// residue against that residue's keys, for kernels that cannot run the strided keys pass (key
/// padding). Same entries, same reasons.
DensePlan expandStridedRule(const DensePlan& plan, std::int64_t n, std::int64_t m);

}  // namespace attnscope::engine
