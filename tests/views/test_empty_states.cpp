// An empty or pending view shows one message saying why and no axes or colour bars that could
// pass for data (a 0–5 axis under a 0–6 colour bar reads as a result).
#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/compare/compare_difference_map.h"
#include "views/compare/compare_error_panel.h"
#include "views/compare/compare_view.h"
#include "views/atlas/head_atlas.h"
#include "views/heatmap/head_heatmap.h"
#include "views/data/inspection_state.h"
#include "views/mask/mask_view.h"
#include "views/widgets/qcp.h"

#include <QTableWidget>
#include <QTest>

using attnscope::views::CompareView;
using attnscope::views::InspectionState;

namespace {

// Axes and colour scales the plot would draw.
int drawnScales(QCustomPlot* plot) {
    int shown = 0;
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes()) shown += axis->visible();
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true))
        if (auto* scale = qobject_cast<QCPColorScale*>(element)) shown += scale->visible();
    return shown;
}

QString titleOf(QCustomPlot* plot) {
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true))
        if (auto* text = qobject_cast<QCPTextElement*>(element); text && !text->text().isEmpty()) return text->text();
    return {};
}

}  // namespace

class TestEmptyStates : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void maskBeforeAResultHasNoAxesThenAxesWithIt() {
        InspectionState state;
        attnscope::views::MaskView mask;
        mask.setInspectionState(&state);
        QCOMPARE(drawnScales(mask.plot()), 0);
        QVERIFY(titleOf(mask.plot()).contains(QStringLiteral("press Run")));
        mask.setResult(attnscope::testing::makeDenseResult(1, 4));
        QCOMPARE(drawnScales(mask.plot()), 2);  // the key and query axes
    }

    void atlasBeforeAnalyzeSaysWhatToDo() {
        attnscope::views::HeadAtlasView atlas;
        auto* plot = atlas.findChild<QCustomPlot*>();
        QVERIFY(plot);
        QCOMPARE(drawnScales(plot), 0);
        QVERIFY2(titleOf(plot).contains(QStringLiteral("Analyze")), qPrintable(titleOf(plot)));
    }

    void differenceMapAndErrorsWithoutAComparisonShowOnlyTheirMessage() {
        attnscope::views::CompareDifferenceMap map;
        map.clear(QStringLiteral("The difference map needs two variants."));
        QCOMPARE(drawnScales(map.findChild<QCustomPlot*>()), 0);
        attnscope::views::CompareErrorPanel errors;
        errors.show();
        errors.clear(QStringLiteral("No result yet."));
        QVERIFY(!errors.table()->isVisibleTo(&errors));
        for (auto* plot : errors.findChildren<QCustomPlot*>()) QVERIFY(!plot->isVisibleTo(&errors));
    }

    void aRunningComparisonSaysSoInsteadOfPressRun() {
        InspectionState state;
        CompareView view;
        view.setInspectionState(&state);
        view.setRunning(true);
        QVERIFY2(view.infoText().startsWith(QStringLiteral("Running the comparison")), qPrintable(view.infoText()));
        QCOMPARE(view.pane(1)->title(), QStringLiteral("Computing…"));
        QVERIFY2(view.differenceMap()->message().startsWith(QStringLiteral("Computing")), qPrintable(view.differenceMap()->message()));
        QVERIFY2(view.errorPanel()->note().startsWith(QStringLiteral("Computing")), qPrintable(view.errorPanel()->note()));
        // The result arrives, then the run ends: the panes show it, the footer explains hovering.
        auto run = std::make_shared<attnscope::engine::RunResult>(*attnscope::testing::makeDenseResult(1, 4));
        run->results.push_back(run->results[0]);
        run->results.back().variantId = "longformer";
        view.setResult(run, 2);
        view.setRunning(false);
        QVERIFY2(view.infoText().startsWith(QStringLiteral("Hover a cell")), qPrintable(view.infoText()));
        QVERIFY(view.pane(1)->shownHead() == 0);
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestEmptyStates)
#include "test_empty_states.moc"
