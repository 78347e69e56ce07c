#include "support/qt_test_support.h"

#include "gui/settings/app_settings.h"
#include "gui/panels/compare_variants_editor.h"
#include "gui/engine/engine_runner.h"
#include "gui/engine/scaling_job.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/panels/run_settings_panel.h"

#include "views/compare/compare_difference_map.h"
#include "views/compare/compare_error_panel.h"
#include "views/compare/compare_view.h"
#include "views/cost/cost_view.h"
#include "views/data/error_summary.h"
#include "views/heatmap/head_heatmap.h"
#include "views/widgets/param_form.h"

#include <QComboBox>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>

#include <algorithm>

using attnscope::app::AppSettings;
using attnscope::app::EngineBackend;
using attnscope::app::EngineRunner;
using attnscope::app::LocalEngineBackend;
using attnscope::app::MainWindow;
namespace engine = attnscope::engine;
namespace views = attnscope::views;

namespace {

constexpr int kRunTimeoutMs = 60000;

// The real engine, except that it refuses any request holding `full` after other variants, as the
// engine refuses exact softmax over the memory budget (checked before anything is allocated).
class ExactOverBudgetBackend final : public EngineBackend {
public:
    engine::Result<std::shared_ptr<const engine::RunResult>> run(const engine::RunRequest& request,
                                                                 const engine::ProgressFn& progress) override {
        for (std::size_t i = 1; i < request.variants.size(); ++i)
            if (request.variants[i].id == "full")
                return engine::makeError(engine::ErrorCode::OutOfBudget,
                                         "variant 'full' needs 8 GiB for its 4 x 32768 x 32768 attention matrices");
        return m_local.run(request, progress);
    }
    std::vector<engine::VariantInfo> variants() override { return m_local.variants(); }

private:
    LocalEngineBackend m_local;
};

MainWindow::Options quietOptions() {
    MainWindow::Options options;
    options.showErrorDialogs = false;
    options.runOnStart = false;
    return options;
}

}  // namespace

