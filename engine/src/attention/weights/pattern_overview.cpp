#include "attention/weights/pattern_overview.h"

#include "attention/weights/overview_cells.h"
#include "attention/weights/panel_scores.h"
#include "base/kernels/softmax_kernel.h"
#include "base/runtime/worker_threads.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace attnscope::engine {
namespace {

// Rows scored together (four steps of the AVX-512 panel kernel's 12, eight of AVX2's 6) and keys
// per product: scores of 48 x 1024, 192 KiB.
constexpr std::int64_t kRowBlock = 48;
constexpr std::int64_t kKeyTile = 1024;
// Weights held before they are pooled, in row order: at most 2 MiB. The rows of one residue group
// are a residue's apart (1,024 at a million tokens), each in a cell row of its own, and the next
// residue's rows fall in the same cell rows: pooled group by group, every cell row would be
// fetched again for each residue; pooled in row order, once for all the residues held.
constexpr std::int64_t kStagedWeights = std::int64_t{1} << 19;
static_assert(kStagedWeights >= kRowBlock * kKeyTile, "a product's scores fit the staging");
// Blocks of rows an overview is cut into: enough for two threads to share and for keepGoing to be
// polled often, few enough that a block holds many rows of each residue group (sparse_strided's
// strided keys: rows 1,024 apart at a million tokens), whose keys each product then reads once.
constexpr std::int64_t kBlocksPerOverview = 32;
constexpr std::int64_t kMinBlockRows = 256;

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// The largest, smallest and summed of some weights (all >= 0).
struct SliceSummary {
    float hi = 0.0f, lo = 0.0f;
    double sum = 0.0;
};

// Four floats: a vector on every x86-64 (wider vectors without the CPU's AVX enabled at compile
// time were lowered to memory and ran slower than scalar code).
using Lanes = float __attribute__((vector_size(16)));

SliceSummary summarise(const float* w, std::int64_t count) {
    Lanes hi0{}, hi1{}, sum0{}, sum1{};
    Lanes lo0 = hi0 + std::numeric_limits<float>::infinity(), lo1 = lo0;
    std::int64_t q = 0;
    for (; q + 8 <= count; q += 8) {
        Lanes v0, v1;
        std::memcpy(&v0, w + q, sizeof v0);
        std::memcpy(&v1, w + q + 4, sizeof v1);
        hi0 = v0 > hi0 ? v0 : hi0;
        hi1 = v1 > hi1 ? v1 : hi1;
        lo0 = v0 < lo0 ? v0 : lo0;
        lo1 = v1 < lo1 ? v1 : lo1;
        sum0 += v0;
        sum1 += v1;
    }
    SliceSummary out;
    out.lo = std::numeric_limits<float>::infinity();
    for (int l = 0; l < 4; ++l) {
        out.hi = std::max({out.hi, hi0[l], hi1[l]});
        out.lo = std::min({out.lo, lo0[l], lo1[l]});
        out.sum += static_cast<double>(sum0[l]) + static_cast<double>(sum1[l]);
    }
    for (; q < count; ++q) {
        out.hi = std::max(out.hi, w[q]);
        out.lo = std::min(out.lo, w[q]);
        out.sum += w[q];
    }
    return out;
}

// A row's weights of positions [a, a + count) of a segment, held at staged[at].
struct StagedRun {
    std::int64_t row = 0;
    const DenseSegment* seg = nullptr;
    std::int64_t a = 0, count = 0;
    std::size_t at = 0;
};

// Pieces whose rows and keys both step by multiples of the factor (sparse_strided's residue
// groups, when the factor divides the stride): weight (row u, key position t) of such a piece lies
// in cell (row0 + u·rowStep, col0 + t·colStep), and every residue of one cell has the same row0
// and col0 (512 residues at a million tokens). Their weights are pooled here elementwise, in
// loops the compiler vectorises, and the cells take the grid once per run of such pieces.
struct CellGrid {
    std::int64_t row0 = -1, col0 = 0, rowStep = 0, colStep = 0, rows = 0, cols = 0;
    ReasonBits bit = 0;
    std::vector<float> hi, lo;
    std::vector<double> sum;
    std::vector<std::int64_t> first, last;  ///< [rows] positions touched
    bool holds(std::int64_t r0, std::int64_t c0, std::int64_t rs, std::int64_t cs, std::int64_t nr, std::int64_t nc,
               ReasonBits b) const {
        return row0 == r0 && col0 == c0 && rowStep == rs && colStep == cs && rows == nr && cols == nc && bit == b;
    }
};

// The head's consecutive keys in panels (panel_scores.h), the last kPanels used: a band's groups
// read mostly the keys the group before read (sparse_strided's 96 rows against 1,120 keys a
// group at a million tokens), so each panel is packed about once.
struct PanelRing {
    static constexpr std::int64_t kPanels = 128;  // (more than a key tile's 1,024 keys span)
    std::vector<float> panels;       ///< [kPanels][d][16]
    std::vector<std::int64_t> held;  ///< [kPanels] the panel each slot holds; -1: none
};

// One thread's buffers, kept from block to block of one overview.
struct GroupScratch {
    std::vector<float> queries, keys, staged;  ///< keys: one tile's keys in panels
    std::vector<float> gathered;               ///< one tile's gathered key rows
    std::vector<const float*> panelAt;         ///< one tile's panels in the ring
    PanelRing ring;
    std::vector<std::int64_t> lo, hi;
    std::vector<StagedRun> runs;
    std::size_t used = 0;  ///< floats of `staged` in use
    CellGrid grid;
};

// The rows of one block of the overview, group by group, on one thread.
class BlockPooling {
public:
    BlockPooling(const GroupPooling& pooling, const PatternHead& head, WeightOverview& out, ReasonEntries& entries,
                 GroupScratch& s)
        : m_pooling(pooling), m_plan(pooling.plan), m_head(head), m_out(out), m_entries(entries), m_s(s) {
        m_s.queries.resize(static_cast<std::size_t>(kRowBlock * head.d));
        m_s.keys.resize(static_cast<std::size_t>(panelFloats16(kKeyTile, head.d)));
        m_s.gathered.resize(static_cast<std::size_t>(kKeyTile * head.d));
        m_s.panelAt.resize(static_cast<std::size_t>(kKeyTile / kPanelKeys + 2));
        if (m_s.ring.held.empty()) {  // (kept from block to block: the same head's keys)
            m_s.ring.panels.resize(static_cast<std::size_t>(PanelRing::kPanels * kPanelKeys * head.d));
            m_s.ring.held.assign(PanelRing::kPanels, -1);
        }
        if (m_s.staged.empty()) {  // a small region (a zoomed view) holds no more than its weights
            const OverviewRequest& r = out.region;
            const std::int64_t width = r.c1 - r.c0, product = kRowBlock * std::min(kKeyTile, width);
            m_s.staged.resize(static_cast<std::size_t>(std::clamp((r.r1 - r.r0) * width, product, std::max(product, kStagedWeights))));
        }
        m_s.lo.resize(kRowBlock);
        m_s.hi.resize(kRowBlock);
        m_s.runs.clear();
        m_s.used = 0;
        m_s.grid.row0 = -1;
    }
    ~BlockPooling() {
        poolStaged();
        poolGrid();
    }
    BlockPooling(const BlockPooling&) = delete;
    BlockPooling& operator=(const BlockPooling&) = delete;

