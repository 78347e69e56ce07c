#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/compare_view.h"
#include "views/head_heatmap.h"
#include "views/inspection_state.h"
#include "views/qcp.h"

#include <QSignalSpy>
#include <QTest>

#include <cmath>

using attnscope::testing::fixtureWeight;
using attnscope::views::CompareView;
using attnscope::views::HeadHeatmap;
using attnscope::views::InspectionState;
namespace engine = attnscope::engine;

namespace {

constexpr int kHeads = 2, kN = 5;

// results[0]: the dense fixture; results[1]: a band |i - j| <= 1 whose weights are the fixture's
// halved, aligned with a shared pattern.
std::shared_ptr<const engine::RunResult> makePair() {
    auto run = std::const_pointer_cast<engine::RunResult>(attnscope::testing::makeDenseResult(kHeads, kN));
    engine::AttentionResult band;
    band.variantId = "band";
    band.heads = kHeads;
    band.n = band.m = kN;
    band.pattern.rows = band.pattern.cols = kN;
    band.pattern.rowPtr = {0};
    for (int i = 0; i < kN; ++i) {
        for (int j = std::max(0, i - 1); j <= std::min(kN - 1, i + 1); ++j) {
            band.pattern.colIdx.push_back(j);
            band.pattern.reason.push_back(static_cast<std::uint8_t>(engine::PatternReason::Local));
        }
        band.pattern.rowPtr.push_back(band.pattern.nnz());
    }
    std::vector<float> w;
    for (int h = 0; h < kHeads; ++h)
        for (int i = 0; i < kN; ++i)
            for (auto e = band.pattern.rowPtr[i]; e < band.pattern.rowPtr[i + 1]; ++e)
                w.push_back(fixtureWeight(h, i, band.pattern.colIdx[e]) / 2);
    band.weightsLayout = engine::WeightsLayout::AlignedWithPattern;
    band.weights.shape = {kHeads, band.pattern.nnz()};
    band.weights.values = std::make_shared<const std::vector<float>>(std::move(w));
    run->results.push_back(std::move(band));
    return run;
}

}  // namespace

class TestCompareView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void panesShowBothResultsForTheSameHead() {
        InspectionState state;
        state.setResultIndex(1);  // ignored: the panes always show results 0 and 1
        CompareView view;
        view.setInspectionState(&state);
        view.setResult(makePair());
        QVERIFY(view.hasComparison());
        state.setHead(1);
        for (int pane : {0, 1}) QCOMPARE(view.pane(pane)->shownHead(), 1);
        QCOMPARE(view.pane(0)->cellValue(3, 4), static_cast<double>(fixtureWeight(1, 3, 4)));
        QCOMPARE(view.pane(1)->cellValue(3, 4), static_cast<double>(fixtureWeight(1, 3, 4) / 2));
        QVERIFY(view.pane(0)->title().startsWith(QStringLiteral("A: full")));
        QVERIFY(view.pane(1)->title().startsWith(QStringLiteral("B: band")));
        // One colour scale: both panes end at the larger maximum.
        const double hi = fixtureWeight(1, kN - 1, kN - 1);
        QCOMPARE(static_cast<QCPColorMap*>(view.pane(1)->plot()->plottable(0))->dataRange().upper, hi);
        QCOMPARE(static_cast<QCPColorMap*>(view.pane(0)->plot()->plottable(0))->dataRange().upper, hi);
    }

    void hoverInPaneAMarksTheSameCellInPaneB() {
        InspectionState state;
        CompareView view;
        view.setInspectionState(&state);
        view.setResult(makePair());
        view.resize(1000, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        HeadHeatmap* a = view.pane(0);
        a->plot()->replot();
        QSignalSpy hovered(&view, &CompareView::cellHovered);
        const QPoint cell(qRound(a->plot()->xAxis->coordToPixel(2)), qRound(a->plot()->yAxis->coordToPixel(3)));
        QTest::mouseMove(a->plot(), cell);
        QTRY_VERIFY(!hovered.isEmpty());
        QCOMPARE(hovered.last().at(0).toInt(), 3);
        QCOMPARE(hovered.last().at(1).toInt(), 2);
        for (int pane : {0, 1}) {
            QCOMPARE(view.hoveredQuery(pane), 3);
            QCOMPARE(view.hoveredKey(pane), 2);
            QVERIFY(view.shownInPattern(pane));
        }
        QCOMPARE(state.hoveredQuery(), 3);
        QCOMPARE(view.shownValue(0), static_cast<double>(fixtureWeight(0, 3, 2)));
        QCOMPARE(view.shownValue(1), static_cast<double>(fixtureWeight(0, 3, 2) / 2));
        QCOMPARE(view.infoText(), QStringLiteral("query 3 't3' → key 2 't2': A = %1, B = %2")
                                      .arg(fixtureWeight(0, 3, 2), 0, 'f', 4)
                                      .arg(fixtureWeight(0, 3, 2) / 2, 0, 'f', 4));

        // A cell outside B's band: B says so instead of showing 0.
        view.hoverCell(0, 4);
        QCOMPARE(view.hoveredQuery(1), 0);
        QVERIFY(!view.shownInPattern(1));
        QCOMPARE(view.shownValue(1), 0.0);
        QVERIFY2(view.infoText().endsWith(QStringLiteral("B = — (not in pattern)")), qPrintable(view.infoText()));

        view.hoverCell(-1, -1);
        QCOMPARE(view.hoveredQuery(0), -1);
        QCOMPARE(view.hoveredQuery(1), -1);
    }

    void aSingleResultAsksForASecondVariant() {
        CompareView view;
        view.setResult(attnscope::testing::makeDenseResult(1, 3));
        QVERIFY(!view.hasComparison());
        QCOMPARE(view.pane(1)->shownHead(), -1);
        QVERIFY(view.infoText().contains(QStringLiteral("Compare with")));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestCompareView)
#include "test_compare_view.moc"