class TestMainWindowCompare : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void threeVariantsRunWithExactSoftmaxForTheErrorSummary() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow window(&runner, AppSettings{}, quietOptions());
        window.resize(1400, 900);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kRunTimeoutMs);
        auto* editor = window.inputs()->compareEditor();
        QCOMPARE(editor->rowCount(), 1);

        window.inputs()->variantCombo()->setCurrentIndex(window.inputs()->variantCombo()->findData(QStringLiteral("longformer")));
        window.inputs()->paramForm()->setValues({{"window", std::int64_t{2}}});
        // (BigBird's blocks must divide n, which the sample's 77 words do not: other variants here.)
        window.inputs()->compareEditor()->combo(0)->setCurrentIndex(window.inputs()->compareEditor()->combo(0)->findData(QStringLiteral("sparse_strided")));
        QVERIFY(editor->addRow(QStringLiteral("performer")));
        QCOMPARE(editor->rowCount(), 2);
        QCOMPARE(editor->ids(), (QStringList{QStringLiteral("sparse_strided"), QStringLiteral("performer")}));
        QCOMPARE(editor->form(1)->variant().id, std::string("performer"));
        // At most 3 rows besides the main variant: 4 panes.
        QVERIFY(editor->addRow(QStringLiteral("topk")));
        QVERIFY(!editor->addRow());
        QVERIFY(!editor->addButton()->isEnabled());
        QVERIFY(editor->removeRow(2));
        QVERIFY(!editor->removeRow(0));  // a comparison keeps two variants
        QCOMPARE(editor->rowCount(), 2);

        QSignalSpy shown(&window, &MainWindow::resultShown);
        QSignalSpy failed(&window, &MainWindow::runFailed);
        window.showView(MainWindow::View::Compare);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() + failed.count() > 0, kRunTimeoutMs);
        QVERIFY2(failed.isEmpty(), qPrintable(window.statusText()));
        const auto result = window.lastResult();
        // The three compared variants, then `full` added for the error summary, on one Q, K, V.
        QCOMPARE(result->results.size(), std::size_t{4});
        QCOMPARE(result->results[0].variantId, std::string("longformer"));
        QCOMPARE(result->results[1].variantId, std::string("sparse_strided"));
        QCOMPARE(result->results[2].variantId, std::string("performer"));
        QCOMPARE(result->results[3].variantId, std::string("full"));

        views::CompareView* compare = window.views()->compareView();
        QCOMPARE(compare->paneCount(), 3);
        QCOMPARE(compare->exactIndex(), 3);
        QVERIFY(compare->hasComparison());
        window.showNextHead();
        for (int pane = 0; pane < 3; ++pane) QCOMPARE(compare->pane(pane)->shownHead(), 1);
        compare->hoverCell(4, 1);
        for (int pane = 0; pane < 3; ++pane) QCOMPARE(compare->hoveredKey(pane), 1);
        QCOMPARE(compare->errorPanel()->table()->rowCount(), 3);
        for (int pane = 0; pane < 3; ++pane) {
            const auto expected = views::summarizeAgainstExact(result->results[static_cast<std::size_t>(pane)],
                                                               result->results[3], 1);
            QVERIFY2(expected.ok, expected.message.c_str());
            QCOMPARE(compare->errorSummary(pane).meanL1, expected.meanL1);
            QVERIFY(expected.meanKeptMass > 0 && expected.meanKeptMass <= 1);
        }
        // Difference map: pane A minus exact softmax by default.
        QCOMPARE(compare->differenceReference(), int{views::CompareView::kExactReference});
        const int n = static_cast<int>(result->n);
        QCOMPARE(compare->differenceMap()->dataSize(), QSize(n, n));

        // The Cost tab shows the same run's counters, one total row per variant, once it is shown.
        QVERIFY(window.resultPending(MainWindow::View::Cost));
        window.showView(MainWindow::View::Cost);
        auto* table = window.views()->costView()->table();
        int totals = 0;
        for (int row = 0; row < table->rowCount(); ++row)
            if (table->item(row, views::CostView::StageColumn)->text() == QStringLiteral("total")) ++totals;
        QCOMPARE(totals, 4);
        QCOMPARE(shown.count(), 1);
    }

    void costTabMeasuresInTheBackground() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow window(&runner, AppSettings{}, quietOptions());
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kRunTimeoutMs);
        window.showView(MainWindow::View::Cost);
        views::CostView* cost = window.views()->costView();
        cost->setCheckedVariants({QStringLiteral("full"), QStringLiteral("linear")});
        cost->sizesEdit()->setText(QStringLiteral("32, 64, 128"));
        QSignalSpy finished(window.scalingJob(), &attnscope::app::ScalingJob::finished);
        cost->scalingButton()->click();
        QVERIFY(cost->scalingRunning());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kRunTimeoutMs);
        QVERIFY(!cost->scalingRunning());
        views::ScalingPlot* plot = cost->scalingPlot();
        QCOMPARE(plot->variantIds(), (QStringList{QStringLiteral("full"), QStringLiteral("linear")}));
        for (const QString& id : plot->variantIds()) {
            const auto points = plot->points(id);
            QCOMPARE(points.size(), 3);
            QCOMPARE(points.last().n, std::int64_t{128});
            QVERIFY(points.last().seconds > 0);
        }
        QVERIFY(plot->timeLegend(QStringLiteral("full")).startsWith(QStringLiteral("Full softmax attention (slope ")));
        QCOMPARE(cost->scalingProgress()->value(), 6);
    }

    void exactOverBudgetIsLeftOutAndSaidSo() {
        EngineRunner runner(std::make_unique<ExactOverBudgetBackend>());
        MainWindow window(&runner, AppSettings{}, quietOptions());
        window.resize(1400, 900);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kRunTimeoutMs);
        window.inputs()->variantCombo()->setCurrentIndex(window.inputs()->variantCombo()->findData(QStringLiteral("longformer")));
        window.inputs()->compareEditor()->combo(0)->setCurrentIndex(window.inputs()->compareEditor()->combo(0)->findData(QStringLiteral("sparse_strided")));
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QSignalSpy failed(&window, &MainWindow::runFailed);
        window.showView(MainWindow::View::Compare);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() + failed.count() > 0, kRunTimeoutMs);
        QVERIFY2(failed.isEmpty(), qPrintable(window.statusText()));  // retried without `full`
        QCOMPARE(window.lastResult()->results.size(), std::size_t{2});
        views::CompareView* compare = window.views()->compareView();
        QVERIFY(compare->hasComparison());
        QCOMPARE(compare->exactIndex(), -1);
        QCOMPARE(compare->errorPanel()->table()->rowCount(), 0);
        QVERIFY2(compare->errorPanel()->note().contains(QStringLiteral("does not fit the memory budget")),
                 qPrintable(compare->errorPanel()->note()));
        QVERIFY(compare->errorPanel()->note().contains(QStringLiteral("32768")));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestMainWindowCompare)
#include "test_main_window_compare.moc"