    /// Rows [i0, i1) of every group that holds some.
    void addRows(std::int64_t i0, std::int64_t i1) {
        for (std::size_t gi = 0; gi < m_plan.groups.size(); ++gi) {
            const DenseGroup& g = m_plan.groups[gi];
            const std::int64_t u0 = std::max<std::int64_t>(0, ceilDiv(i0 - g.rowStart, g.rowStep));
            const std::int64_t u1 = std::min(g.rowCount, ceilDiv(i1 - g.rowStart, g.rowStep));
            if (u0 >= u1) continue;
            if (m_pooling.byRows[gi]) {
                visitRows(g, u0, u1);
                continue;
            }
            for (std::int64_t b0 = u0; b0 < u1; b0 += kRowBlock) scoreRows(g, b0, std::min(u1, b0 + kRowBlock));
        }
    }

private:
    std::int64_t rowOf(const DenseGroup& g, std::int64_t u) const { return g.rowStart + u * g.rowStep; }

    void visitRows(const DenseGroup& g, std::int64_t u0, std::int64_t u1) {
        for (std::int64_t u = u0; u < u1; ++u) {
            const std::int64_t i = rowOf(g, u);
            m_head.weights->forEachRow(m_head.head, i, i + 1, [&](const RowEntries& row) {
                addVisitedRow(m_out, row, m_entries);
                return true;
            });
        }
    }

