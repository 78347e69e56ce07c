// The Cost tab's Transformer-XL evaluation speed, as a user runs it: type lengths, Measure, read
// the plot's points; bad lengths are refused beside the field; Esc cancels.

#include "support/qt_test_support.h"

#include "gui/settings/app_settings.h"
#include "gui/engine/engine_runner.h"
#include "gui/engine/eval_speed_job.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/panels/run_settings_panel.h"
#include "views/cost/cost_view.h"
#include "views/cost/eval_speed_panel.h"

#include <QAction>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>

using attnscope::app::AppSettings;
using attnscope::app::EngineRunner;
using attnscope::app::EvalSpeedJob;
using attnscope::app::LocalEngineBackend;
using attnscope::app::MainWindow;
using attnscope::views::EvalSpeedPanel;

namespace {

constexpr int kTimeoutMs = 120000;

MainWindow::Options quietOptions() {
    MainWindow::Options options;
    options.showErrorDialogs = false;
    options.runOnStart = false;
    return options;
}

}  // namespace

class TestEvalSpeed : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parsesLengthsAndRefusesBadOnes() {
        QString error;
        QCOMPARE(EvalSpeedPanel::parseLengths(QStringLiteral("128, 64 64;32"), &error), (QVector<int>{32, 64, 128}));
        QVERIFY(EvalSpeedPanel::parseLengths(QStringLiteral("64, 0"), &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("“0”")), qPrintable(error));
        QVERIFY(EvalSpeedPanel::parseLengths(QStringLiteral("5000"), &error).isEmpty());
        QVERIFY(EvalSpeedPanel::parseLengths(QStringLiteral("  "), &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("no lengths")), qPrintable(error));
    }

    void measuresBothModelsPerLength() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow window(&runner, AppSettings{}, quietOptions());
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        window.showView(MainWindow::View::Cost);
        EvalSpeedPanel* panel = window.views()->costView()->evalSpeedPanel();
        window.views()->costView()->measureTabs()->setCurrentWidget(panel);
        QSignalSpy requested(panel, &EvalSpeedPanel::measureRequested);
        panel->lengthsEdit()->setText(QStringLiteral("32, abc"));
        panel->measureButton()->click();
        QCOMPARE(requested.count(), 0);  // refused beside the field, nothing measured
        QVERIFY(panel->findChild<QLabel*>(QStringLiteral("evalSpeedLengthsError"))->text().contains(QStringLiteral("abc")));

        QSignalSpy finished(window.evalSpeedJob(), &EvalSpeedJob::finished);
        panel->lengthsEdit()->setText(QStringLiteral("64, 32"));
        panel->measureButton()->click();
        QCOMPARE(requested.count(), 1);
        QVERIFY(panel->isRunning());
        QVERIFY(!panel->measureButton()->isEnabled());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeoutMs);
        QCOMPARE(finished.at(0).at(1).toBool(), false);
        QVERIFY(!panel->isRunning());
        QCOMPARE(panel->samples().size(), 2);
        QCOMPARE(panel->samples()[0].length, 32);  // sorted by length
        QCOMPARE(panel->samples()[1].length, 64);
        for (const auto& s : panel->samples()) QVERIFY(s.memoryMs > 0 && s.recomputeMs > 0);
        // recomputing 64 tokens for every token costs more than one cached step (22× when measured)
        const auto& longest = panel->samples()[1];
        QVERIFY2(longest.recomputeMs > 2 * longest.memoryMs,
                 qPrintable(QStringLiteral("%1 ms vs %2 ms").arg(longest.recomputeMs).arg(longest.memoryMs)));
        QVERIFY2(panel->status().contains(QStringLiteral("Measured 2 lengths")), qPrintable(panel->status()));
    }

    void escapeCancelsTheMeasurement() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow window(&runner, AppSettings{}, quietOptions());
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        window.showView(MainWindow::View::Cost);
        EvalSpeedPanel* panel = window.views()->costView()->evalSpeedPanel();
        QSignalSpy finished(window.evalSpeedJob(), &EvalSpeedJob::finished);
        panel->lengthsEdit()->setText(QStringLiteral("2048, 4096"));  // minutes if it ran to the end
        panel->measureButton()->click();
        QAction* cancel = nullptr;
        for (QAction* action : window.findChildren<QAction*>())
            if (action->shortcut() == QKeySequence(Qt::Key_Escape)) cancel = action;
        QVERIFY(cancel && cancel->isEnabled());
        QElapsedTimer clock;
        clock.start();
        cancel->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeoutMs);
        QCOMPARE(finished.at(0).at(1).toBool(), true);
        QVERIFY2(clock.elapsed() < 20000, qPrintable(QString::number(clock.elapsed())));
        QVERIFY(panel->samples().isEmpty());
        QVERIFY(!panel->isRunning());
        QVERIFY(!cancel->isEnabled());
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestEvalSpeed)
#include "test_eval_speed.moc"
