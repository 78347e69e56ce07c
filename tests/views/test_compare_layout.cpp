// The compare view on a laptop screen: the panes get the tab, one colour bar, ticks that never
// collide; a figure puts the difference map and the whole error table below the panes.
#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/compare/compare_error_panel.h"
#include "views/compare/compare_view.h"
#include "views/heatmap/head_heatmap.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"
#include "views/widgets/shared_color_bar.h"

#include <QCoreApplication>
#include <QHeaderView>
#include <QScrollBar>
#include <QTableWidget>
#include <QTest>

using attnscope::views::CompareView;
using attnscope::views::FigureLayoutScope;
using attnscope::views::HeadHeatmap;
using attnscope::views::InspectionState;
namespace engine = attnscope::engine;

namespace {

// Four variants of one n-token input (copies of the dense fixture under four ids).
std::shared_ptr<engine::RunResult> makeFour(int n) {
    auto run = std::make_shared<engine::RunResult>(*attnscope::testing::makeDenseResult(2, n));
    const engine::AttentionResult dense = run->results[0];
    run->results.clear();
    for (const char* id : {"full", "longformer", "bigbird", "performer"}) {
        run->results.push_back(dense);
        run->results.back().variantId = id;
    }
    return run;
}

void settle(CompareView& view) {
    for (int i = 0; i < 3; ++i) {
        QCoreApplication::processEvents();
        for (int p = 0; p < view.paneCount(); ++p) view.pane(p)->plot()->replot(QCustomPlot::rpImmediateRefresh);
    }
}

// Left and right edges of each tick label of the key axis, in pixels.
QVector<QPair<double, double>> keyTickLabelSpans(HeadHeatmap* pane) {
    QCPAxis* axis = pane->plot()->xAxis;
    const QFontMetricsF metrics(axis->tickLabelFont());
    QVector<QPair<double, double>> spans;
    const QVector<double> ticks = axis->tickVector();
    const QVector<QString> labels = axis->tickVectorLabels();
    for (int i = 0; i < ticks.size(); ++i) {
        if (ticks[i] < axis->range().lower || ticks[i] > axis->range().upper) continue;
        const double centre = axis->coordToPixel(ticks[i]);
        const double half = metrics.horizontalAdvance(labels[i]) / 2.0;
        spans.push_back({centre - half, centre + half});
    }
    return spans;
}

}  // namespace

class TestCompareLayout : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void panesGetTheTabOnALaptopScreenWithOneColourBar() {
        auto run = makeFour(180);
        InspectionState state;
        CompareView view;
        view.setInspectionState(&state);
        view.setResult(run, 4);
        // The Compare tab of a maximised 1366 × 768 window is about 950 × 420.
        view.resize(950, 420);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        settle(view);
        QCOMPARE(view.shownPage(), CompareView::Page::Panes);
        QVERIFY(view.sharedColorBar()->isVisible());
        for (int p = 0; p < 4; ++p) {
            HeadHeatmap* pane = view.pane(p);
            QVERIFY(!pane->colorBarShown());
            // Cells of at least 120 px a side (they were about 95 in 2 × 2 panes with their own bars).
            const QRect cells = pane->plot()->axisRect()->rect();
            QVERIFY2(cells.width() >= 120 && cells.height() >= 120,
                     qPrintable(QStringLiteral("pane %1: %2 × %3").arg(p).arg(cells.width()).arg(cells.height())));
            // The shared bar shows the panes' scale.
            QCOMPARE(view.sharedColorBar()->scale()->dataRange(), pane->colorScale()->dataRange());
        }
        // The difference map and the error table are pages of their own, not below the fold.
        QVERIFY(!view.differenceMap()->isVisible());
        view.showPage(CompareView::Page::Errors);
        QVERIFY(view.errorPanel()->isVisible());
    }

    void indexTicksNeverCollide() {
        auto run = makeFour(180);
        InspectionState state;
        CompareView view;
        view.setInspectionState(&state);
        view.setResult(run, 4);
        for (const QSize size : {QSize(950, 420), QSize(700, 400), QSize(1800, 700)}) {
            view.resize(size);
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            settle(view);
            for (int p = 0; p < 4; ++p) {
                const auto spans = keyTickLabelSpans(view.pane(p));
                QVERIFY2(spans.size() >= 2, qPrintable(QStringLiteral("%1 ticks").arg(spans.size())));
                for (int i = 1; i < spans.size(); ++i)
                    QVERIFY2(spans[i].first - spans[i - 1].second >= 4,
                             qPrintable(QStringLiteral("%1 × %2, pane %3: labels %4 and %5 touch")
                                            .arg(size.width())
                                            .arg(size.height())
                                            .arg(p)
                                            .arg(i - 1)
                                            .arg(i)));
            }
        }
    }

    void aFigurePutsTheDifferenceMapAndTheWholeTableBelowThePanes() {
        auto run = makeFour(12);
        InspectionState state;
        CompareView view;
        view.setInspectionState(&state);
        view.setResult(run, 4);
        view.resize(600, 420);  // too narrow for the table's five columns
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        settle(view);
        const int panesHeight = view.pane(0)->height();
        const QString errorsTip = view.pages()->tabToolTip(2);
        QVERIFY(!errorsTip.isEmpty());
        view.showPage(CompareView::Page::Errors);  // the person's page comes back after each figure
        for (int round = 0; round < 2; ++round) {  // twice: the second figure is laid out as the first
            const FigureLayoutScope figure(&view, /*slide=*/false);
            QCoreApplication::processEvents();
            QVERIFY(view.differenceMap()->isVisible());
            QVERIFY(view.errorPanel()->isVisible());
            QVERIFY(view.pane(0)->isVisible());
            QTableWidget* table = view.errorPanel()->table();
            QVERIFY(!table->horizontalScrollBar()->isVisible());
            int columns = 0;
            for (int c = 0; c < table->columnCount(); ++c) columns += table->horizontalHeader()->sectionSize(c);
            QVERIFY2(table->viewport()->width() >= columns,
                     qPrintable(QStringLiteral("%1 < %2").arg(table->viewport()->width()).arg(columns)));
            // Below the panes, which keep about their height on screen; side by side with the table.
            const QPoint map = view.differenceMap()->mapTo(&view, QPoint(0, 0));
            const QPoint panel = view.errorPanel()->mapTo(&view, QPoint(0, 0));
            QVERIFY(map.y() >= view.pane(0)->mapTo(&view, QPoint(0, 0)).y() + panesHeight / 2);
            QVERIFY2(panel.x() >= map.x() + view.differenceMap()->width() - 2,
                     qPrintable(QStringLiteral("figure %1: map at %2, table at %3").arg(round).arg(map.x()).arg(panel.x())));
            QVERIFY(view.differenceMap()->width() >= view.width() / 3);
        }
        QCoreApplication::processEvents();
        QCOMPARE(view.shownPage(), CompareView::Page::Errors);
        QCOMPARE(view.pages()->count(), 3);
        QCOMPARE(view.pages()->tabToolTip(2), errorsTip);
        QCOMPARE(view.size(), QSize(600, 420));
        QVERIFY(!view.differenceMap()->isVisible());
        // A slide is what the tab shows.
        {
            const FigureLayoutScope slide(&view, /*slide=*/true);
            QVERIFY(!view.differenceMap()->isVisible());
        }
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestCompareLayout)
#include "test_compare_layout.moc"