    // Group rows [u0, u1) (at most kRowBlock): each segment's keys scored in tiles, their weights
    // pooled row by row.
    void scoreRows(const DenseGroup& g, std::int64_t u0, std::int64_t u1) {
        const std::int64_t rows = u1 - u0, d = m_head.d;
        const float* q = m_head.q + rowOf(g, u0) * d;
        if (g.rowStep != 1) {  // rows of one residue, far apart: copied together
            for (std::int64_t r = 0; r < rows; ++r)
                std::memcpy(m_s.queries.data() + r * d, m_head.q + rowOf(g, u0 + r) * d, static_cast<std::size_t>(d) * sizeof(float));
            q = m_s.queries.data();
        }
        for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) {
            const DenseSegment& seg = m_plan.segments[static_cast<std::size_t>(si)];
            std::int64_t x0 = 0, x1 = 0;
            if (!allowedPositions(g, seg, si - g.segBegin, u0, u1, x0, x1)) continue;
            for (std::int64_t t0 = x0; t0 < x1; t0 += kKeyTile) {
                const std::int64_t t1 = std::min(x1, t0 + kKeyTile), cols = t1 - t0;
                const auto need = static_cast<std::size_t>(rows * cols);
                if (m_s.used + need > m_s.staged.size()) {
                    poolStaged();
                    if (need > m_s.staged.size()) m_s.staged.resize(need);  // (gathered keys outside a narrow region)
                }
                float* scores = m_s.staged.data() + m_s.used;
                score(q, rows, seg, t0, t1, scores);
                if (onGrid(g, seg)) {
                    addToGrid(g, seg, u0, rows, t0, cols, scores);
                    continue;
                }
                for (std::int64_t r = 0; r < rows; ++r) {
                    const std::int64_t a = std::max(m_s.lo[r], t0), b = std::min(m_s.hi[r], t1);
                    if (a >= b) continue;
                    const std::size_t at = m_s.used + static_cast<std::size_t>(r * cols + (a - t0));
                    const std::int64_t i = rowOf(g, u0 + r);
                    toWeights(i, seg, a, m_s.staged.data() + at, b - a);
                    m_s.runs.push_back(StagedRun{i, &seg, a, b - a, at});
                }
                m_s.used += need;
            }
        }
    }

    // Whether the group's rows and the segment's keys step by multiples of the factor (CellGrid).
    bool onGrid(const DenseGroup& g, const DenseSegment& seg) const {
        const std::int64_t f = m_out.region.factor;
        return !seg.gathered && seg.keyStep > 1 && seg.keyStep % f == 0 && g.rowStep % f == 0 &&
               !(seg.skipExcluded && !m_plan.excluded.empty());
    }

    // A product's rows [u0, u0 + rows) x positions [t0, t0 + cols) turned into weights and pooled
    // on the grid (started anew, the previous one into its cells, when its cells differ).
    void addToGrid(const DenseGroup& g, const DenseSegment& seg, std::int64_t u0, std::int64_t rows, std::int64_t t0,
                   std::int64_t cols, float* scores) {
        const OverviewRequest& r = m_out.region;
        const std::int64_t f = r.factor;
        const std::int64_t row0 = (rowOf(g, u0) - r.r0) / f, col0 = (keyAt(seg, t0) - r.c0) / f;
        const auto bit = static_cast<ReasonBits>(1u << static_cast<unsigned>(seg.reason));
        CellGrid& grid = m_s.grid;
        if (grid.hi.empty()) {  // (made on first use; poolGrid leaves it cleared)
            grid.hi.assign(static_cast<std::size_t>(kRowBlock * kKeyTile), -std::numeric_limits<float>::infinity());
            grid.lo.assign(static_cast<std::size_t>(kRowBlock * kKeyTile), std::numeric_limits<float>::infinity());
            grid.sum.assign(static_cast<std::size_t>(kRowBlock * kKeyTile), 0.0);
            grid.first.assign(kRowBlock, 0);
            grid.last.assign(kRowBlock, 0);
        }
        if (!grid.holds(row0, col0, g.rowStep / f, seg.keyStep / f, rows, cols, bit)) {
            poolGrid();
            grid.row0 = row0;
            grid.col0 = col0;
            grid.rowStep = g.rowStep / f;
            grid.colStep = seg.keyStep / f;
            grid.rows = rows;
            grid.cols = cols;
            grid.bit = bit;
            std::fill(grid.first.begin(), grid.first.end(), cols);
            std::fill(grid.last.begin(), grid.last.end(), 0);
        }
        std::int64_t listed = 0;
        for (std::int64_t u = 0; u < rows; ++u) {
            const std::int64_t a = std::max(m_s.lo[u], t0), b = std::min(m_s.hi[u], t0 + cols);
            if (a >= b) continue;
            float* w = scores + u * cols + (a - t0);
            toWeights(rowOf(g, u0 + u), seg, a, w, b - a);
            const std::size_t at = static_cast<std::size_t>(u * cols + (a - t0));
            float* hi = grid.hi.data() + at;
            float* lo = grid.lo.data() + at;
            double* sum = grid.sum.data() + at;
            for (std::int64_t t = 0; t < b - a; ++t) {
                hi[t] = w[t] > hi[t] ? w[t] : hi[t];
                lo[t] = w[t] < lo[t] ? w[t] : lo[t];
                sum[t] += w[t];
            }
            grid.first[static_cast<std::size_t>(u)] = std::min(grid.first[static_cast<std::size_t>(u)], a - t0);
            grid.last[static_cast<std::size_t>(u)] = std::max(grid.last[static_cast<std::size_t>(u)], b - t0);
            listed += b - a;
        }
        m_entries[static_cast<std::size_t>(seg.reason)] += listed;
    }

