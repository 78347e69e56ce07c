// The heatmap's matrix source without a widget: the pooled-head cache, which background jobs'
// answers count, and the zoomed region the level of detail asks for, worked out by hand.
#include "support/qt_test_support.h"
#include "views/explicit_run.h"
#include "views/test_fixtures.h"

#include "views/data/head_matrix_source.h"

#include <QTest>

using attnscope::testing::fixtureWeight;
using attnscope::testing::makeDenseResult;
using attnscope::views::CellBox;
using attnscope::views::HeadKey;
using attnscope::views::HeadMatrix;
using attnscope::views::HeadMatrixSource;
using attnscope::views::PoolMode;
namespace engine = attnscope::engine;

namespace {

HeadKey headKey(int head) { return HeadKey{0, head, PoolMode::Max}; }

void compareBox(const CellBox& box, std::int64_t row0, std::int64_t col0, std::int64_t rows, std::int64_t cols) {
    QCOMPARE(box.row0, row0);
    QCOMPARE(box.col0, col0);
    QCOMPARE(box.rows, rows);
    QCOMPARE(box.cols, cols);
}

}  // namespace

class TestHeadMatrixSource : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void cachesTheLastHeadsAndForgetsTheOldest() {
        HeadMatrixSource source;
        source.setResult(makeDenseResult(8, 5));
        const auto first = source.poolNow(headKey(0));
        QVERIFY(first);
        QCOMPARE(first->rows(), 5);
        QCOMPARE(first->at(2, 3), fixtureWeight(0, 2, 3));
        QCOMPARE(source.poolNow(headKey(0)).get(), first.get());  // a hit: not pooled again
        QCOMPARE(source.poolingCount(), 1);
        for (int head = 1; head <= HeadMatrixSource::kCacheSize; ++head) source.poolNow(headKey(head));
        QCOMPARE(source.poolingCount(), 1 + HeadMatrixSource::kCacheSize);
        QVERIFY(!source.cached(headKey(0)));  // the oldest of 7 went
        QVERIFY(source.cached(headKey(1)));   // ... and asking makes head 1 the newest
        source.poolNow(headKey(7));
        QVERIFY(source.cached(headKey(1)));
        QVERIFY(!source.cached(headKey(2)));
    }

    void aNewResultEmptiesTheCache() {
        HeadMatrixSource source;
        const auto run = makeDenseResult(2, 4);
        source.setResult(run);
        source.poolNow(headKey(1));
        const auto serial = source.serial();
        source.setResult(run);  // the same result: nothing changes
        QCOMPARE(source.serial(), serial);
        QVERIFY(source.cached(headKey(1)));
        source.setResult(makeDenseResult(2, 4));
        QCOMPARE(source.serial(), serial + 1);
        QVERIFY(!source.cached(headKey(1)));
        QVERIFY(!source.poolNow(HeadKey{3, 0, PoolMode::Max}));  // no such entry
    }

    void modeMattersOnlyForPooledHeads() {
        engine::AttentionResult small, large;
        small.n = small.m = HeadMatrix::kMaxDisplaySide;
        large.n = HeadMatrix::kMaxDisplaySide + 1;
        large.m = 10;
        QCOMPARE(HeadMatrixSource::modeFor(small, PoolMode::Mean), PoolMode::Max);
        QCOMPARE(HeadMatrixSource::modeFor(large, PoolMode::Mean), PoolMode::Mean);
    }

    // A linear head of 33,000 tokens (1.09·10⁹ weights) is drawn by its block means, computed from
    // its feature sums (block maxima would visit every weight); a head without such sums keeps the
    // mode asked for.
    void aLinearHeadPastABillionWeightsIsDrawnByItsExactMeans() {
        const auto run = attnscope::testing::randomExplicitRun(1, 33000, 8, "linear", {}, 5);
        QVERIFY(run);
        const engine::AttentionResult& r = run->results[0];
        QCOMPARE(HeadMatrixSource::modeFor(r, PoolMode::Max), PoolMode::Mean);
        engine::AttentionResult unweighted;
        unweighted.n = unweighted.m = 40000;
        QCOMPARE(HeadMatrixSource::modeFor(unweighted, PoolMode::Max), PoolMode::Max);

        const HeadMatrix matrix = HeadMatrix::fromResult(r, 0, HeadMatrix::kMaxDisplaySide, PoolMode::Mean);
        QVERIFY(matrix.complete());
        QCOMPARE(matrix.poolMode(), PoolMode::Mean);
        const int f = matrix.poolFactor();
        QCOMPARE(f, 17);  // ceil(33,000 / 2,048)
        for (const auto& [row, col] : std::vector<std::pair<int, int>>{{0, 0}, {1000, 3}, {matrix.rows() - 1, matrix.cols() - 1}}) {
            const std::int64_t r0 = std::int64_t{row} * f, c0 = std::int64_t{col} * f;
            const std::int64_t r1 = std::min<std::int64_t>(r0 + f, r.n), c1 = std::min<std::int64_t>(c0 + f, r.m);
            const engine::WeightTile block = r.weights->tile(0, r0, r1, c0, c1);
            double sum = 0;
            for (float w : block.weights) sum += w;
            const double mean = sum / static_cast<double>((r1 - r0) * (c1 - c0));
            QVERIFY2(std::abs(matrix.at(row, col) - mean) <= 1e-4 * mean + 1e-12,
                     qPrintable(QString("cell %1,%2: %3 vs %4").arg(row).arg(col).arg(matrix.at(row, col)).arg(mean)));
        }
    }

    void backgroundPoolingAboveTheThreshold() {
        HeadMatrixSource source;
        source.setResult(makeDenseResult(2, 4));  // 16 weights per head
        QVERIFY(!source.usesWorker());
        QVERIFY(!source.poolsInBackground(headKey(0)));
        source.setBackgroundWeights(16);
        QVERIFY(!source.poolsInBackground(headKey(0)));  // not more than 16
        source.setBackgroundWeights(15);
        QVERIFY(source.usesWorker());
        QVERIFY(source.poolsInBackground(headKey(0)));
        source.poolNow(headKey(0));
        QVERIFY(!source.poolsInBackground(headKey(0)));  // cached
    }

    void onlyTheLatestPoolingIsShownButEveryOneIsKept() {
        HeadMatrixSource source;
        source.setResult(makeDenseResult(3, 4));
        auto job0 = source.startPooling(headKey(0));
        QVERIFY(job0);
        QVERIFY(!source.startPooling(headKey(0)));  // that very job is running
        QCOMPARE(source.poolingHead(), 0);
        auto job1 = source.startPooling(headKey(1));
        QVERIFY(job1);
        QCOMPARE(source.poolingHead(), 1);
        // Answers arrive in any order: the superseded one is cached, not shown.
        const auto matrix0 = job0->work();
        QVERIFY(!source.pooled(*job0, matrix0));
        QCOMPARE(source.cached(headKey(0)).get(), matrix0.get());
        QVERIFY(source.isPooling());
        const auto matrix1 = job1->work();
        QCOMPARE(matrix1->at(3, 0), fixtureWeight(1, 3, 0));
        QVERIFY(source.pooled(*job1, matrix1));
        QVERIFY(!source.isPooling());
        QCOMPARE(source.poolingCount(), 2);
    }

    void answersForAnOldResultAreDropped() {
        HeadMatrixSource source;
        source.setResult(makeDenseResult(1, 4));
        auto job = source.startPooling(headKey(0));
        QVERIFY(job);
        source.setResult(makeDenseResult(1, 4));
        QVERIFY(!source.isPooling());
        QVERIFY(!source.pooled(*job, job->work()));
        QVERIFY(!source.cached(headKey(0)));  // it belongs to the old result
    }

    void stoppingMarksTheHeadAndStopsTheWorker() {
        HeadMatrixSource source;
        source.setResult(makeDenseResult(2, 4));
        auto job = source.startPooling(headKey(1));
        QVERIFY(job);
        QCOMPARE(source.poolingPercent(), 0);
        source.stopPooling();
        QVERIFY(!source.isPooling());
        QCOMPARE(source.stoppedHead(), 1);
        QVERIFY(job->progress->stop.load());
        QVERIFY(!source.pooled(*job, job->work()));  // stopped: not shown
        auto again = source.startPooling(headKey(1));  // "Pool head 1"
        QVERIFY(again);
        QCOMPARE(source.stoppedHead(), -1);
        QVERIFY(source.pooled(*again, again->work()));
    }

    void regionHasTheViewAndHalfItsSpanEachSide() {
        // 100 x 100 visible at queries 100..199, keys 300..399 of a 10000² head: 50 more each side.
        const auto box = HeadMatrixSource::regionFor(100, 199, 300, 399, 10000, 10000, CellBox{});
        QVERIFY(box);
        compareBox(*box, 50, 250, 200, 200);
        // At the top left corner the margin goes past the edge: clamped to 0.
        const auto corner = HeadMatrixSource::regionFor(0, 99, 0, 99, 10000, 10000, CellBox{});
        compareBox(*corner, 0, 0, 200, 200);
        // Larger than a region may be: the pooled head is drawn.
        QVERIFY(!HeadMatrixSource::regionFor(0, HeadMatrix::kMaxDisplaySide, 0, 10, 10000, 10000, CellBox{}));
        // At most kMaxDisplaySide: 1500 + 2 * 750 is capped at 2048.
        const auto wide = HeadMatrixSource::regionFor(5000, 6499, 5000, 6499, 10000, 10000, CellBox{});
        compareBox(*wide, 5000 - 274, 5000 - 274, 2048, 2048);
    }

    void regionKeepsAnAxisTheViewDidNotLeave() {
        const CellBox shown{50, 250, 200, 200};
        // Panned right by 60 keys: queries stay inside (kept), keys left towards higher indices:
        // slack 100, start = 360 - 100 / 8 = 348.
        const auto box = HeadMatrixSource::regionFor(100, 199, 360, 459, 10000, 10000, shown);
        compareBox(*box, 50, 348, 200, 200);
        // Panned left past 250: start = 200 - 100 + 100 / 8 = 112.
        const auto left = HeadMatrixSource::regionFor(100, 199, 200, 299, 10000, 10000, shown);
        compareBox(*left, 50, 112, 200, 200);
        QVERIFY(shown.covers(60, 240, 260, 440));
        QVERIFY(!shown.covers(60, 250, 260, 440));
    }

    void regionJobsBuildExactCellsAndOnlyTheLatestCounts() {
        HeadMatrixSource source;
        source.setResult(makeDenseResult(2, 12));
        const CellBox box{2, 3, 4, 5};
        const auto early = source.startRegion(0, 1, box, nullptr);
        QVERIFY(source.pendingRegionCovers(1, 2, 5, 3, 7));
        QVERIFY(!source.pendingRegionCovers(1, 2, 6, 3, 7));
        QVERIFY(!source.pendingRegionCovers(0, 2, 5, 3, 7));  // another head
        const auto late = source.startRegion(0, 1, CellBox{0, 0, 3, 3}, std::make_shared<HeadMatrix>());
        const auto earlyCells = early.work();
        QCOMPARE(earlyCells->rows(), 4);
        QCOMPARE(earlyCells->cols(), 5);
        QCOMPARE(earlyCells->rowOffset(), 2);
        QCOMPARE(earlyCells->at(1, 2), fixtureWeight(1, 3, 5));
        QVERIFY(!source.regionBuilt(early, earlyCells, 1));  // superseded
        QVERIFY(source.regionJob());
        QVERIFY(!source.regionBuilt(late, late.work(), 0));  // head 0 is shown now
        QVERIFY(!source.regionJob());
        const auto again = source.startRegion(0, 1, box, nullptr);
        QVERIFY(source.regionBuilt(again, again.work(), 1));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestHeadMatrixSource)
#include "test_head_matrix_source.moc"
