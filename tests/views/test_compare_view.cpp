#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/data/background_job.h"
#include "views/compare/compare_difference_map.h"
#include "views/compare/compare_error_panel.h"
#include "views/compare/compare_view.h"
#include "views/data/error_summary.h"
#include "views/heatmap/head_heatmap.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QCoreApplication>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>

#include <algorithm>
#include <cmath>

using attnscope::testing::fixtureWeight;
using attnscope::views::CompareView;
using attnscope::views::HeadHeatmap;
using attnscope::views::InspectionState;
namespace engine = attnscope::engine;

namespace {

constexpr int kHeads = 2, kN = 5;

// A band |i - j| <= 1 whose weights are the fixture's divided by `divisor`, aligned with a shared
// pattern.
engine::AttentionResult makeBand(const std::string& id, float divisor) {
    return attnscope::testing::makeBandResult(id, kHeads, kN, [divisor](int h, int i, int j) { return fixtureWeight(h, i, j) / divisor; });
}

// results[0]: the dense fixture; results[1]: the band with the fixture's weights halved.
std::shared_ptr<const engine::RunResult> makePair() {
    auto run = std::const_pointer_cast<engine::RunResult>(attnscope::testing::makeDenseResult(kHeads, kN));
    run->results.push_back(makeBand("band", 2));
    return run;
}

// Three bands (halved, thirded, quartered) and then the dense fixture as the exact `full`, which
// the app adds behind the compared variants.
std::shared_ptr<const engine::RunResult> makeThreePlusExact() {
    auto dense = attnscope::testing::makeDenseResult(kHeads, kN);
    auto run = std::make_shared<engine::RunResult>(*dense);
    run->results.clear();
    run->results.push_back(makeBand("half", 2));
    run->results.push_back(makeBand("third", 3));
    run->results.push_back(makeBand("quarter", 4));
    run->results.push_back(dense->results[0]);
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

    void threePanesStayInSyncAndTheExactReferenceIsNoPane() {
        InspectionState state;
        CompareView view;
        view.setInspectionState(&state);
        view.setResult(makeThreePlusExact(), 3);
        QVERIFY(view.hasComparison());
        QCOMPARE(view.paneCount(), 3);
        QCOMPARE(view.exactIndex(), 3);
        QVERIFY(!view.pane(3)->isVisibleTo(&view));
        QCOMPARE(view.pane(3)->shownHead(), -1);
        state.setHead(1);
        for (int pane : {0, 1, 2}) QCOMPARE(view.pane(pane)->shownHead(), 1);
        QVERIFY(view.pane(2)->title().startsWith(QStringLiteral("C: quarter")));

        // Hover in pane C marks the cell in A, B, C and the difference map.
        QSignalSpy hovered(&view, &CompareView::cellHovered);
        Q_EMIT view.pane(2)->cellHovered(2, 1);
        QCOMPARE(hovered.count(), 1);
        for (int pane : {0, 1, 2}) {
            QCOMPARE(view.hoveredQuery(pane), 2);
            QCOMPARE(view.hoveredKey(pane), 1);
        }
        QCOMPARE(state.hoveredQuery(), 2);
        QCOMPARE(view.shownValue(1), static_cast<double>(fixtureWeight(1, 2, 1) / 3));
        QCOMPARE(view.infoText(), QStringLiteral("query 2 't2' → key 1 '<b>x</b>': A = %1, B = %2, C = %3")
                                      .arg(fixtureWeight(1, 2, 1) / 2, 0, 'f', 4)
                                      .arg(fixtureWeight(1, 2, 1) / 3, 0, 'f', 4)
                                      .arg(fixtureWeight(1, 2, 1) / 4, 0, 'f', 4));
        // Hover in the difference map reaches the panes too.
        Q_EMIT view.differenceMap()->cellHovered(4, 3);
        for (int pane : {0, 1, 2}) QCOMPARE(view.hoveredQuery(pane), 4);
        QVERIFY(view.infoText().endsWith(QStringLiteral("C = %1").arg(fixtureWeight(1, 4, 3) / 4, 0, 'f', 4)));
        view.hoverCell(0, 4);  // outside every band
        QVERIFY(view.infoText().endsWith(QStringLiteral("C = — (not in pattern)")));
    }

    void differenceMapIsPaneMinusReference() {
        InspectionState state;
        state.setHead(1);
        CompareView view;
        view.setInspectionState(&state);
        const auto run = makeThreePlusExact();
        view.setResult(run, 3);
        // Default: pane A minus exact softmax, since the result holds `full`.
        QCOMPARE(view.differenceMinuend(), 0);
        QCOMPARE(view.differenceReference(), int{CompareView::kExactReference});
        const auto& full = run->results[3];
        const auto check = [&](const engine::AttentionResult& a, const engine::AttentionResult& b) {
            const auto* map = view.differenceMap();
            QCOMPARE(map->dataSize(), QSize(kN, kN));
            double largest = 0;
            for (int i = 0; i < kN; ++i) {
                for (int j = 0; j < kN; ++j) {
                    const double expected = static_cast<double>(a.weightAt(1, i, j)) - b.weightAt(1, i, j);
                    QCOMPARE(map->cellValue(i, j), expected);
                    largest = std::max(largest, std::abs(expected));
                }
            }
            // Diverging, centred at 0 with a symmetric range reaching the largest |difference|.
            QCOMPARE(map->colormapName(), QStringLiteral("rdbu"));
            QCOMPARE(map->rangeLimit(), largest);
            QCOMPARE(map->colorRange().first, -largest);
            QCOMPARE(map->colorRange().second, largest);
        };
        check(run->results[0], full);
        QCOMPARE(view.differenceMap()->title(), QStringLiteral("difference A − full, head 1"));
        view.setDifference(2, 0);  // C − A
        check(run->results[2], run->results[0]);
        QCOMPARE(view.differenceMap()->title(), QStringLiteral("difference C − A, head 1"));
        // A new result of the same layout keeps the choice.
        view.setResult(run, 3);
        QCOMPARE(view.differenceMinuend(), 2);
        QCOMPARE(view.differenceReference(), 0);
    }

    void derivedPanelsInTheBackgroundShowTheLatestHead() {
        InspectionState state;
        CompareView view;
        view.setInspectionState(&state);
        view.setBackgroundWork(true);
        view.resize(900, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const auto run = makeThreePlusExact();
        view.setResult(run, 3);
        QVERIFY(view.errorsPending());
        // Head 1 before head 0's summaries arrive: those are dropped, head 1's are shown.
        state.setHead(1);
        QVERIFY(view.errorsPending());
        QTRY_VERIFY_WITH_TIMEOUT(!view.errorsPending(), 60000);
        attnscope::views::backgroundThreadPool()->waitForDone();
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
        QVERIFY2(view.errorPanel()->note().contains(QStringLiteral("head 1")), qPrintable(view.errorPanel()->note()));
        QCOMPARE(view.errorPanel()->table()->rowCount(), 3);
        for (int pane = 0; pane < 3; ++pane) {
            const auto expected = attnscope::views::summarizeAgainstExact(run->results[static_cast<std::size_t>(pane)],
                                                                          run->results[3], 1);
            QCOMPARE(view.errorPanel()->plottedRowL1(pane).at(2), expected.rowL1[2]);
        }
        QVERIFY(!view.differencePending());
        QVERIFY2(view.differenceMap()->title().contains(QStringLiteral("head 1")),
                 qPrintable(view.differenceMap()->title()));
        QCOMPARE(view.differenceMap()->cellValue(2, 3),
                 static_cast<double>(run->results[0].weightAt(1, 2, 3) - run->results[3].weightAt(1, 2, 3)));
        // errorPanel() and differenceMap() wait for what is still computing (exports).
        state.setHead(0);
        QVERIFY(view.differencePending());
        QVERIFY2(view.differenceMap()->title().contains(QStringLiteral("head 0")),
                 qPrintable(view.differenceMap()->title()));
        QVERIFY(!view.differencePending());
        QVERIFY(view.errorsPending());
        QVERIFY2(view.errorPanel()->note().contains(QStringLiteral("head 0")), qPrintable(view.errorPanel()->note()));
        QVERIFY(!view.errorsPending());
    }

    void errorSummaryOfEveryPaneAgainstFull() {
        InspectionState state;
        CompareView view;
        view.setInspectionState(&state);
        const auto run = makeThreePlusExact();
        view.setResult(run, 3);
        auto* table = view.errorPanel()->table();
        QCOMPARE(table->rowCount(), 3);
        for (int pane = 0; pane < 3; ++pane) {
            const auto expected = attnscope::views::summarizeAgainstExact(run->results[static_cast<std::size_t>(pane)],
                                                                          run->results[3], 0);
            QVERIFY(expected.ok);
            const auto shown = view.errorSummary(pane);
            QCOMPARE(shown.meanL1, expected.meanL1);
            QCOMPARE(shown.meanKeptMass, expected.meanKeptMass);
            QCOMPARE(table->item(pane, attnscope::views::CompareErrorPanel::MeanL1Column)->text(),
                     QString::number(expected.meanL1, 'f', 4));
            // A band gives 0 outside |i - j| <= 1 where full has mass: KL is undefined in every row.
            QCOMPARE(table->item(pane, attnscope::views::CompareErrorPanel::KlColumn)->text(), QStringLiteral("undefined"));
            QCOMPARE(view.errorPanel()->plottedRowL1(pane).size(), kN);
            QCOMPARE(view.errorPanel()->plottedRowL1(pane).at(2), expected.rowL1[2]);
        }
        QVERIFY(view.errorPanel()->note().contains(QStringLiteral("run alongside")));

        // Without `full`: no summary, and the app's note says why.
        view.setResult(makePair(), 0);
        QCOMPARE(view.exactIndex(), 0);  // the dense fixture is named full: it is pane A
        auto pair = std::const_pointer_cast<engine::RunResult>(makePair());
        pair->results[0].variantId = "dense";
        view.setExactNote(QStringLiteral("full was not run: over the memory budget"));
        view.setResult(pair, 0);
        QCOMPARE(view.exactIndex(), -1);
        QCOMPARE(view.errorPanel()->table()->rowCount(), 0);
        QCOMPARE(view.errorPanel()->note(), QStringLiteral("full was not run: over the memory budget"));
    }

    void paneTitlesNameOnlyWhatDiffersFromTheDefaults() {
        auto run = std::const_pointer_cast<engine::RunResult>(makePair());
        run->results[0].variantId = "longformer";
        run->results[0].params = {{"window", std::int64_t{4}}, {"causal", false}, {"dilation", std::vector<std::int64_t>{1}},
                                  {"global", std::vector<std::int64_t>{}}};  // all defaults
        run->results[1].variantId = "longformer";
        run->results[1].params = run->results[0].params;
        run->results[1].params["window"] = std::int64_t{2};
        InspectionState state;
        CompareView view;
        view.setInspectionState(&state);
        view.setVariantNames({{QStringLiteral("longformer"), QStringLiteral("Longformer")}});
        view.resize(1400, 800);
        view.show();
        view.setResult(run);
        QTRY_COMPARE(view.pane(0)->title(), QStringLiteral("A: Longformer"));
        QCOMPARE(view.pane(1)->title(), QStringLiteral("B: Longformer (window=2)"));
        // Every parameter, head and n are in the full title (the title's tooltip).
        QVERIFY(view.pane(1)->fullTitle().contains(QStringLiteral("dilation=1")));
        QVERIFY(view.pane(1)->fullTitle().contains(QStringLiteral("head 0 of 2")));
    }

    void fourPanesInSync() {
        auto run = std::const_pointer_cast<engine::RunResult>(makeThreePlusExact());
        std::rotate(run->results.begin(), run->results.end() - 1, run->results.end());  // full first
        InspectionState state;
        CompareView view;
        view.setInspectionState(&state);
        view.setResult(run);
        QCOMPARE(view.paneCount(), 4);
        QCOMPARE(view.exactIndex(), 0);
        QCOMPARE(view.differenceReference(), 0);  // full is pane A: the reference is that pane
        QCOMPARE(view.differenceMinuend(), 1);
        view.hoverCell(3, 3);
        for (int pane = 0; pane < 4; ++pane) {
            QVERIFY(view.pane(pane)->isVisibleTo(&view));
            QCOMPARE(view.hoveredQuery(pane), 3);
            QCOMPARE(view.shownValue(pane), static_cast<double>(run->results[static_cast<std::size_t>(pane)].weightAt(0, 3, 3)));
        }
        QCOMPARE(view.errorSummary(0).meanL1, 0.0);  // full against itself
        QCOMPARE(view.errorSummary(0).meanKeptMass, 1.0);
        // One colour scale across the four panes.
        for (int pane = 0; pane < 4; ++pane)
            QCOMPARE(view.pane(pane)->colorRange().second, static_cast<double>(fixtureWeight(0, kN - 1, kN - 1)));
    }

    void variantsOfDifferentLengthAreRefused() {
        auto run = std::const_pointer_cast<engine::RunResult>(makePair());
        engine::AttentionResult longer = makeBand("longer", 2);
        longer.n = longer.m = kN + 2;
        longer.weights = engine::makeDenseWeights(kHeads, kN + 2, kN + 2, std::vector<float>(kHeads * (kN + 2) * (kN + 2), 0.1f));
        run->results.push_back(longer);
        CompareView view;
        view.setResult(run);
        QVERIFY(!view.hasComparison());
        QVERIFY2(view.infoText().startsWith(QStringLiteral("Cannot compare: C (longer) has 2 heads × 7 × 7")),
                 qPrintable(view.infoText()));
        QVERIFY(!view.differenceMap()->hasData());
        QCOMPARE(view.pane(0)->shownHead(), -1);
        view.hoverCell(1, 1);  // nothing to mark, nothing to crash on
        QVERIFY(std::isnan(view.shownValue(0)));
    }

    void aRelayColumnIsLeftOutOfTheComparison() {
        // Star's result has one key more than there are tokens (its relay, column n): compared with
        // full on the n token keys, the relay column shown in its own pane only.
        auto run = std::const_pointer_cast<engine::RunResult>(attnscope::testing::makeDenseResult(kHeads, kN));
        run->results[0].variantId = "full";
        engine::AttentionResult star;
        star.variantId = "star";
        star.heads = kHeads;
        star.n = kN;
        star.m = kN + 1;
        std::vector<float> w(static_cast<std::size_t>(kHeads * kN * (kN + 1)), 0.0f);
        for (int h = 0; h < kHeads; ++h)
            for (int i = 0; i < kN; ++i)
                for (int j = 0; j <= kN; ++j)
                    w[static_cast<std::size_t>((h * kN + i) * (kN + 1) + j)] = j < kN ? fixtureWeight(h, i, j) / 2 : 0.5f;
        star.weights = engine::makeDenseWeights(kHeads, kN, kN + 1, std::move(w));
        run->results.push_back(star);
        CompareView view;
        view.setResult(run);
        QVERIFY2(view.hasComparison(), qPrintable(view.infoText()));
        QVERIFY(view.differenceMap()->hasData());
        const attnscope::views::ErrorSummary summary =
            attnscope::views::summarizeAgainstExact(run->results[1], run->results[0], 0);
        QVERIFY2(summary.ok, summary.message.c_str());
        // Row 0: |w/2 - w| summed over the token keys only.
        double l1 = 0;
        for (int j = 0; j < kN; ++j) l1 += fixtureWeight(0, 0, j) / 2.0;
        QVERIFY(std::abs(summary.rowL1[0] - l1) < 1e-6);
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