    // The grid into its cells, and cleared.
    void poolGrid() {
        CellGrid& grid = m_s.grid;
        if (grid.row0 < 0) return;
        for (std::int64_t u = 0; u < grid.rows; ++u) {
            const auto row = static_cast<std::size_t>(u);
            const std::size_t rowCells = static_cast<std::size_t>(grid.row0 + u * grid.rowStep) * static_cast<std::size_t>(m_out.cols);
            for (std::int64_t t = grid.first[row]; t < grid.last[row]; ++t) {
                const std::size_t at = static_cast<std::size_t>(u * grid.cols + t);
                if (grid.hi[at] < 0.0f) continue;  // no weight came here
                const std::size_t cell = rowCells + static_cast<std::size_t>(grid.col0 + t * grid.colStep);
                m_out.maxWeight[cell] = std::max(m_out.maxWeight[cell], grid.hi[at]);
                m_out.sumWeight[cell] += grid.sum[at];
                m_out.reasons[cell] |= grid.bit;
                if (grid.lo[at] == 0.0f) m_out.exactZero[cell] = 1;
                grid.hi[at] = -std::numeric_limits<float>::infinity();
                grid.lo[at] = std::numeric_limits<float>::infinity();
                grid.sum[at] = 0.0;
            }
        }
        grid.row0 = -1;
    }

    // The staged weights into their cells, row by row.
    void poolStaged() {
        std::stable_sort(m_s.runs.begin(), m_s.runs.end(), [](const StagedRun& x, const StagedRun& y) { return x.row < y.row; });
        for (const StagedRun& run : m_s.runs) poolRow(run.row, *run.seg, run.a, m_s.staged.data() + run.at, run.count);
        m_s.runs.clear();
        m_s.used = 0;
    }

    // Each row's allowed positions of the segment within the region's keys (m_s.lo, m_s.hi), and
    // their union [x0, x1); false when it is empty.
    bool allowedPositions(const DenseGroup& g, const DenseSegment& seg, std::int64_t segInGroup, std::int64_t u0,
                          std::int64_t u1, std::int64_t& x0, std::int64_t& x1) const {
        const OverviewRequest& r = m_out.region;
        std::int64_t ta = 0, tb = seg.keyCount;
        if (!seg.gathered) {
            ta = std::clamp<std::int64_t>(ceilDiv(r.c0 - seg.keyStart, seg.keyStep), 0, seg.keyCount);
            tb = std::clamp<std::int64_t>(ceilDiv(r.c1 - seg.keyStart, seg.keyStep), ta, seg.keyCount);
        }
        x0 = seg.keyCount;
        x1 = 0;
        for (std::int64_t u = u0; u < u1; ++u) {
            std::int64_t lo = 0, hi = 0;
            m_plan.allowedInSegment(rowOf(g, u), segInGroup, seg, lo, hi);
            lo = std::max(lo, ta);
            hi = std::min(hi, tb);
            m_s.lo[u - u0] = lo;
            m_s.hi[u - u0] = hi;
            if (lo < hi) {
                x0 = std::min(x0, lo);
                x1 = std::max(x1, hi);
            }
        }
        return x0 < x1;
    }

