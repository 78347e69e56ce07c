#include "views/data/head_matrix_source.h"

#include <attnscope/weight_overview.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace attnscope::views {

void HeadMatrixSource::setResult(std::shared_ptr<const engine::RunResult> result) {
    if (result == m_result) return;
    m_cache.clear();
    ++m_serial;
    m_result = std::move(result);
    m_poolingHead = -1;
    m_stoppedHead = -1;
    m_poolTickets.drop();
    m_regionTickets.drop();
    m_regionJob = RegionJob{};
}

PoolMode HeadMatrixSource::modeFor(const engine::AttentionResult& r, PoolMode asked) {
    if (std::max(r.n, r.m) <= HeadMatrix::kMaxDisplaySide) return PoolMode::Max;
    if (r.n * r.m > kMaxPooledMaxWeights && r.weights && engine::poolsSumsByFactors(*r.weights)) return PoolMode::Mean;
    return asked;
}

const engine::AttentionResult* HeadMatrixSource::entry(int resultIndex) const {
    if (!m_result || resultIndex < 0 || resultIndex >= static_cast<int>(m_result->results.size())) return nullptr;
    return &m_result->results[static_cast<std::size_t>(resultIndex)];
}

HeadMatrixSource::Matrix HeadMatrixSource::cached(const HeadKey& key) {
    for (auto it = m_cache.begin(); it != m_cache.end(); ++it) {
        if (!(it->key == key)) continue;
        CacheEntry hit = *it;
        m_cache.erase(it);
        m_cache.push_front(hit);
        return hit.matrix;
    }
    return nullptr;
}

void HeadMatrixSource::cache(const HeadKey& key, Matrix matrix) {
    if (cached(key)) return;
    m_cache.push_front({key, std::move(matrix)});
    while (static_cast<int>(m_cache.size()) > kCacheSize) m_cache.pop_back();
}

HeadMatrixSource::Matrix HeadMatrixSource::poolNow(const HeadKey& key) {
    if (auto hit = cached(key)) return hit;
    const engine::AttentionResult* r = entry(key.resultIndex);
    if (!r) return nullptr;
    ++m_poolingCount;
    auto matrix = std::make_shared<const HeadMatrix>(HeadMatrix::fromResult(*r, key.head, HeadMatrix::kMaxDisplaySide, key.mode));
    cache(key, matrix);
    return matrix;
}

bool HeadMatrixSource::poolsInBackground(const HeadKey& key) {
    const engine::AttentionResult* r = entry(key.resultIndex);
    return r && r->n * r->m > m_backgroundWeights && !cached(key);
}

std::optional<HeadMatrixSource::PoolJob> HeadMatrixSource::startPooling(const HeadKey& key) {
    m_stoppedHead = -1;
    if (isPooling() && m_poolJob.serial == m_serial && m_poolJob.key == key) return std::nullopt;
    PoolJob job;
    job.progress = std::make_shared<PoolProgress>();
    job.ticket = m_poolTickets.start();
    job.serial = m_serial;
    job.key = key;
    // HeadMatrix is plain data: the worker holds the result alive and touches nothing else.
    job.work = [run = m_result, key, progress = job.progress]() -> Matrix {
        if (!run || key.resultIndex < 0 || key.resultIndex >= static_cast<int>(run->results.size())) return nullptr;
        const auto keepGoing = [&progress](double done) {
            progress->permille.store(static_cast<int>(done * 1000.0), std::memory_order_relaxed);
            return !progress->stop.load(std::memory_order_relaxed);
        };
        auto matrix = std::make_shared<const HeadMatrix>(HeadMatrix::fromResult(
            run->results[static_cast<std::size_t>(key.resultIndex)], key.head, HeadMatrix::kMaxDisplaySide, key.mode,
            keepGoing));
        return matrix->complete() ? matrix : nullptr;
    };
    m_poolJob = job;
    m_poolJob.work = nullptr;  // the copy kept here must not hold the result alive
    m_poolingHead = key.head;
    ++m_poolingCount;
    return job;
}

