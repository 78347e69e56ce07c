// Heatmap colour maps, scales, pooling modes, the pooled-head cache, zoom and level of detail.
#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/data/background_job.h"
#include "views/heatmap/head_heatmap.h"
#include "views/data/head_matrix.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QCoreApplication>
#include <QSignalSpy>
#include <QTest>

#include <cmath>

using attnscope::testing::fixtureWeight;
using attnscope::testing::makeDenseResult;
using attnscope::views::ColorScale;
using attnscope::views::HeadHeatmap;
using attnscope::views::HeadMatrix;
using attnscope::views::HeatmapOptions;
using attnscope::views::InspectionState;
using attnscope::views::PoolMode;
namespace engine = attnscope::engine;

namespace {

/// One dense head n x n with the given row-major values, tokens "t0", "t1", …
std::shared_ptr<const engine::RunResult> makeHead(int n, std::vector<float> values) {
    auto run = std::make_shared<engine::RunResult>();
    run->n = n;
    run->heads = 1;
    for (int i = 0; i < n; ++i) {
        engine::Token token;
        token.text = "t" + std::to_string(i);
        run->input.tokens.push_back(token);
    }
    engine::AttentionResult r;
    r.variantId = "linformer";
    r.heads = 1;
    r.n = r.m = n;
    r.weights = engine::makeDenseWeights(1, n, n, std::move(values));
    run->results.push_back(std::move(r));
    return run;
}

QString tickText(QCPAxis* axis, double at) {
    auto ticker = qSharedPointerDynamicCast<QCPAxisTickerText>(axis->ticker());
    return ticker ? ticker->ticks().value(at) : QString();
}

}  // namespace