    std::int64_t keyAt(const DenseSegment& seg, std::int64_t t) const {
        return seg.gathered ? m_plan.gatheredKeys[static_cast<std::size_t>(seg.keyStart + t)] : seg.keyStart + t * seg.keyStep;
    }

    // scores[r * (t1 - t0) + (t - t0)] = q_r · key of position t, for positions [t0, t1): consecutive
    // keys from the ring of panels, others packed into panels for the tile.
    void score(const float* q, std::int64_t rows, const DenseSegment& seg, std::int64_t t0, std::int64_t t1, float* scores) {
        const std::int64_t d = m_head.d, cols = t1 - t0;
        if (!seg.gathered && seg.keyStep == 1) {
            const std::int64_t j0 = seg.keyStart + t0, j1 = seg.keyStart + t1;
            for (std::int64_t p = j0 / kPanelKeys; p * kPanelKeys < j1; ++p)
                m_s.panelAt[static_cast<std::size_t>(p - j0 / kPanelKeys)] = ringPanel(p);
            scorePanelList(q, d, rows, m_s.panelAt.data(), j0, j1, d, scores, cols);
            return;
        }
        const float* rowsOfKeys = m_head.k + keyAt(seg, t0) * d;
        std::int64_t ld = seg.keyStep * d;
        if (seg.gathered) {  // (a few global keys) copied together first
            for (std::int64_t t = t0; t < t1; ++t)
                std::memcpy(m_s.gathered.data() + (t - t0) * d, m_head.k + keyAt(seg, t) * d, static_cast<std::size_t>(d) * sizeof(float));
            rowsOfKeys = m_s.gathered.data();
            ld = d;
        }
        toKeyPanels(rowsOfKeys, ld, cols, d, m_s.keys.data());
        scorePanels(q, d, rows, m_s.keys.data(), 0, cols, d, scores, cols);
    }

    // Panel p of the head's keys (keys 16p .. 16p + 15), packed into the ring when not there.
    const float* ringPanel(std::int64_t p) {
        PanelRing& ring = m_s.ring;
        const std::int64_t d = m_head.d, slot = p % PanelRing::kPanels;
        float* panel = ring.panels.data() + slot * kPanelKeys * d;
        if (ring.held[static_cast<std::size_t>(slot)] != p) {
            toKeyPanels(m_head.k + p * kPanelKeys * d, d, std::min(kPanelKeys, m_head.keys - p * kPanelKeys), d, panel);
            ring.held[static_cast<std::size_t>(slot)] = p;
        }
        return panel;
    }

    // Scores of row i at positions [a, a + count) into weights exp(s/√d − row_max) / row_sum
    // (0 for a padded or empty row, and for padded keys).
    void toWeights(std::int64_t i, const DenseSegment& seg, std::int64_t a, float* w, std::int64_t count) const {
        const auto at = static_cast<std::size_t>(i);
        const float sum = m_head.sum[at];
        const bool rowPadded = !m_head.queryPadding->empty() && (*m_head.queryPadding)[at];
        if (rowPadded || !(sum > 0.0f)) {
            std::fill(w, w + count, 0.0f);
            return;
        }
        keptWeightsInPlace(w, count, m_head.scale, m_head.shift[at], static_cast<float>(1.0 / static_cast<double>(sum)));
        if (const auto& padded = *m_head.keyPadding; !padded.empty())
            for (std::int64_t t = 0; t < count; ++t)
                if (padded[static_cast<std::size_t>(keyAt(seg, a + t))]) w[t] = 0.0f;
    }

    // Whether a consecutive run of keys [key, key + count) holds an excluded key the segment skips.
    bool skipsSome(const DenseSegment& seg, std::int64_t key, std::int64_t count) const {
        const auto& before = m_pooling.excludedBefore;
        return seg.skipExcluded && !before.empty() &&
               before[static_cast<std::size_t>(key + count)] != before[static_cast<std::size_t>(key)];
    }

    // Row i's weights of positions [a, a + count) into their cells.
    void poolRow(std::int64_t i, const DenseSegment& seg, std::int64_t a, const float* w, std::int64_t count) {
        const OverviewRequest& r = m_out.region;
        const auto bit = static_cast<ReasonBits>(1u << static_cast<unsigned>(seg.reason));
        const std::size_t rowCells = static_cast<std::size_t>((i - r.r0) / r.factor) * static_cast<std::size_t>(m_out.cols);
        const std::int64_t key0 = keyAt(seg, a);
        std::int64_t listed = count;
        if (!seg.gathered && seg.keyStep == 1 && !skipsSome(seg, key0, count))
            poolRun(rowCells, key0 - r.c0, w, count, bit);
        else
            listed = poolKeys(rowCells, seg, a, w, count, bit);
        m_entries[static_cast<std::size_t>(seg.reason)] += listed;
    }

