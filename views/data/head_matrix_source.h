#pragma once
// Where the heatmap gets the matrices it draws, without Qt or a widget: pooled heads cached per
// (result, head, pooling), the rule for which heads are pooled on a worker thread and which of
// their answers count, and the level of detail, the full-resolution region a zoomed view needs.
// The heatmap runs the jobs this hands out on the views' worker thread (background_job.h) and
// gives their answers back; tests run them in any order they like.

#include "views/data/head_matrix.h"
#include "views/data/latest_job.h"
#include "views/data/pool_mode.h"

#include <attnscope/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>

namespace attnscope::views {

/// One head of one entry of a result, pooled one way.
struct HeadKey {
    int resultIndex = 0;
    int head = -1;
    PoolMode mode = PoolMode::Max;
    friend bool operator==(const HeadKey& a, const HeadKey& b) {
        return a.resultIndex == b.resultIndex && a.head == b.head && a.mode == b.mode;
    }
};

/// Queries [row0, row0 + rows) x keys [col0, col0 + cols) of a head.
struct CellBox {
    std::int64_t row0 = 0, col0 = 0, rows = 0, cols = 0;
    bool empty() const { return rows <= 0 || cols <= 0; }
    /// True when it holds queries [q0, q1] x keys [k0, k1].
    bool covers(std::int64_t q0, std::int64_t q1, std::int64_t k0, std::int64_t k1) const {
        return !empty() && row0 <= q0 && col0 <= k0 && row0 + rows > q1 && col0 + cols > k1;
    }
};

class HeadMatrixSource {
public:
    using Matrix = std::shared_ptr<const HeadMatrix>;
    /// Pooled heads kept per result, so switching back is free.
    static constexpr int kCacheSize = 6;
    /// A zoomed region reaches this fraction of the visible span beyond each edge (within
    /// HeadMatrix::kMaxDisplaySide), so pans and zooms inside it reuse it.
    static constexpr double kRegionMargin = 0.5;
    static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

    /// Shared with the worker: how far it got, and whether the user stopped it.
    struct PoolProgress {
        std::atomic<int> permille{0};
        std::atomic<bool> stop{false};
    };
    /// A head to pool on the worker thread: run `work` there, hand its answer to pooled().
    struct PoolJob {
        std::shared_ptr<PoolProgress> progress;
        std::uint64_t ticket = 0;
        std::uint64_t serial = 0;  // the result it belongs to
        HeadKey key;
        /// Touches only the result it holds; answers null when stopped or out of memory.
        std::function<Matrix()> work;
    };
    /// A full-resolution region to build on the worker thread: run `work`, hand it to regionBuilt().
    struct RegionJob {
        std::uint64_t ticket = 0;  // 0: none
        std::uint64_t serial = 0;
        int head = -1;
        CellBox box;
        std::function<std::shared_ptr<HeadMatrix>()> work;
    };

    /// A new result: the cache empties (entries are keyed by address, which a new result may
    /// reuse) and the answers of jobs in flight stop counting.
    void setResult(std::shared_ptr<const engine::RunResult> result);
    const std::shared_ptr<const engine::RunResult>& result() const { return m_result; }
    /// Bumped by every setResult() that changes the result.
    std::uint64_t serial() const { return m_serial; }

    /// Heads with more than `minWeights` weights that are not cached are pooled in the background;
    /// kNever (the default): every head is pooled at once, as exports and tests expect.
    void setBackgroundWeights(std::int64_t minWeights) { m_backgroundWeights = minWeights < 0 ? 0 : minWeights; }
    /// True when some heads are pooled on the worker thread (the window), false when every head
    /// and region is built at once (exports, tests).
    bool usesWorker() const { return m_backgroundWeights != kNever; }

    /// The pooling a head of `r` is drawn with: `asked` when it is pooled, else Max (an unpooled
    /// head does not depend on the mode, so one entry serves both). Mean, whatever was asked, for
    /// a head of more than kMaxPooledMaxWeights weights that pools its means exactly by factors
    /// (linear, performer: engine::poolsSumsByFactors): its block maxima would take minutes.
    static PoolMode modeFor(const engine::AttentionResult& r, PoolMode asked);
    /// Weights a head may have for its block maxima to be computed (about 3 s here).
    static constexpr std::int64_t kMaxPooledMaxWeights = std::int64_t{1} << 30;