class TestHeatmapLod : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void poolingGivesBlockMaxAndMean() {
        // 6 x 6 -> 3 x 3 with 2 x 2 blocks; value = 10 * row + col, so block (bi, bj) has
        // max 10 * (2bi + 1) + 2bj + 1 and mean 10 * (2bi + 0.5) + 2bj + 0.5.
        std::vector<float> v(36);
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) v[static_cast<std::size_t>(i * 6 + j)] = static_cast<float>(10 * i + j);
        const auto run = makeHead(6, v);
        const HeadMatrix maxed = HeadMatrix::fromResult(run->results[0], 0, /*maxSide=*/3, PoolMode::Max);
        const HeadMatrix mean = HeadMatrix::fromResult(run->results[0], 0, /*maxSide=*/3, PoolMode::Mean);
        QCOMPARE(maxed.poolFactor(), 2);
        QCOMPARE(maxed.rows(), 3);
        QCOMPARE(mean.cols(), 3);
        QCOMPARE(mean.poolMode(), PoolMode::Mean);
        for (int bi = 0; bi < 3; ++bi) {
            for (int bj = 0; bj < 3; ++bj) {
                QCOMPARE(maxed.at(bi, bj), static_cast<float>(10 * (2 * bi + 1) + 2 * bj + 1));
                QCOMPARE(mean.at(bi, bj), static_cast<float>(10 * (2 * bi + 0.5) + 2 * bj + 0.5));
            }
        }
        // 5 x 5 by 2: edge blocks average over the cells they have.
        std::vector<float> ones(25, 1.0f);
        ones[24] = 3.0f;  // the 1 x 1 corner block
        const HeadMatrix edge = HeadMatrix::fromResult(makeHead(5, ones)->results[0], 0, 3, PoolMode::Mean);
        QCOMPARE(edge.rows(), 3);
        QCOMPARE(edge.at(0, 2), 1.0f);
        QCOMPARE(edge.at(2, 2), 3.0f);

        // A full-resolution region keeps input offsets.
        const HeadMatrix region = HeadMatrix::fromRegion(run->results[0], 0, 2, 3, 2, 10);
        QCOMPARE(region.rows(), 2);
        QCOMPARE(region.cols(), 3);  // clamped to the matrix
        QCOMPARE(region.rowOffset(), 2);
        QCOMPARE(region.colOffset(), 3);
        QCOMPARE(region.at(1, 2), 35.0f);
    }

    void logScaleFloorsZeros() {
        std::vector<float> v = {0.0f, 0.5f, 0.25f, 0.25f, 0.0f, 1.0f, 0.125f, 0.875f, 0.0f};
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeHead(3, v));
        QVERIFY(!heatmap.logScaleShown());
        QCOMPARE(heatmap.cellValue(0, 0), 0.0);
        QCOMPARE(heatmap.colorRange().first, 0.0);
        HeatmapOptions options;
        options.scale = ColorScale::Log;
        heatmap.setOptions(options);
        QVERIFY(heatmap.logScaleShown());
        QCOMPARE(heatmap.logFloor(), 0.125);  // smallest positive weight > 1e-6 x max
        QCOMPARE(heatmap.cellValue(0, 0), 0.125);
        QCOMPARE(heatmap.cellValue(1, 1), 0.125);
        QCOMPARE(heatmap.cellValue(0, 1), 0.5);
        QCOMPARE(heatmap.colorRange().first, 0.125);
        QCOMPARE(heatmap.colorRange().second, 1.0);
        QVERIFY2(heatmap.colorBarLabel().contains(QStringLiteral("log")), qPrintable(heatmap.colorBarLabel()));

        // Tiny weights: the floor is 1e-6 x max, not the smallest positive value.
        v[1] = 1e-12f;
        heatmap.setResult(makeHead(3, v));
        QCOMPARE(heatmap.logFloor(), 1e-6);
        QCOMPARE(heatmap.cellValue(0, 1), 1e-6);
    }

    void signedDataGetsTheDivergingMapAndASymmetricRange() {
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        HeatmapOptions options;
        options.colormap = QStringLiteral("magma");
        heatmap.setOptions(options);
        heatmap.setResult(makeHead(2, {0.25f, 0.75f, 0.5f, 0.5f}));
        QCOMPARE(heatmap.shownColormap(), QStringLiteral("magma"));
        QCOMPARE(heatmap.colorRange().first, 0.0);
        QCOMPARE(heatmap.colorRange().second, 0.75);

        // Linformer-like signed weights: diverging, centred at 0, symmetric.
        heatmap.setResult(makeHead(2, {-0.3f, 1.2f, 0.1f, -0.05f}));
        QCOMPARE(heatmap.shownColormap(), QStringLiteral("rdbu"));
        const auto [lo, hi] = heatmap.colorRange();
        QCOMPARE(lo, -hi);
        QCOMPARE(hi, static_cast<double>(1.2f));
        QCOMPARE(heatmap.cellValue(0, 0), static_cast<double>(-0.3f));  // data stays signed
        // The log scale cannot show signed data: linear, said in the legend.
        options.scale = ColorScale::Log;
        heatmap.setOptions(options);
        QVERIFY(!heatmap.logScaleShown());
        QCOMPARE(heatmap.colorRange().first, -heatmap.colorRange().second);
        heatmap.setResult(makeHead(2, {-2.0f, 1.0f, 0.1f, 0.0f}));
        QCOMPARE(heatmap.colorRange().first, -2.0);
        QCOMPARE(heatmap.colorRange().second, 2.0);
    }

    void zoomedInAxesShowTokenText() {
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeDenseResult(1, 200));
        QVERIFY(!heatmap.tokenAxes());
        heatmap.setVisibleRange(10, 40, 100, 150);
        QVERIFY(heatmap.tokenAxes());
        QCOMPARE(tickText(heatmap.plot()->xAxis, 10), QStringLiteral("t10"));
        QCOMPARE(tickText(heatmap.plot()->yAxis, 150), QStringLiteral("t150"));
        QCOMPARE(tickText(heatmap.plot()->xAxis, 41), QString());  // only the visible tokens
        heatmap.setVisibleRange(0, 199, 100, 150);                 // keys: too many to read
        QVERIFY(!heatmap.keyAxisShowsTokens());
        QVERIFY(heatmap.queryAxisShowsTokens());
        heatmap.resetZoom();
        QVERIFY(!heatmap.tokenAxes());
        QCOMPARE(heatmap.visibleKeyRange().first, 0.0);
        QCOMPARE(heatmap.visibleKeyRange().second, 199.0);
    }

    void keysAndZoomBySpanChange() {
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeDenseResult(1, 100));
        heatmap.resize(500, 500);
        heatmap.show();
        QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
        const double before = heatmap.visibleKeyRange().second - heatmap.visibleKeyRange().first;
        QTest::keyClick(heatmap.plot(), Qt::Key_Plus);
        const double after = heatmap.visibleKeyRange().second - heatmap.visibleKeyRange().first;
        QVERIFY2(after < before, qPrintable(QStringLiteral("%1 -> %2").arg(before).arg(after)));
        QTest::keyClick(heatmap.plot(), Qt::Key_Minus);
        QTest::keyClick(heatmap.plot(), Qt::Key_Minus);  // no further than the whole matrix
        QCOMPARE(heatmap.visibleKeyRange().first, 0.0);
        QCOMPARE(heatmap.visibleKeyRange().second, 99.0);
    }

    void largeHeadsArePooledOnceAndZoomInAtFullResolution() {
        constexpr int kN = HeadMatrix::kMaxDisplaySide + 1;  // pools by 2
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeDenseResult(2, kN));
        QCOMPARE(heatmap.poolFactor(), 2);
        QCOMPARE(heatmap.dataSize(), QSize((kN + 1) / 2, (kN + 1) / 2));
        QVERIFY2(heatmap.colorBarLabel().contains(QStringLiteral("max of 2×2")), qPrintable(heatmap.colorBarLabel()));
        QVERIFY2(heatmap.title().contains(QStringLiteral("max-pooled 2×2")), qPrintable(heatmap.title()));
        // Block max: the bottom-right of each block is largest in the fixture.
        QCOMPARE(heatmap.cellValue(3, 5), static_cast<double>(fixtureWeight(0, 7, 11)));
        QCOMPARE(heatmap.poolingCount(), 1);
        state.setHead(1);
        state.setHead(0);
        QCOMPARE(heatmap.poolingCount(), 2);  // head 0 came from the cache

        HeatmapOptions options;
        options.pooling = PoolMode::Mean;
        heatmap.setOptions(options);
        QCOMPARE(heatmap.poolingCount(), 3);
        const double mean = (fixtureWeight(0, 6, 10) + fixtureWeight(0, 6, 11) + fixtureWeight(0, 7, 10) +
                             fixtureWeight(0, 7, 11)) / 4.0;
        QVERIFY(std::abs(heatmap.cellValue(3, 5) - mean) < 1e-6);
        QVERIFY2(heatmap.colorBarLabel().contains(QStringLiteral("mean of 2×2")), qPrintable(heatmap.colorBarLabel()));
        options.pooling = PoolMode::Max;
        heatmap.setOptions(options);
        QCOMPARE(heatmap.poolingCount(), 3);

        // Zoomed in: the visible region is drawn cell by cell, with token labels.
        heatmap.setVisibleRange(1000, 1040, 500, 530);
        QVERIFY(heatmap.showsRegion());
        QCOMPARE(heatmap.poolFactor(), 1);
        QCOMPARE(heatmap.headPoolFactor(), 2);
        const auto q0 = heatmap.shownRowOffset(), k0 = heatmap.shownColOffset();
        QVERIFY(q0 <= 500 && k0 <= 1000);
        QCOMPARE(heatmap.cellValue(static_cast<int>(517 - q0), static_cast<int>(1021 - k0)),
                 static_cast<double>(fixtureWeight(0, 517, 1021)));
        QVERIFY(heatmap.tokenAxes());
        QVERIFY2(heatmap.colorBarLabel().contains(QStringLiteral("full resolution")), qPrintable(heatmap.colorBarLabel()));
        QVERIFY2(heatmap.hoverText(517, 1021).contains(QStringLiteral("weight")), qPrintable(heatmap.hoverText(517, 1021)));
        // Panning and zooming inside the region's margin reuse it; leaving it builds another.
        QVERIFY(heatmap.shownColOffset() + heatmap.dataSize().width() > 1040 + 20);
        heatmap.setVisibleRange(1010, 1050, 505, 535);
        QCOMPARE(heatmap.shownRowOffset(), q0);
        QCOMPARE(heatmap.shownColOffset(), k0);
        heatmap.setVisibleRange(1015, 1035, 510, 520);
        QCOMPARE(heatmap.shownColOffset(), k0);
        heatmap.setVisibleRange(1500, 1540, 500, 530);
        QVERIFY(heatmap.showsRegion());
        QVERIFY(heatmap.shownColOffset() != k0);
        const auto k1 = heatmap.shownColOffset();
        QCOMPARE(heatmap.cellValue(static_cast<int>(517 - heatmap.shownRowOffset()), static_cast<int>(1521 - k1)),
                 static_cast<double>(fixtureWeight(0, 517, 1521)));
        heatmap.resetZoom();
        QVERIFY(!heatmap.showsRegion());
        QCOMPARE(heatmap.poolFactor(), 2);
        QCOMPARE(heatmap.poolingCount(), 3);
    }

    void backgroundPoolingShowsTheHeadWhenReadyAndDropsStaleOnes() {
        constexpr int kN = HeadMatrix::kMaxDisplaySide + 1;  // pools by 2
        constexpr int kWaitMs = 60000;                        // a bound against hangs, not a speed test
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setBackgroundPooling(0);  // every head not in the cache is pooled on a worker thread
        QSignalSpy shown(&heatmap, &HeadHeatmap::backgroundPoolingFinished);
        heatmap.setResult(makeDenseResult(3, kN));
        QVERIFY(heatmap.isPooling());
        QCOMPARE(heatmap.poolingHead(), 0);
        QCOMPARE(heatmap.shownHead(), -1);  // a new result starts empty
        QVERIFY2(heatmap.title().contains(QStringLiteral("pooling head 0")), qPrintable(heatmap.title()));
        QTRY_VERIFY_WITH_TIMEOUT(!heatmap.isPooling(), kWaitMs);
        QCOMPARE(shown.count(), 1);
        QCOMPARE(shown.at(0).at(0).toInt(), 0);
        QCOMPARE(heatmap.shownHead(), 0);
        QCOMPARE(heatmap.poolFactor(), 2);
        QCOMPARE(heatmap.cellValue(3, 5), static_cast<double>(fixtureWeight(0, 7, 11)));
        QVERIFY(!heatmap.title().contains(QStringLiteral("pooling")));

        // Head 1, then head 2 before head 1 is shown: head 1's pooling arrives stale and is not shown.
        state.setHead(1);
        QCOMPARE(heatmap.poolingHead(), 1);
        QCOMPARE(heatmap.shownHead(), 0);  // the previous picture stays meanwhile
        QVERIFY2(heatmap.title().contains(QStringLiteral("pooling head 1")), qPrintable(heatmap.title()));
        state.setHead(2);
        QCOMPARE(heatmap.poolingHead(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(!heatmap.isPooling(), kWaitMs);
        attnscope::views::backgroundThreadPool()->waitForDone();  // head 1's pooling has ended too …
        QCoreApplication::sendPostedEvents();           // … and its answer was delivered
        QCoreApplication::processEvents();
        QCOMPARE(heatmap.shownHead(), 2);
        QCOMPARE(shown.count(), 2);
        QCOMPARE(shown.at(1).at(0).toInt(), 2);
        QCOMPARE(heatmap.cellValue(3, 5), static_cast<double>(fixtureWeight(2, 7, 11)));

        // The stale pooling was right for head 1, so it was kept: head 1 now shows at once.
        const int pooled = heatmap.poolingCount();
        state.setHead(1);
        QVERIFY(!heatmap.isPooling());
        QCOMPARE(heatmap.shownHead(), 1);
        QCOMPARE(heatmap.poolingCount(), pooled);
        QCOMPARE(heatmap.cellValue(3, 5), static_cast<double>(fixtureWeight(1, 7, 11)));

        // The pooling mode changed while a head pools: it is pooled again the new way.
        state.setHead(2);
        heatmap.setResult(makeDenseResult(3, kN));
        QVERIFY(heatmap.isPooling());
        HeatmapOptions mean;
        mean.pooling = PoolMode::Mean;
        heatmap.setOptions(mean);
        heatmap.finishPooling();
        QCOMPARE(heatmap.shownHead(), 2);
        const double blockMean = (fixtureWeight(2, 6, 10) + fixtureWeight(2, 6, 11) + fixtureWeight(2, 7, 10) +
                                  fixtureWeight(2, 7, 11)) / 4.0;
        QVERIFY(std::abs(heatmap.cellValue(3, 5) - blockMean) < 1e-6);
        heatmap.setOptions(HeatmapOptions{});
        heatmap.finishPooling();

        // A new result while a head pools: the old result's pooling is neither shown nor cached.
        state.setHead(0);
        heatmap.setResult(makeDenseResult(3, kN));
        QVERIFY(heatmap.isPooling());
        heatmap.setResult(makeDenseResult(2, kN));
        heatmap.finishPooling();  // exports: blocks until the head is shown
        QVERIFY(!heatmap.isPooling());
        QCOMPARE(heatmap.shownHead(), 0);
        QCOMPARE(heatmap.cellValue(3, 5), static_cast<double>(fixtureWeight(0, 7, 11)));
        QVERIFY2(heatmap.title().contains(QStringLiteral("of 2")), qPrintable(heatmap.title()));
        attnscope::views::backgroundThreadPool()->waitForDone();
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
        QCOMPARE(heatmap.shownHead(), 0);
        QVERIFY2(heatmap.title().contains(QStringLiteral("of 2")), qPrintable(heatmap.title()));
    }

    void pooledCellsHoverWithTheExactWeight() {
        constexpr int kN = HeadMatrix::kMaxDisplaySide + 1;  // pools by 2
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeDenseResult(2, kN));
        QCOMPARE(heatmap.poolFactor(), 2);
        // The weight of (517, 1021) itself, then the block's max (the block's bottom-right cell).
        const QString text = heatmap.hoverText(517, 1021);
        const QString exact = QStringLiteral("weight %1\n").arg(static_cast<double>(fixtureWeight(0, 517, 1021)), 0, 'g', 4);
        QVERIFY2(text.contains(exact), qPrintable(text));
        const QString block = QStringLiteral("queries 516–517 → keys 1020–1021: max weight %1")
                                  .arg(static_cast<double>(fixtureWeight(0, 517, 1021)), 0, 'f', 4);
        QVERIFY2(text.endsWith(block), qPrintable(text));
        const QString other = heatmap.hoverText(516, 1020);
        QVERIFY2(other.contains(QStringLiteral("weight %1\n").arg(static_cast<double>(fixtureWeight(0, 516, 1020)), 0, 'g', 4)),
                 qPrintable(other));
        QVERIFY(fixtureWeight(0, 516, 1020) != fixtureWeight(0, 517, 1021));
    }

    void poolingCanBeStoppedAndStartedAgain() {
        constexpr int kN = HeadMatrix::kMaxDisplaySide + 1;
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setBackgroundPooling(0);
        QSignalSpy shown(&heatmap, &HeadHeatmap::backgroundPoolingFinished);
        heatmap.setResult(makeDenseResult(2, kN));
        QVERIFY(heatmap.isPooling());
        QVERIFY(heatmap.poolingPercent() >= 0 && heatmap.poolingPercent() <= 100);
        heatmap.stopPooling();
        QVERIFY(!heatmap.isPooling());
        QCOMPARE(heatmap.stoppedHead(), 0);
        // Whatever the worker had done, its answer is not shown.
        attnscope::views::backgroundThreadPool()->waitForDone();
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
        QCOMPARE(heatmap.shownHead(), -1);
        QCOMPARE(shown.count(), 0);
        QVERIFY2(heatmap.title().contains(QStringLiteral("pooling of head 0 stopped")), qPrintable(heatmap.title()));

        heatmap.poolAgain();
        QVERIFY(heatmap.isPooling());
        QCOMPARE(heatmap.stoppedHead(), -1);
        heatmap.finishPooling();
        QCOMPARE(heatmap.shownHead(), 0);
        QCOMPARE(heatmap.cellValue(3, 5), static_cast<double>(fixtureWeight(0, 7, 11)));
        QVERIFY(!heatmap.title().contains(QStringLiteral("stopped")));
    }

    void windowRegionsAreBuiltOnTheWorkerThread() {
        constexpr int kN = HeadMatrix::kMaxDisplaySide + 1;
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setBackgroundPooling(0);
        heatmap.setResult(makeDenseResult(1, kN));
        heatmap.finishPooling();
        QCOMPARE(heatmap.shownHead(), 0);
        QSignalSpy regions(&heatmap, &HeadHeatmap::regionShown);
        heatmap.setVisibleRange(1000, 1040, 500, 530);
        // The pooled picture stays until the region arrives.
        QVERIFY(heatmap.isBuildingRegion());
        QVERIFY(!heatmap.showsRegion());
        QCOMPARE(heatmap.poolFactor(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(heatmap.showsRegion(), 60000);
        QCOMPARE(regions.count(), 1);
        QVERIFY(!heatmap.isBuildingRegion());
        const auto q0 = heatmap.shownRowOffset(), k0 = heatmap.shownColOffset();
        QCOMPARE(heatmap.cellValue(static_cast<int>(517 - q0), static_cast<int>(1021 - k0)),
                 static_cast<double>(fixtureWeight(0, 517, 1021)));
        // Zoomed out before a region arrives: it is not shown.
        heatmap.setVisibleRange(1800, 1840, 1500, 1530);
        QVERIFY(heatmap.isBuildingRegion() || heatmap.shownColOffset() != k0);
        heatmap.resetZoom();
        heatmap.finishPooling();
        QVERIFY(!heatmap.showsRegion());
        QCOMPARE(heatmap.poolFactor(), 2);
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestHeatmapLod)
#include "test_heatmap_lod.moc"