    // Consecutive keys from region column `offset` on: a cell's slice at a time (max, sum and
    // whether a weight is 0, in eight-lane vectors).
    void poolRun(std::size_t rowCells, std::int64_t offset, const float* w, std::int64_t count, ReasonBits bit) {
        const std::int64_t f = m_out.region.factor;
        for (std::int64_t p = 0; p < count;) {
            const std::int64_t col = offset / f, take = std::min(count - p, (col + 1) * f - offset);
            SliceSummary slice = summarise(w + p, take);
            const std::size_t cell = rowCells + static_cast<std::size_t>(col);
            m_out.maxWeight[cell] = std::max(m_out.maxWeight[cell], slice.hi);
            m_out.sumWeight[cell] += slice.sum;
            m_out.reasons[cell] |= bit;
            if (slice.lo == 0.0f) m_out.exactZero[cell] = 1;
            p += take;
            offset += take;
        }
    }

    // Keys one by one (strided, gathered, or with excluded keys among them); returns those listed.
    // A sparse cell's min stays 0 (keys outside the pattern count as 0), so only max, sum, reasons
    // and exact zeros change.
    std::int64_t poolKeys(std::size_t rowCells, const DenseSegment& seg, std::int64_t a, const float* w,
                          std::int64_t count, ReasonBits bit) {
        const OverviewRequest& r = m_out.region;
        const std::int64_t f = r.factor;
        const bool skips = seg.skipExcluded && !m_plan.excluded.empty();
        std::int64_t listed = 0;
        const auto add = [&](std::int64_t column, float weight) {
            const std::size_t cell = rowCells + static_cast<std::size_t>(column);
            m_out.maxWeight[cell] = std::max(m_out.maxWeight[cell], weight);
            m_out.sumWeight[cell] += weight;
            m_out.reasons[cell] |= bit;
            if (weight == 0.0f) m_out.exactZero[cell] = 1;
            ++listed;
        };
        if (seg.gathered) {
            for (std::int64_t t = 0; t < count; ++t) {
                const std::int64_t key = keyAt(seg, a + t);
                if (key < r.c0 || key >= r.c1 || (skips && m_plan.excluded[static_cast<std::size_t>(key)])) continue;
                add((key - r.c0) / f, w[t]);
            }
            return listed;
        }
        // an arithmetic run inside the region: its column advances by step / f, its remainder by
        // step % f, so no division a key
        const std::int64_t key0 = keyAt(seg, a), columnStep = seg.keyStep / f, remainderStep = seg.keyStep % f;
        std::int64_t column = (key0 - r.c0) / f, remainder = (key0 - r.c0) % f, key = key0;
        for (std::int64_t t = 0; t < count; ++t) {
            if (!(skips && m_plan.excluded[static_cast<std::size_t>(key)])) add(column, w[t]);
            key += seg.keyStep;
            column += columnStep;
            remainder += remainderStep;
            if (remainder >= f) {
                remainder -= f;
                ++column;
            }
        }
        return listed;
    }

    const GroupPooling& m_pooling;
    const DensePlan& m_plan;
    const PatternHead& m_head;
    WeightOverview& m_out;
    ReasonEntries& m_entries;
    GroupScratch& m_s;
};

}  // namespace

bool poolByGroups(const GroupPooling& pooling, const PatternHead& head, WeightOverview& out,
                  const std::function<bool(double)>& keepGoing) {
    const OverviewRequest& r = out.region;
    const std::int64_t f = r.factor;
    std::int64_t blockRows = std::max(kMinBlockRows, ceilDiv(r.r1 - r.r0, kBlocksPerOverview));
    blockRows = ceilDiv(blockRows, f) * f;
    std::vector<GroupScratch> scratch(static_cast<std::size_t>(std::max(kernelThreads(), 1)));
    return addRowsInBlocks(out, blockRows, keepGoing, [&](std::int64_t i0, std::int64_t i1, ReasonEntries& entries, int worker) {
        BlockPooling(pooling, head, out, entries, scratch[static_cast<std::size_t>(worker)]).addRows(i0, i1);
    });
}

}  // namespace attnscope::engine
