#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/data/background_job.h"
#include "views/data/inspection_state.h"
#include "views/data/mask_matrix.h"
#include "views/mask/mask_view.h"
#include "views/widgets/qcp.h"
#include "views/data/reason_palette.h"

#include <QCheckBox>
#include <QCoreApplication>
#include <QFile>
#include <QFontMetricsF>
#include <QSignalSpy>
#include <attnscope/explicit_weights.h>

#include <QTest>

#include <cmath>
#include <map>

using attnscope::views::InspectionState;
using attnscope::views::MaskMatrix;
using attnscope::views::MaskView;
using attnscope::views::ReasonPalette;
namespace engine = attnscope::engine;
using engine::PatternReason;

namespace {

constexpr auto L = PatternReason::Local;
constexpr auto G = PatternReason::Global;
constexpr auto R = PatternReason::Random;

// A shared CSR pattern over 2 heads, n = m = 4, tokens "a".."d":
//   row 0: 0 L, 3 G            row 2: 1 R, 2 L, 2 R (key 2 listed twice), 3 G
//   row 1: 0 L, 1 L, 3 G       row 3: 0 G, 1 G, 2 G, 3 G
// Entries of a head: local 4, global 7, random 2, so (2, 2) shows random (the rarer reason).
// Head 0 weights, per entry: row 0 (0.75, 0.25); row 1 (0.5, 0, 0.5): an exact zero;
// row 2 (0.2, 0.3, 0.1, 0.4): key 2 sums to 0.4; row 3 0.25 each.
std::shared_ptr<const engine::RunResult> makeMixedResult() {
    auto run = std::make_shared<engine::RunResult>();
    run->n = 4;
    run->heads = 2;
    run->headDim = 4;
    for (const char* text : {"a", "b", "c", "d"}) {
        engine::Token t;
        t.text = text;
        run->input.tokens.push_back(t);
    }
    engine::AttentionResult r;
    r.variantId = "handmade";
    r.params["window"] = std::int64_t{1};
    r.heads = 2;
    r.n = r.m = 4;
    r.d = 4;
    engine::SparsePattern pattern;
    pattern.rows = pattern.cols = 4;
    pattern.rowPtr = {0, 2, 5, 9, 13};
    pattern.colIdx = {0, 3, 0, 1, 3, 1, 2, 2, 3, 0, 1, 2, 3};
    for (PatternReason reason : {L, G, L, L, G, R, L, R, G, G, G, G, G})
        pattern.reason.push_back(static_cast<std::uint8_t>(reason));
    std::vector<float> w = {0.75f, 0.25f, 0.5f, 0.0f, 0.5f, 0.2f, 0.3f, 0.1f, 0.4f, 0.25f, 0.25f, 0.25f, 0.25f};
    const std::vector<float> head1 = {1.0f, 0.0f, 0.1f, 0.2f, 0.7f, 0.5f, 0.25f, 0.25f, 0.0f, 0.1f, 0.2f, 0.3f, 0.4f};
    w.insert(w.end(), head1.begin(), head1.end());
    r.weights = engine::makeListedWeights(2, std::move(pattern), std::move(w));
    run->results.push_back(std::move(r));
    return run;
}

double entropyOf(std::initializer_list<double> weights) {
    double h = 0;
    for (double w : weights)
        if (w > 0) h -= w * std::log(w);
    return h;
}

}  // namespace