bool HeadMatrixSource::pooled(const PoolJob& job, const Matrix& matrix) {
    const bool current = isPooling() && m_poolTickets.isLatest(job.ticket);
    if (matrix && job.serial == m_serial) cache(job.key, matrix);
    if (!current || job.progress->stop.load()) return false;
    m_poolingHead = -1;
    return true;
}

int HeadMatrixSource::poolingPercent() const {
    return isPooling() && m_poolJob.progress ? m_poolJob.progress->permille.load(std::memory_order_relaxed) / 10 : 0;
}

void HeadMatrixSource::stopPooling() {
    if (!isPooling()) return;
    m_poolJob.progress->stop = true;
    m_stoppedHead = m_poolingHead;
    m_poolingHead = -1;
}

void HeadMatrixSource::cancelPooling() {
    m_poolingHead = -1;
    m_stoppedHead = -1;
}

std::optional<CellBox> HeadMatrixSource::regionFor(std::int64_t q0, std::int64_t q1, std::int64_t k0, std::int64_t k1,
                                                   std::int64_t rows, std::int64_t cols, const CellBox& shown) {
    const std::int64_t side = HeadMatrix::kMaxDisplaySide;
    if (k1 - k0 + 1 > side || q1 - q0 + 1 > side) return std::nullopt;
    // One axis: the view [a, b] of `total` cells plus kRegionMargin of its span on each side.
    const auto window = [side](std::int64_t a, std::int64_t b, std::int64_t total, std::int64_t prev0,
                               std::int64_t prevN) {
        const std::int64_t span = b - a + 1;
        if (prevN > 0 && a >= prev0 && b < prev0 + prevN) return std::pair<std::int64_t, std::int64_t>(prev0, prevN);
        const auto margin = static_cast<std::int64_t>(std::ceil(static_cast<double>(span) * kRegionMargin));
        const std::int64_t want = std::min({side, total, span + 2 * margin});
        const std::int64_t slack = want - span;
        std::int64_t start = a - slack / 2;
        if (prevN > 0 && b >= prev0 + prevN) start = a - slack / 8;
        else if (prevN > 0 && a < prev0) start = a - slack + slack / 8;
        return std::pair<std::int64_t, std::int64_t>(std::clamp<std::int64_t>(start, 0, total - want), want);
    };
    const bool had = !shown.empty();
    const auto [c0, cn] = window(k0, k1, cols, had ? shown.col0 : 0, had ? shown.cols : 0);
    const auto [r0, rn] = window(q0, q1, rows, had ? shown.row0 : 0, had ? shown.rows : 0);
    return CellBox{r0, c0, rn, cn};
}

HeadMatrixSource::RegionJob HeadMatrixSource::startRegion(int resultIndex, int head, const CellBox& box,
                                                          std::shared_ptr<HeadMatrix> spare) {
    RegionJob job;
    job.ticket = m_regionTickets.start();
    job.serial = m_serial;
    job.head = head;
    job.box = box;
    if (!spare) spare = std::make_shared<HeadMatrix>();
    job.work = [run = m_result, resultIndex, head, box, spare]() -> std::shared_ptr<HeadMatrix> {
        if (!run || resultIndex < 0 || resultIndex >= static_cast<int>(run->results.size())) return nullptr;
        return std::make_shared<HeadMatrix>(HeadMatrix::fromRegion(run->results[static_cast<std::size_t>(resultIndex)],
                                                                   head, box.row0, box.col0, box.rows, box.cols,
                                                                   std::move(*spare)));
    };
    m_regionJob = job;
    m_regionJob.work = nullptr;  // the copy kept here must not hold the result alive
    return job;
}

bool HeadMatrixSource::pendingRegionCovers(int head, std::int64_t q0, std::int64_t q1, std::int64_t k0,
                                           std::int64_t k1) const {
    return m_regionJob.ticket != 0 && m_regionJob.serial == m_serial && m_regionJob.head == head &&
           m_regionJob.box.covers(q0, q1, k0, k1);
}

bool HeadMatrixSource::regionBuilt(const RegionJob& job, const std::shared_ptr<HeadMatrix>& built, int shownHead) {
    if (!m_regionTickets.isLatest(job.ticket)) return false;  // a later region was asked for
    m_regionJob = RegionJob{};
    return built && job.serial == m_serial && job.head == shownHead;
}

}  // namespace attnscope::views
