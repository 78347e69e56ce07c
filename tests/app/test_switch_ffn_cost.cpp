// The Cost tab's Switch FFN vs dense page, as a user runs it: type token counts, Measure, read
// the points and the table (the Switch layer holds E times the weights); bad counts are refused
// beside the field.

#include "support/qt_test_support.h"

#include "gui/settings/app_settings.h"
#include "gui/engine/engine_runner.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/panels/run_settings_panel.h"
#include "views/cost/cost_view.h"
#include "views/cost/switch_ffn_panel.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTest>

using attnscope::app::AppSettings;
using attnscope::app::EngineRunner;
using attnscope::app::LocalEngineBackend;
using attnscope::app::MainWindow;
using attnscope::views::SwitchFfnPanel;

namespace {
constexpr int kTimeoutMs = 120000;
}  // namespace

class TestSwitchFfnCost : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parsesTokenCountsAndRefusesBadOnes() {
        QString error;
        QCOMPARE(SwitchFfnPanel::parseTokens(QStringLiteral("1024, 64 64;256"), &error), (QVector<int>{64, 256, 1024}));
        QVERIFY(SwitchFfnPanel::parseTokens(QStringLiteral("70000"), &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("“70000”")), qPrintable(error));
        QVERIFY(SwitchFfnPanel::parseTokens(QStringLiteral(" "), &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("no token counts")), qPrintable(error));
    }

    void measuresBothLayersPerTokenCount() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        window.showView(MainWindow::View::Cost);
        SwitchFfnPanel* panel = window.views()->costView()->switchFfnPanel();
        window.views()->costView()->measureTabs()->setCurrentWidget(panel);
        QSignalSpy requested(panel, &SwitchFfnPanel::measureRequested);
        panel->tokensEdit()->setText(QStringLiteral("64, many"));
        panel->measureButton()->click();
        QCOMPARE(requested.count(), 0);
        QVERIFY(panel->findChild<QLabel*>(QStringLiteral("switchFfnTokensError"))->text().contains(QStringLiteral("many")));

        panel->tokensEdit()->setText(QStringLiteral("256, 64"));
        panel->expertsSpin()->setValue(4);
        panel->measureButton()->click();
        QCOMPARE(requested.count(), 1);
        QCOMPARE(requested.at(0).at(1).toInt(), 4);
        QTRY_VERIFY_WITH_TIMEOUT(panel->status().contains(QStringLiteral("Measured 2 token counts")), kTimeoutMs);
        QCOMPARE(panel->points().size(), 2);
        QCOMPARE(panel->points()[0].tokens, std::int64_t{64});
        QCOMPARE(panel->points()[1].tokens, std::int64_t{256});
        for (const auto& p : panel->points()) QVERIFY(p.denseSeconds > 0 && p.switchSeconds > 0);
        // 4 experts of 2·256·1024 + 1024 + 256 weights and a 4 × 256 router against one FFN
        const auto& last = panel->points().back();
        QCOMPARE(last.switchWeightBytes, 4u * (4u * 525568u + 4u * 256u));
        QVERIFY2(panel->tableHtml().contains(QStringLiteral("4.0× the parameters")), qPrintable(panel->tableHtml()));
        QCOMPARE(last.capacity, std::int64_t{80});  // ⌈256 / 4 · 1.25⌉
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestSwitchFfnCost)
#include "test_switch_ffn_cost.moc"