class TestMaskView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // 47 token labels in a small plot: every step-th is shown so that none overlap; a large plot
    // shows them all.
    void tokenLabelsThinOutToWhatFits() {
        InspectionState state;
        MaskView view;
        view.setInspectionState(&state);
        view.resize(520, 360);
        view.setResult(attnscope::testing::makeDenseResult(1, 47));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCoreApplication::processEvents();
        view.plot()->replot();
        const auto labels = [&](QCPAxis* axis) { return axis->tickVector().size(); };
        const int keys = static_cast<int>(labels(view.plot()->xAxis)), queries = static_cast<int>(labels(view.plot()->yAxis));
        QVERIFY2(keys < 47 && keys >= 8, qPrintable(QString::number(keys)));
        QVERIFY2(queries < 47 && queries >= 8, qPrintable(QString::number(queries)));
        const double cell = view.plot()->axisRect()->width() / 47.0;
        const double needed = QFontMetricsF(view.plot()->xAxis->tickLabelFont()).height();
        QVERIFY2((47.0 / keys) * cell >= needed, qPrintable(QStringLiteral("%1 px per label, %2 needed").arg((47.0 / keys) * cell).arg(needed)));
        view.resize(1800, 1400);
        QCoreApplication::processEvents();
        view.plot()->replot();
        view.plot()->replot();
        QCOMPARE(labels(view.plot()->xAxis), 47);
    }

    void paletteFileNamesEveryReasonInOrder() {
        QFile file(QStringLiteral(ATTNSCOPE_REASONS_CSV));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QString error;
        const auto palette = ReasonPalette::fromCsv(file.readAll(), &error);
        QVERIFY2(palette.has_value(), qPrintable(error));
        QCOMPARE(palette->colors().size(), ReasonPalette::kSize);
        QCOMPARE(ReasonPalette::standard().colors(), palette->colors());  // the resource is the file
        // The reasons that meet in one pattern must not share a colour.
        QVERIFY(palette->color(L) != palette->color(G));
        QVERIFY(palette->color(L) != palette->color(R));
        QVERIFY(palette->color(PatternReason::Ring) != palette->color(PatternReason::Relay));
        QVERIFY(!ReasonPalette::fromCsv("local,1,2,3\n", &error).has_value());
        QVERIFY(error.contains(QStringLiteral("dense")));
    }

    void arrowKeysMoveACellCursorAndFillTheRowPanel() {
        InspectionState state;
        MaskView view;
        view.setInspectionState(&state);
        view.setResult(makeMixedResult());
        view.resize(700, 500);
        view.show();
        QTRY_VERIFY(view.isVisible());
        QSignalSpy hovered(&view, &MaskView::cellHovered);
        QTest::keyClick(view.plot(), Qt::Key_Down);  // from no cell: the first
        QTest::keyClick(view.plot(), Qt::Key_Down);
        QTest::keyClick(view.plot(), Qt::Key_Right);
        QCOMPARE(view.hoveredQuery(), 1);
        QCOMPARE(view.hoveredKey(), 1);
        QCOMPARE(view.panelQuery(), 1);  // the row panel follows the cursor, as it follows the pointer
        QCOMPARE(hovered.count(), 3);
        QTest::keyClick(view.plot(), Qt::Key_Right, Qt::ShiftModifier);
        QCOMPARE(view.hoveredKey(), 3);  // clamped at the last key
        view.setHighlightedTokens({2});
        QCOMPARE(view.highlightBands(), 2);
    }

    void showsEachReasonAtItsCellsAndBlankElsewhere() {
        InspectionState state;
        MaskView view;
        view.setInspectionState(&state);
        view.setResult(makeMixedResult());
        QCOMPARE(view.shownHead(), 0);
        QCOMPARE(view.dataSize(), QSize(4, 4));
        QCOMPARE(view.poolFactor(), 1);
        // -1 = blank; duplicates (2, 2) show the rarer reason (random: 2 entries vs local: 4).
        const int b = -1, l = int(L), g = int(G), r = int(R);
        const int expected[4][4] = {{l, b, b, g}, {l, l, b, g}, {b, r, r, g}, {g, g, g, g}};
        for (int head : {0, 1}) {
            state.setHead(head);
            for (int i = 0; i < 4; ++i) {
                for (int j = 0; j < 4; ++j) {
                    QCOMPARE(view.displayedReason(i, j), expected[i][j]);
                    QCOMPARE(view.displayedAlpha(i, j), expected[i][j] == b ? 0 : 255);
                }
            }
        }
        QCOMPARE(view.legendReasons(), (QStringList{QStringLiteral("local"), QStringLiteral("global"), QStringLiteral("random")}));
        QVERIFY(view.legendText().contains(QStringLiteral("not in the pattern")));
        QVERIFY2(view.title().contains(QStringLiteral("Pattern of handmade — head")), qPrintable(view.title()));
        QVERIFY2(view.title().endsWith(QStringLiteral("\nwindow=1")), qPrintable(view.title()));
        QVERIFY(view.title().contains(QStringLiteral("head 1 of 2")));
        QCOMPARE(view.hoverText(2, 2), QStringLiteral("query 2 'c' → key 2 'c': random, weight 0.5000"));
        QCOMPARE(view.hoverText(0, 1), QStringLiteral("query 0 'a' → key 1 'b': not in the pattern"));
    }

    void aSlidingCheckpointLayerShowsItsOwnWindow() {
        InspectionState state;
        MaskView view;
        view.setInspectionState(&state);
        view.setResult(makeMixedResult());
        QVERIFY(!view.modelWindowShown());
        QVERIFY(!view.legendText().contains(QStringLiteral("own window")));
        auto sliding = std::make_shared<attnscope::engine::RunResult>(*makeMixedResult());
        sliding->modelLayer = 1;
        sliding->modelWindow = 2;  // keys i - 1 … i
        view.setResult(sliding);
        QVERIFY(view.modelWindowShown());
        QVERIFY2(view.legendText().contains(QStringLiteral("the model's own window on this layer: keys i − 1 … i")),
                 qPrintable(view.legendText()));
        sliding = std::make_shared<attnscope::engine::RunResult>(*sliding);
        sliding->modelWindow = 4;  // as wide as the text: nothing to draw
        view.setResult(sliding);
        QVERIFY(!view.modelWindowShown());
    }

    void edgeCellsAreDrawnWholeLikeTheOthers() {
        // Row 3 allows every key (global): its first and last cells must be as wide as the middle
        // ones, so a pixel a third of a cell outside key 0's centre is still the cell's colour.
        MaskView view;
        view.resize(700, 600);
        view.show();
        view.setResult(makeMixedResult());
        QTest::qWait(100);
        QCustomPlot* plot = view.plot();
        plot->replot();
        const QImage image = plot->grab().toImage();
        const int y = static_cast<int>(plot->yAxis->coordToPixel(3));
        const auto colourAt = [&](double key) { return image.pixelColor(static_cast<int>(plot->xAxis->coordToPixel(key)), y); };
        QCOMPARE(colourAt(-0.35), colourAt(0.0));
        QCOMPARE(colourAt(3.35), colourAt(3.0));
        QCOMPARE(colourAt(1.0), colourAt(0.0));  // one reason, one colour along the row
    }

    void weightToggleShadesAllowedCellsAndMarksExactZeros() {
        InspectionState state;
        MaskView view;
        view.setInspectionState(&state);
        view.setResult(makeMixedResult());
        view.weightsToggle()->setChecked(true);
        QVERIFY(view.showWeights());
        // Head 0: max weight 0.75 at (0, 0) is opaque; (1, 1) weighs exactly 0.
        QCOMPARE(view.displayedAlpha(0, 0), 255);
        QCOMPARE(view.displayedReason(1, 1), ReasonPalette::kExactZero);
        const double t = std::sqrt(0.25 / 0.75);
        QCOMPARE(view.displayedAlpha(3, 3), int(std::lround(255 * (MaskView::kMinWeightOpacity + (1 - MaskView::kMinWeightOpacity) * t))));
        QCOMPARE(view.displayedReason(3, 3), int(G));
        QCOMPARE(view.displayedAlpha(0, 1), 0);  // still blank outside the pattern
        QVERIFY(view.legendText().contains(QStringLiteral("exact zero weight")));
        view.setShowWeights(false);
        QCOMPARE(view.displayedReason(1, 1), int(L));
        QCOMPARE(view.displayedAlpha(3, 3), 255);
    }

    void rowPanelMatchesHandComputedValues() {
        InspectionState state;
        MaskView view;
        view.setInspectionState(&state);
        view.setResult(makeMixedResult());

        // Query 2: key 2 listed twice appears once, with its weights summed (0.1 + 0.3).
        auto s = view.rowSummary(2);
        QCOMPARE(s.query, std::int64_t{2});
        QCOMPARE(s.allowedKeys, (std::vector<int>{1, 2, 3}));
        QCOMPARE(s.multiplicity, (std::vector<int>{1, 2, 1}));
        QCOMPARE(s.entries, std::int64_t{4});
        QCOMPARE(s.reasons, (std::vector<PatternReason>{R, R, G}));
        QVERIFY(s.hasWeights);
        QCOMPARE(s.weights.size(), std::size_t{3});
        QVERIFY(std::abs(s.weights[1] - 0.4f) < 1e-7f);
        QCOMPARE(s.exactZeros, 0);
        QVERIFY(std::abs(s.entropy - entropyOf({0.2, 0.4, 0.4})) < 1e-6);

        // Query 1: one exact zero; entropy ln 2 from the two halves.
        s = view.rowSummary(1);
        QCOMPARE(s.allowedKeys, (std::vector<int>{0, 1, 3}));
        QCOMPARE(s.exactZeros, 1);
        QVERIFY(std::abs(s.entropy - std::log(2.0)) < 1e-6);

        // The panel shows the hovered query; its text carries the same numbers.
        QSignalSpy hovered(&view, &MaskView::cellHovered);
        view.resize(900, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.plot()->replot();
        const QPoint cell(qRound(view.plot()->xAxis->coordToPixel(2)), qRound(view.plot()->yAxis->coordToPixel(2)));
        QTest::mouseMove(view.plot(), cell);
        QTRY_VERIFY(!hovered.isEmpty());
        QCOMPARE(hovered.last().at(0).toInt(), 2);
        QCOMPARE(hovered.last().at(1).toInt(), 2);
        QCOMPARE(view.panelQuery(), 2);
        const QString text = view.rowPanelText();
        QVERIFY2(text.contains(QStringLiteral("allowed keys: 3 (4 entries")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("exact zeros: 0 of 3")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("entropy: %1 nats").arg(entropyOf({0.2, 0.4, 0.4}), 0, 'f', 4)), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("2 c  random  0.4000  ×2")), qPrintable(text));

        // Head 1 keeps the panel on query 2 with that head's numbers: key 3 weighs exactly 0.
        state.setHead(1);
        QCOMPARE(view.panelQuery(), 2);
        QVERIFY2(view.rowPanelText().contains(QStringLiteral("exact zeros: 1 of 3")), qPrintable(view.rowPanelText()));
    }

    void causalPatternOfADenseVariant() {
        auto run = std::const_pointer_cast<engine::RunResult>(attnscope::testing::makeDenseResult(1, 5));
        auto& r = run->results[0];
        std::vector<float> w(25, 0.0f);
        std::vector<std::uint8_t> reasons(25, engine::kNotListed);
        for (int i = 0; i < 5; ++i)
            for (int j = 0; j <= i; ++j) {
                w[static_cast<std::size_t>(i * 5 + j)] = 1.0f / static_cast<float>(i + 1);
                reasons[static_cast<std::size_t>(i * 5 + j)] = static_cast<std::uint8_t>(PatternReason::Causal);
            }
        r.weights = engine::makeDenseWeights(1, 5, 5, w, reasons);
        MaskView view;
        view.setResult(run);
        for (int i = 0; i < 5; ++i)
            for (int j = 0; j < 5; ++j) QCOMPARE(view.displayedReason(i, j), j <= i ? int(PatternReason::Causal) : -1);
        QCOMPARE(view.legendReasons(), QStringList{QStringLiteral("causal")});
        const auto s = view.rowSummary(3);
        QCOMPARE(s.allowedKeys, (std::vector<int>{0, 1, 2, 3}));
        QVERIFY(s.hasWeights);
        QVERIFY(std::abs(s.entropy - std::log(4.0)) < 1e-6);

        // A hand-made result without weights shows no pattern.
        r.weights = nullptr;
        view.setResult(run);
        QVERIFY(!view.rowSummary(3).hasWeights);
        QCOMPARE(view.displayedReason(3, 0), -1);
    }

    void backgroundBuildShowsTheLatestHeadWithTheQueryAskedFor() {
        InspectionState state;
        MaskView view;
        view.setInspectionState(&state);
        view.setBackgroundBuild(0);  // every head on the worker thread
        QSignalSpy built(&view, &MaskView::headBuilt);
        view.setResult(makeMixedResult());
        QVERIFY(view.isBuilding());
        QCOMPARE(view.shownHead(), -1);  // a new result starts empty
        view.showQuery(2);               // kept for the head being classified
        state.setHead(1);                // head 0's build is dropped when it arrives
        QTRY_VERIFY_WITH_TIMEOUT(!view.isBuilding(), 60000);
        attnscope::views::backgroundThreadPool()->waitForDone();
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
        QCOMPARE(built.count(), 1);
        QCOMPARE(built.at(0).at(0).toInt(), 1);
        QCOMPARE(view.shownHead(), 1);
        QCOMPARE(view.displayedReason(2, 2), int(R));
        QCOMPARE(view.panelQuery(), 2);
        QVERIFY2(view.rowPanelText().contains(QStringLiteral("head 1")), qPrintable(view.rowPanelText()));
        // finishBuilding() waits (exports); the previous head's picture stays meanwhile.
        state.setHead(0);
        QVERIFY(view.isBuilding());
        QCOMPARE(view.shownHead(), 1);
        view.finishBuilding();
        QCOMPARE(view.shownHead(), 0);
        QCOMPARE(view.displayedReason(0, 3), int(G));
        QCOMPARE(view.displayedReason(0, 1), -1);  // blank: not in the pattern
    }

    void largePatternsPoolToTheRarestReason() {
        const auto run = makeMixedResult();
        const MaskMatrix pooled = MaskMatrix::fromResult(run->results[0], 0, /*maxSide=*/2);
        QCOMPARE(pooled.poolFactor(), 2);
        QCOMPARE(pooled.rows(), 2);
        QCOMPARE(pooled.cols(), 2);
        QCOMPARE(int(pooled.reasonAt(0, 0)), int(L));  // queries 0-1 x keys 0-1: local only
        QCOMPARE(int(pooled.reasonAt(0, 1)), int(G));  // (0, 3), (1, 3)
        QCOMPARE(int(pooled.reasonAt(1, 0)), int(R));  // random (2 entries) beats global (7)
        QCOMPARE(int(pooled.reasonAt(1, 1)), int(R));
        QCOMPARE(pooled.reasonCounts()[std::size_t(L)], std::int64_t{4});
        QCOMPARE(pooled.reasonCounts()[std::size_t(G)], std::int64_t{7});
        QCOMPARE(pooled.weightAt(1, 1), 0.4f);  // max over keys of summed weights
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestMaskView)
#include "test_mask_view.moc"