    /// The cached matrix of `key` (made the most recent), or null.
    Matrix cached(const HeadKey& key);
    /// Pools `key` now unless cached, and caches it.
    Matrix poolNow(const HeadKey& key);
    /// True when `key` is pooled on the worker thread: big enough and not cached.
    bool poolsInBackground(const HeadKey& key);
    /// Heads pooled since construction (cache misses), for the cache tests.
    int poolingCount() const { return m_poolingCount; }

    // ---- pooling on the worker thread
    /// The job that pools `key`, or nullopt when that very job is already running (it stays the
    /// one asked for). An earlier job's answer no longer counts for display.
    std::optional<PoolJob> startPooling(const HeadKey& key);
    /// The worker's answer to `job`: cached when it belongs to this result (a superseded pooling
    /// is still right for its head). True when it is the job asked for now and was not stopped:
    /// the heatmap shows it (null: it could not be pooled).
    bool pooled(const PoolJob& job, const Matrix& matrix);
    /// The job asked for now (its work not kept), if any.
    const PoolJob* poolingJob() const { return m_poolingHead >= 0 ? &m_poolJob : nullptr; }
    bool isPooling() const { return m_poolingHead >= 0; }
    int poolingHead() const { return m_poolingHead; }
    /// Share done of the job asked for, 0..100.
    int poolingPercent() const;
    /// The user stopped the job asked for: its worker stops, and stoppedHead() says which head.
    void stopPooling();
    int stoppedHead() const { return m_stoppedHead; }
    /// The job asked for no longer is (another head is shown at once); it runs on and is cached.
    void cancelPooling();

    // ---- level of detail
    /// The region of a head with `rows` x `cols` cells to draw at full resolution for the view of
    /// queries [q0, q1] x keys [k0, k1], given the region drawn now (empty box: none); nullopt when
    /// the view is larger than a region may be. An axis the view has not left keeps its extent;
    /// one it left towards higher (lower) indices puts most of the margin ahead of the view.
    static std::optional<CellBox> regionFor(std::int64_t q0, std::int64_t q1, std::int64_t k0, std::int64_t k1,
                                            std::int64_t rows, std::int64_t cols, const CellBox& shown);
    /// The job that builds `box` of `head` of entry `resultIndex` into `spare`'s storage (taken
    /// over; null: fresh storage), superseding any earlier one. Run its work at once or on the
    /// worker thread.
    RegionJob startRegion(int resultIndex, int head, const CellBox& box, std::shared_ptr<HeadMatrix> spare);
    /// True when the region on its way for `head` covers queries [q0, q1] x keys [k0, k1].
    bool pendingRegionCovers(int head, std::int64_t q0, std::int64_t q1, std::int64_t k0, std::int64_t k1) const;
    const RegionJob* regionJob() const { return m_regionJob.ticket != 0 ? &m_regionJob : nullptr; }
    /// The worker's region for `job`: true when it is the latest asked for, of this result and of
    /// `shownHead`, so it may be drawn.
    bool regionBuilt(const RegionJob& job, const std::shared_ptr<HeadMatrix>& built, int shownHead);

private:
    const engine::AttentionResult* entry(int resultIndex) const;
    void cache(const HeadKey& key, Matrix matrix);

    struct CacheEntry {
        HeadKey key;
        Matrix matrix;
    };
    std::shared_ptr<const engine::RunResult> m_result;
    std::uint64_t m_serial = 0;
    std::int64_t m_backgroundWeights = kNever;
    std::deque<CacheEntry> m_cache;  // most recent first
    int m_poolingCount = 0;
    LatestJob m_poolTickets;
    PoolJob m_poolJob;
    int m_poolingHead = -1;  // m_poolJob.key.head while it is the head asked for, else -1
    int m_stoppedHead = -1;
    LatestJob m_regionTickets;
    RegionJob m_regionJob;
};

}  // namespace attnscope::views
