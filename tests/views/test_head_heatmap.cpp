#include "support/qt_test_support.h"
#include "views/explicit_run.h"
#include "views/test_fixtures.h"

#include "views/heatmap/head_heatmap.h"
#include "views/data/head_matrix.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"
#include "views/data/title_wrap.h"
#include "views/data/token_highlight.h"

#include <QSignalSpy>
#include <attnscope/explicit_weights.h>

#include <QComboBox>
#include <QFontMetricsF>
#include <QTest>

#include <cmath>

using attnscope::testing::fixtureWeight;
using attnscope::testing::makeDenseResult;
using attnscope::views::HeadHeatmap;
using attnscope::views::HeadMatrix;
using attnscope::views::InspectionState;
namespace engine = attnscope::engine;

class TestHeadHeatmap : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void longTitlesWrapAtTheirSeparators() {
        using attnscope::views::wrapTitle;
        QFont font;
        font.setPixelSize(14);
        const QFontMetrics metrics(font);
        const QString title = QStringLiteral("A: Longformer — head 0 of 4 — n = 19 tokens\ncausal=false, dilation=1, window=4");
        // Wide enough: unchanged.
        QCOMPARE(wrapTitle(title, font, 4000), title);
        QCOMPARE(wrapTitle(title, font, 0), title);
        // Narrow: every line fits, nothing is lost, breaks fall after the separators.
        const int width = metrics.horizontalAdvance(QStringLiteral("A: Longformer — head 0 of 4 —")) + 2;
        const QString wrapped = wrapTitle(title, font, width);
        const QStringList lines = wrapped.split(QLatin1Char('\n'));
        QVERIFY2(lines.size() >= 4, qPrintable(wrapped));
        for (const QString& line : lines) QVERIFY2(metrics.horizontalAdvance(line) <= width, qPrintable(line));
        QCOMPARE(lines.first(), QStringLiteral("A: Longformer — head 0 of 4 —"));
        QString joined = wrapped;
        joined.replace(QLatin1Char('\n'), QString());
        QString original = title;
        original.replace(QLatin1Char('\n'), QString()).remove(QLatin1Char(' '));
        QCOMPARE(joined.remove(QLatin1Char(' ')), original);
        // A piece wider than the width on its own stays whole.
        QCOMPARE(wrapTitle(QStringLiteral("Supercalifragilistic"), font, 10), QStringLiteral("Supercalifragilistic"));
    }

    void holdsTheChosenHeadsWeights() {
        constexpr int kHeads = 3, kN = 5;
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setVariantNames({{QStringLiteral("full"), QStringLiteral("Full softmax attention")}});
        QCOMPARE(heatmap.dataSize(), QSize());
        heatmap.setResult(makeDenseResult(kHeads, kN));

        for (int head : {0, 2, 1}) {
            state.setHead(head);
            QCOMPARE(heatmap.shownHead(), head);
            QCOMPARE(heatmap.dataSize(), QSize(kN, kN));
            QCOMPARE(heatmap.colorData()->keySize(), kN);
            QCOMPARE(heatmap.colorData()->valueSize(), kN);
            auto* data = const_cast<QCPColorMapData*>(heatmap.colorData());  // cell() is not const in QCP 2.1
            for (int i = 0; i < kN; ++i) {
                for (int j = 0; j < kN; ++j) {
                    QCOMPARE(heatmap.cellValue(i, j), static_cast<double>(fixtureWeight(head, i, j)));
                    QCOMPARE(data->cell(j, i), static_cast<double>(fixtureWeight(head, i, j)));  // key index first
                }
            }
            QVERIFY2(heatmap.title().contains(QStringLiteral("Full softmax attention")), qPrintable(heatmap.title()));
            QVERIFY2(heatmap.title().contains(QStringLiteral("head %1 of %2").arg(head).arg(kHeads)),
                     qPrintable(heatmap.title()));
        }
        QVERIFY(std::isnan(heatmap.cellValue(kN, 0)));
        QVERIFY(heatmap.tokenAxes());

        state.setHead(kHeads);  // out of range: nothing shown rather than stale data
        QCOMPARE(heatmap.shownHead(), -1);
        QCOMPARE(heatmap.dataSize(), QSize());
    }

    void ticksStayOutsideTheCells() {
        // Inward ticks covered the first column and the last row of cells.
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeDenseResult(1, 5));
        heatmap.resize(420, 400);
        heatmap.show();
        QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
        heatmap.plot()->replot(QCustomPlot::rpImmediateRefresh);
        heatmap.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const QImage image = heatmap.plot()->toPixmap().toImage();
        const QRect cells = heatmap.plot()->axisRect()->rect();
        const double ratio = image.width() / static_cast<double>(heatmap.plot()->width());
        const auto at = [&](double x, double y) { return image.pixelColor(static_cast<int>(x * ratio), static_cast<int>(y * ratio)); };
        for (double tick : heatmap.plot()->yAxis->tickVector()) {
            const double y = heatmap.plot()->yAxis->coordToPixel(tick);
            if (y < cells.top() + 2 || y > cells.bottom() - 2) continue;
            // Just inside the left edge: the cell's own colour, as a few pixels further in.
            QCOMPARE(at(cells.left() + 2, y), at(cells.left() + 8, y));
        }
        QCOMPARE(heatmap.plot()->xAxis->tickLengthIn(), 0);
        QCOMPARE(heatmap.plot()->yAxis->tickLengthIn(), 0);
    }

    // Stepping heads (PgDn) keeps the zoom, so that heads are compared at the same place; a new
    // result shows all of its head.
    void steppingHeadsKeepsTheZoom() {
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.resize(600, 500);
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeDenseResult(3, 40));
        heatmap.zoomBy(0.25);
        const QCPRange x = heatmap.plot()->xAxis->range(), y = heatmap.plot()->yAxis->range();
        QVERIFY(x.size() < 20);
        state.setHead(1);
        QCOMPARE(heatmap.shownHead(), 1);
        QCOMPARE(heatmap.plot()->xAxis->range(), x);
        QCOMPARE(heatmap.plot()->yAxis->range(), y);
        heatmap.setResult(makeDenseResult(3, 40));
        QVERIFY(heatmap.plot()->xAxis->range().size() > 39);
    }

    // Missing data is never drawn as data: with no head to show, no axes and no colour bar, only
    // what to do; they come back with the first head.
    void withoutAHeadThereAreNoAxesAndNoColourBar() {
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        auto* scale = heatmap.plot()->findChild<QCPColorScale*>();
        QVERIFY(scale == nullptr || !scale->visible());
        QVERIFY(!heatmap.plot()->xAxis->visible() && !heatmap.plot()->yAxis->visible());
        QCOMPARE(heatmap.title(), QStringLiteral("No result yet: press Run (F5)"));
        heatmap.setResult(makeDenseResult(2, 4));
        QVERIFY(heatmap.plot()->xAxis->visible() && heatmap.plot()->yAxis->visible());
        bool scaleShown = false;
        for (int i = 0; i < heatmap.plot()->plotLayout()->elementCount(); ++i)
            for (auto* element : heatmap.plot()->plotLayout()->elementAt(i)->elements(true))
                if (auto* bar = qobject_cast<QCPColorScale*>(element)) scaleShown = scaleShown || bar->visible();
        QVERIFY(scaleShown);
        state.setHead(5);
        QVERIFY(!heatmap.plot()->xAxis->visible());
    }

    void hoverTextNamesTokensAsPlainText() {
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeDenseResult(2, 4));
        state.setHead(1);
        const QString expected =
            QStringLiteral("query 1 '<b>x</b>' → key 2 't2': weight %1").arg(fixtureWeight(1, 1, 2), 0, 'f', 4);
        QCOMPARE(heatmap.hoverText(1, 2), expected);
        QCOMPARE(heatmap.hoverText(4, 0), QString());

        heatmap.setResult(makeDenseResult(2, 4, /*withTokens=*/false));
        QVERIFY(!heatmap.tokenAxes());
        QCOMPARE(heatmap.hoverText(3, 0),
                 QStringLiteral("query 3 → key 0: weight %1").arg(fixtureWeight(1, 3, 0), 0, 'f', 4));
    }

    void hoverOverTheMatrixEmitsTheCell() {
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeDenseResult(1, 4));
        heatmap.resize(500, 500);
        heatmap.show();
        QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
        heatmap.plot()->replot();
        QSignalSpy hovered(&heatmap, &HeadHeatmap::cellHovered);
        const QPoint cell(qRound(heatmap.plot()->xAxis->coordToPixel(2)),
                          qRound(heatmap.plot()->yAxis->coordToPixel(3)));
        QTest::mouseMove(heatmap.plot(), cell);
        QTRY_VERIFY(!hovered.isEmpty());
        QCOMPARE(hovered.last().at(0).toInt(), 3);
        QCOMPARE(hovered.last().at(1).toInt(), 2);
    }

    void tokenLabelsThinOutToWhatFits() {
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeDenseResult(1, 60));  // 60 tokens: token text on both axes
        heatmap.resize(1100, 1100);
        heatmap.show();
        QTRY_VERIFY(heatmap.isVisible());
        QTRY_COMPARE(heatmap.keyLabelStep(), 1);  // about 15 px a cell: every token
        QVERIFY(heatmap.tokenAxes());
        heatmap.resize(300, 300);
        // About 3 px a cell: every few tokens, so labels never overlap.
        QTRY_VERIFY(heatmap.keyLabelStep() >= 3);
        QTRY_VERIFY(heatmap.queryLabelStep() >= 3);
        const double cell = heatmap.findChild<QCustomPlot*>()->axisRect()->width() / 60.0;
        const double line = QFontMetricsF(heatmap.findChild<QCustomPlot*>()->xAxis->tickLabelFont()).height();
        QVERIFY2(heatmap.keyLabelStep() * cell >= line, qPrintable(QStringLiteral("%1 × %2 < %3").arg(heatmap.keyLabelStep()).arg(cell).arg(line)));
        heatmap.resize(1100, 1100);
        QTRY_COMPARE(heatmap.keyLabelStep(), 1);
    }

    void arrowKeysMoveACellCursorAsThePointerWould() {
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeDenseResult(1, 30));
        heatmap.resize(600, 600);
        heatmap.show();
        QTRY_VERIFY(heatmap.isVisible());
        QSignalSpy hovered(&heatmap, &HeadHeatmap::cellHovered);
        auto* plot = heatmap.findChild<QCustomPlot*>();
        QTest::keyClick(plot, Qt::Key_Right);  // from no cell: the first
        QCOMPARE(heatmap.hoveredQuery(), 0);
        QCOMPARE(heatmap.hoveredKey(), 0);
        QTest::keyClick(plot, Qt::Key_Right);
        QTest::keyClick(plot, Qt::Key_Down, Qt::ShiftModifier);  // ten rows
        QCOMPARE(heatmap.hoveredQuery(), 10);
        QCOMPARE(heatmap.hoveredKey(), 1);
        QCOMPARE(heatmap.markedQuery(), 10);  // the cursor is drawn
        QCOMPARE(hovered.count(), 3);
        QCOMPARE(hovered.last().at(0).toInt(), 10);
        QTest::keyClick(plot, Qt::Key_End);
        QCOMPARE(heatmap.hoveredKey(), 29);
        for (int i = 0; i < 5; ++i) QTest::keyClick(plot, Qt::Key_Down, Qt::ShiftModifier);
        QCOMPARE(heatmap.hoveredQuery(), 29);  // clamped at the last row
        QTest::keyClick(plot, Qt::Key_Home);
        QCOMPARE(heatmap.hoveredKey(), 0);
    }

    // Tokens that are pieces of words (bytes here) are found through the text they came from:
    // "teacher" marks its seven byte tokens, "É" (two bytes) its two, a special token none.
    void findingATextMarksTheTokensItsBytesCameFrom() {
        engine::TokenizedInput input;
        input.text = "The teacher read. Éa";
        input.tokens.push_back({"<s>", 0, 0, 0});
        for (std::size_t b = 0; b < input.text.size(); ++b)
            input.tokens.push_back({input.text.substr(b, 1), static_cast<std::int64_t>(b), static_cast<std::int64_t>(b) + 1, 0});
        QCOMPARE(attnscope::views::findTokens(input, QStringLiteral("TEACHER")), (QVector<int>{5, 6, 7, 8, 9, 10, 11}));
        QCOMPARE(attnscope::views::findTokens(input, QStringLiteral("éa")), (QVector<int>{19, 20, 21}));
        QCOMPARE(attnscope::views::findTokens(input, QStringLiteral("read. É")), (QVector<int>{13, 14, 15, 16, 17, 18, 19, 20}));
        QVERIFY(attnscope::views::findTokens(input, QStringLiteral("lion")).isEmpty());
    }

    void foundTokensAreBandedOverTheirRowsAndColumns() {
        std::vector<engine::Token> tokens;
        for (const char* t : {"The", "cat", "sat", "CATS", " concat", "dog"}) tokens.push_back({t, 0, 0, 0});
        QCOMPARE(attnscope::views::findTokens(tokens, QStringLiteral(" cat ")), (QVector<int>{1, 3, 4}));
        QVERIFY(attnscope::views::findTokens(tokens, QStringLiteral("  ")).isEmpty());
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeDenseResult(1, 6));
        heatmap.setHighlightedTokens({1, 3});
        QCOMPARE(heatmap.highlightBands(), 4);  // a row and a column each
        heatmap.setHighlightedTokens({2, 3, 4, 5, 0});
        QCOMPARE(heatmap.highlightBands(), 4);  // neighbours share one: {0}, {2 … 5}
        heatmap.setHighlightedTokens({});
        QCOMPARE(heatmap.highlightBands(), 0);
    }

    // A linear head past a billion weights is drawn by its block means whatever the Pooling box
    // says: the title says so, the box shows "block mean", disabled; a smaller head gives it back.
    void aHeadTooLargeForItsMaximaShowsItsMeansAndSaysSo() {
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.resize(900, 700);
        QComboBox* pooling = nullptr;
        for (auto* combo : heatmap.toolbar()->findChildren<QComboBox*>())
            if (combo->findText(QStringLiteral("block mean")) >= 0) pooling = combo;
        QVERIFY(pooling);
        heatmap.setResult(attnscope::testing::randomExplicitRun(1, 33000, 8, "linear", {}, 3));
        QTRY_VERIFY(!heatmap.isPooling() && heatmap.shownHead() == 0);
        QVERIFY2(heatmap.fullTitle().contains(QStringLiteral("mean-pooled 17×17")), qPrintable(heatmap.fullTitle()));
        QVERIFY(!pooling->isEnabled());
        QCOMPARE(pooling->currentText(), QStringLiteral("block mean"));
        heatmap.setResult(attnscope::testing::randomExplicitRun(1, 3000, 8, "linear", {}, 3));
        QTRY_VERIFY(!heatmap.isPooling() && heatmap.shownHead() == 0);
        QVERIFY2(heatmap.fullTitle().contains(QStringLiteral("max-pooled 2×2")), qPrintable(heatmap.fullTitle()));
        QVERIFY(pooling->isEnabled());
        QCOMPARE(pooling->currentText(), QStringLiteral("block max"));
    }

    void largeInputsUseIndexAxes() {
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(makeDenseResult(1, HeadHeatmap::kMaxTokenTicks + 1));
        QVERIFY(!heatmap.tokenAxes());
        QCOMPARE(heatmap.dataSize(), QSize(HeadHeatmap::kMaxTokenTicks + 1, HeadHeatmap::kMaxTokenTicks + 1));
    }

    void matrixFromPatternSumsDuplicatesAndPools() {
        // Shared pattern over 2 heads, 3 queries, 4 keys; query 1 lists key 2 twice.
        engine::AttentionResult r;
        r.heads = 2;
        r.n = 3;
        r.m = 4;
        engine::SparsePattern pattern;
        pattern.rows = 3;
        pattern.cols = 4;
        pattern.rowPtr = {0, 2, 5, 6};
        pattern.colIdx = {0, 1, 0, 2, 2, 3};
        pattern.reason.assign(6, static_cast<std::uint8_t>(engine::PatternReason::Local));
        const std::vector<float> head0 = {0.5f, 0.5f, 0.2f, 0.3f, 0.5f, 1.0f};
        const std::vector<float> head1 = {0.9f, 0.1f, 0.6f, 0.2f, 0.2f, 1.0f};
        std::vector<float> all = head0;
        all.insert(all.end(), head1.begin(), head1.end());
        r.weights = engine::makeListedWeights(2, pattern, all);

        const HeadMatrix m = HeadMatrix::fromResult(r, 1);
        QCOMPARE(m.rows(), 3);
        QCOMPARE(m.cols(), 4);
        QVERIFY(m.hasWeights());
        QCOMPARE(m.at(0, 0), 0.9f);
        QCOMPARE(m.at(0, 2), 0.0f);
        QCOMPARE(m.at(1, 0), 0.6f);
        QCOMPARE(m.at(1, 2), 0.4f);  // listed twice: counts twice
        QCOMPARE(m.at(2, 3), 1.0f);

        const HeadMatrix pooled = HeadMatrix::fromResult(r, 0, /*maxSide=*/2);
        QCOMPARE(pooled.poolFactor(), 2);
        QCOMPARE(pooled.rows(), 2);
        QCOMPARE(pooled.cols(), 2);
        QCOMPARE(pooled.at(0, 0), 0.5f);  // max of queries 0-1 x keys 0-1
        QCOMPARE(pooled.at(0, 1), 0.8f);  // query 1, key 2: 0.3 + 0.5
        QCOMPARE(pooled.at(1, 1), 1.0f);

        // Keys outside the pattern are marked, so views draw them apart from ~0 weights.
        QVERIFY(m.hasMaskedCells());
        QVERIFY(m.inPattern(1, 2));
        QVERIFY(!m.inPattern(0, 2));
        QVERIFY(!pooled.inPattern(1, 0));  // query 2 lists key 3 only
        QVERIFY(pooled.inPattern(1, 1));

        // The heatmap keeps weightAt's 0 for those cells and draws them transparent.
        auto run = std::make_shared<engine::RunResult>();
        run->n = 3;
        run->heads = 2;
        run->results.push_back(r);
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(run);
        QCOMPARE(heatmap.dataSize(), QSize(4, 3));
        QCOMPARE(heatmap.cellValue(0, 2), 0.0);
        QCOMPARE(heatmap.cellValue(1, 2), static_cast<double>(0.3f + 0.5f));  // summed in float
        auto* data = const_cast<QCPColorMapData*>(heatmap.colorData());
        QCOMPARE(int(data->alpha(2, 0)), 0);
        QCOMPARE(int(data->alpha(2, 1)), 255);
        QVERIFY2(heatmap.hoverText(0, 2).endsWith(QStringLiteral("not in the pattern")),
                 qPrintable(heatmap.hoverText(0, 2)));

        r.weights = nullptr;
        QVERIFY(!HeadMatrix::fromResult(r, 0).hasWeights());
        QCOMPARE(HeadMatrix::fromResult(r, 0).maxValue(), 0.0f);
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestHeadHeatmap)
#include "test_head_heatmap.moc"
