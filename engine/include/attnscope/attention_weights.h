#pragma once
// Exact attention weights on demand (DESIGN.md "The data contract", version 2). A result keeps
// its output, per-row statistics (the row log-sum-exp, entmax's tau, ...), the draws it made and
// the Q and K it ran on; any weight is recomputed exactly from those. Nothing of size n x window
// is kept: a view or an export asks for a rectangle of one head (tile) or walks rows (forEachRow).

#include <attnscope/tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnscope::engine {

/// Bit (1 << PatternReason) of a reason in a reason set; 0 = the key is not in the pattern.
using ReasonBits = std::uint16_t;

/// The weights of rows [r0, r1) x keys [c0, c1) of one head, row-major.
struct WeightTile {
    int head = 0;
    std::int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
    std::vector<float> weights;            ///< [(r1 - r0) * (c1 - c0)]; 0 outside the pattern
    std::vector<ReasonBits> reasons;       ///< same layout; why each key is allowed (empty unless asked)
    std::vector<std::uint8_t> multiplicity;///< same layout; times the pattern lists the key (empty unless asked)

    std::int64_t rows() const { return r1 - r0; }
    std::int64_t cols() const { return c1 - c0; }
    float at(std::int64_t i, std::int64_t j) const { return weights[static_cast<std::size_t>((i - r0) * cols() + (j - c0))]; }
};

/// One query row's allowed keys, ascending and distinct (a key listed twice is one entry with
/// multiplicity 2 and its summed weight). Pointers are valid during the visit only.
struct RowEntries {
    std::int64_t query = 0;
    std::int64_t count = 0;
    const std::int32_t* keys = nullptr;
    const float* weights = nullptr;
    const ReasonBits* reasons = nullptr;
    const std::uint8_t* multiplicity = nullptr;
};

/// Called per row, rows in ascending order; return false to stop (cancel).
using RowVisitor = std::function<bool(const RowEntries&)>;

/// The exact weights of one AttentionResult, recomputed from what the result keeps. Immutable and
/// safe to use from several threads at once (views call it from their background thread).
class AttentionWeights {
public:
    virtual ~AttentionWeights() = default;

    std::int64_t heads() const { return m_heads; }
    std::int64_t queries() const { return m_n; }
    std::int64_t keys() const { return m_m; }

    /// True when a row may allow (nearly) every key: full, linear, performer, linformer, topk and
    /// entmax compute whole rows. Views then build overviews from tiles, not from row visits.
    virtual bool denseRows() const = 0;

    /// Weights (and, when asked, reasons and multiplicities) of rows [r0, r1) x keys [c0, c1) of
    /// `head`. Throws std::out_of_range for a head or a rectangle outside the result.
    WeightTile tile(int head, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1,
                    bool withReasons = false) const;

    /// Visits rows [r0, r1) of `head` with every allowed key of each row. Returns false when the
    /// visitor stopped it. Throws std::out_of_range outside the result.
    bool forEachRow(int head, std::int64_t r0, std::int64_t r1, const RowVisitor& visit) const;

    /// The weight of one (head, query, key); 0 outside the pattern.
    float weightAt(int head, std::int64_t query, std::int64_t key) const;

    /// Entries of the head's pattern, a key listed c times counting c (the size of a listing,
    /// the useful work). Cheaper than visiting the rows: no weight is computed where it can be
    /// counted without.
    virtual std::int64_t entries(int head) const;

protected:
    AttentionWeights(std::int64_t heads, std::int64_t n, std::int64_t m) : m_heads(heads), m_n(n), m_m(m) {}
    /// tile() after its range checks: fills out.weights (and out.reasons / out.multiplicity when
    /// they are sized), all of which arrive zeroed.
    virtual void fillTile(WeightTile& out) const = 0;
    /// forEachRow() after its range checks.
    virtual bool visitRows(int head, std::int64_t r0, std::int64_t r1, const RowVisitor& visit) const = 0;

private:
    std::int64_t m_heads = 0, m_n = 0, m_m = 0;
};

/// A float32 tensor shared, not copied, between the engine's run and the results made from it
/// (the Q and K every weight is recomputed from). Row-major.
struct SharedFloats {
    std::vector<std::int64_t> shape;
    std::shared_ptr<const float> data;
    /// The values are a read-only mapping of a file: a pass that has finished with some of them
    /// may let their pages go (base/runtime/mapped_pages.h), and a later read faults them back
    /// from the file. What keeps a million-token input's 6 GiB out of the process's memory.
    bool mappedFile = false;

    std::int64_t numel() const {
        std::int64_t c = 1;
        for (auto s : shape) c *= s;
        return c;
    }
    bool empty() const { return !data; }
};

}  // namespace attnscope::engine
