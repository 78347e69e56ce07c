#include "support/qt_test_support.h"

#include "gui/settings/app_settings.h"
#include "gui/engine/engine_runner.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/panels/run_settings_panel.h"
#include "gui/window/token_find_bar.h"
#include "gui/window/tour_panel.h"
#include "gui/panels/compare_variants_editor.h"
#include "views/compare/compare_view.h"
#include "views/widgets/notices_panel.h"
#include "views/links/token_links.h"
#include "gui/settings/session.h"

#include "views/compare/compare_view.h"
#include "views/cost/cost_view.h"
#include "views/links/token_links.h"
#include "views/heatmap/head_heatmap.h"
#include "views/mask/mask_view.h"
#include "views/widgets/param_form.h"
#include "views/heatmap/heads_grid.h"
#include "views/help/help_panel.h"
#include "views/data/inspection_state.h"

#include <attnscope/tokenize.h>

#include <QComboBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QFile>
#include <QGuiApplication>
#include <QScreen>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTabWidget>
#include <QTest>

#include <cmath>

using attnscope::app::AppSettings;
using attnscope::app::EngineRunner;
using attnscope::app::LocalEngineBackend;
using attnscope::app::MainWindow;
namespace engine = attnscope::engine;

namespace {

constexpr int kRunTimeoutMs = 60000;

QString sampleFileText() {
    QFile file(QStringLiteral(ATTNSCOPE_SAMPLE_FILE));
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(file.readAll());
}

}  // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void runsTheSampleOnStartAndShowsTheChosenHead() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1200, 800);
        window.show();
        QSignalSpy shown(&window, &MainWindow::resultShown);

        QCOMPARE(window.inputs()->text()->toPlainText(), sampleFileText());
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, kRunTimeoutMs);
        QCOMPARE(shown.count(), 1);
        const auto result = window.lastResult();
        QCOMPARE(window.inputs()->variantCombo()->currentData().toString(), QStringLiteral("full"));

        // n = the number of word tokens of the sample, counted by the engine's tokenizer here.
        const std::string sample = sampleFileText().toStdString();
        auto tokens = engine::tokenize(engine::InputSpec{sample, engine::TokenizerKind::Words});
        QVERIFY(tokens.ok());
        const int n = static_cast<int>(tokens->tokens.size());
        QVERIFY(n > 10);
        QCOMPARE(result->n, n);
        QCOMPARE(result->input.tokens.size(), tokens->tokens.size());
        QCOMPARE(result->heads, AppSettings{}.heads);
        QCOMPARE(result->results.size(), std::size_t{1});
        const engine::AttentionResult& attention = result->results[0];
        QCOMPARE(window.views()->headsGrid()->headCount(), static_cast<int>(attention.heads));

        // Choose head 2 through the next-head action, as PgDn does.
        QCOMPARE(window.views()->state()->head(), 0);
        window.showNextHead();
        window.showNextHead();
        const int head = 2;
        QCOMPARE(window.views()->state()->head(), head);
        const auto* heatmap = window.views()->heatmap();
        QCOMPARE(heatmap->shownHead(), head);
        QCOMPARE(heatmap->dataSize(), QSize(n, n));
        bool differsFromHead0 = false;
        for (int i = 0; i < n; ++i) {
            double rowSum = 0;
            for (int j = 0; j < n; ++j) {
                const float expected = attention.weightAt(head, i, j);
                QCOMPARE(heatmap->cellValue(i, j), static_cast<double>(expected));
                differsFromHead0 |= expected != attention.weightAt(0, i, j);
                rowSum += expected;
            }
            QVERIFY2(std::abs(rowSum - 1.0) < 1e-4, qPrintable(QStringLiteral("row %1 sums to %2").arg(i).arg(rowSum)));
        }
        QVERIFY(differsFromHead0);
        QVERIFY(heatmap->title().contains(QStringLiteral("head 2")));

        // PgUp on the focused heatmap steps back through the window's shortcut.
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        window.views()->heatmap()->setFocus();
        QTest::keyClick(window.views()->heatmap(), Qt::Key_PageUp);
        QCOMPARE(window.views()->state()->head(), head - 1);
        QTest::keyClick(window.views()->heatmap(), Qt::Key_Right, Qt::ControlModifier);
        QCOMPARE(window.views()->state()->head(), head);

        // Steps stop at the last head.
        for (int k = 0; k < 10; ++k) window.showNextHead();
        QCOMPARE(window.views()->state()->head(), static_cast<int>(attention.heads) - 1);
        QVERIFY2(window.statusText().contains(QStringLiteral("tokens")), qPrintable(window.statusText()));
    }

    void hiddenTabsTakeTheResultWhenFirstShown() {
        using View = MainWindow::View;
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QStringLiteral("the cat sat on the mat because it was tired");
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1200, 800);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kRunTimeoutMs);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.runNow() != 0);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, kRunTimeoutMs);
        const auto first = window.lastResult();
        QVERIFY(first);

        // The heads grid and the shown tab take the result at once; hidden tabs have not yet.
        QCOMPARE(window.views()->heatmap()->result(), first);
        QCOMPARE(window.views()->headsGrid()->headCount(), static_cast<int>(first->heads));
        QVERIFY(!window.resultPending(View::Heatmap));
        for (View view : {View::Mask, View::Compare, View::Diagnostics, View::Links, View::Cost})
            QVERIFY(window.resultPending(view));
        QCOMPARE(window.views()->maskView()->shownHead(), -1);
        QCOMPARE(window.views()->tokenLinks()->tokenCount(), 0);
        QCOMPARE(window.views()->costView()->table()->rowCount(), 0);

        // A tab shown for the first time takes it, with the selection made meanwhile.
        window.views()->state()->setHead(1);
        window.showView(View::Mask);
        QVERIFY(!window.resultPending(View::Mask));
        QCOMPARE(window.views()->maskView()->shownHead(), 1);
        window.views()->maskView()->showQuery(3);
        window.showView(View::Links);
        QVERIFY(!window.resultPending(View::Links));
        QCOMPARE(window.views()->tokenLinks()->tokenCount(), static_cast<int>(first->n));
        QVERIFY(window.resultPending(View::Cost));
        // The mask tab, left, lets go of the result: head changes cost it nothing while hidden.
        QVERIFY(window.resultPending(View::Mask));
        QCOMPARE(window.views()->maskView()->shownHead(), -1);
        QCOMPARE(window.captureSession().query, 3);
        window.showView(View::Mask);
        QCOMPARE(window.views()->maskView()->shownHead(), 1);
        QCOMPARE(window.views()->maskView()->panelQuery(), 3);
        window.showView(View::Links);

        // The next result goes to the shown tab (Links) only; the mask view waits and keeps its
        // row panel's query for then.
        QVERIFY(window.runNow() != 0);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, kRunTimeoutMs);
        QVERIFY(window.lastResult() != first);
        QVERIFY(!window.resultPending(View::Links));
        QVERIFY(window.resultPending(View::Mask));
        QVERIFY(window.resultPending(View::Heatmap));
        QCOMPARE(window.views()->maskView()->shownHead(), -1);
        QVERIFY(window.views()->heatmap()->result() == nullptr);  // the old result is let go of
        window.showView(View::Mask);
        QCOMPARE(window.views()->maskView()->shownHead(), 1);
        QCOMPARE(window.views()->maskView()->panelQuery(), 3);
        QVERIFY2(window.captureSession().query == 3, "the session keeps the panel's query");

        // Rendering hidden tabs (exports, screenshots) flushes the rest.
        window.flushPendingResult();
        for (View view : {View::Heatmap, View::Mask, View::Compare, View::Diagnostics, View::Links, View::Cost})
            QVERIFY(!window.resultPending(view));
        QCOMPARE(window.views()->heatmap()->result(), window.lastResult());
        QCOMPARE(window.views()->heatmap()->shownHead(), 1);
        QVERIFY(window.views()->costView()->table()->rowCount() > 0);
        QCOMPARE(window.views()->compareView()->pane(0)->shownHead(), 1);
    }

    void ctrlFFindsATokenInEveryViewAndEnterGoesToIt() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.initialText = QStringLiteral("the cat sat on the mat because the cat was tired");
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, kRunTimeoutMs);
        window.inputs()->text()->setFocus();  // from a text field, as a user would
        QTest::keyClick(window.inputs()->text(), Qt::Key_F, Qt::ControlModifier);
        QTRY_VERIFY(window.views()->findBar()->isVisible());
        QVERIFY(window.views()->findBar()->field()->hasFocus());
        const QString typed = window.inputs()->text()->toPlainText();
        QTest::keyClicks(window.views()->findBar()->field(), QStringLiteral("cat"));
        QCOMPARE(window.inputs()->text()->toPlainText(), typed);  // the search did not type into the text
        QCOMPARE(window.views()->findBar()->status(), QStringLiteral("2 tokens (Enter: go to the next)"));
        QCOMPARE(window.views()->heatmap()->highlightBands(), 4);  // tokens 1 and 8: a row and a column each
        QCOMPARE(window.views()->tokenLinks()->highlightedTokens(), (QVector<int>{1, 8}));
        QTest::keyClick(window.views()->findBar()->field(), Qt::Key_Return);
        QCOMPARE(window.views()->heatmap()->hoveredQuery(), 1);
        QTest::keyClick(window.views()->findBar()->field(), Qt::Key_Return);
        QCOMPARE(window.views()->heatmap()->hoveredQuery(), 8);
        QCOMPARE(window.views()->findBar()->status(), QStringLiteral("token 8 “cat” (2 of 2)"));
        QTest::keyClick(window.views()->findBar()->field(), Qt::Key_Escape);
        QTRY_VERIFY(!window.views()->findBar()->isVisible());
        QCOMPARE(window.views()->heatmap()->highlightBands(), 0);
    }

    void theGuidedTourSetsUpAndRunsEachStep() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, kRunTimeoutMs);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        window.tourPanel()->showStep(0);
        QVERIFY(window.tourPanel()->isVisible());
        QCOMPARE(window.currentView(), MainWindow::View::Heatmap);
        QCOMPARE(window.inputs()->variantCombo()->currentData().toString(), QStringLiteral("full"));
        window.tourPanel()->nextButton()->click();
        QCOMPARE(window.currentView(), MainWindow::View::Mask);
        QCOMPARE(window.inputs()->variantCombo()->currentData().toString(), QStringLiteral("longformer"));
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->results.front().variantId == "longformer",
                                 kRunTimeoutMs);
        window.tourPanel()->nextButton()->click();  // compare: full beside two variants, run at once
        QCOMPARE(window.currentView(), MainWindow::View::Compare);
        QCOMPARE(window.inputs()->compareEditor()->ids(), (QStringList{QStringLiteral("longformer"), QStringLiteral("sparse_strided")}));
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->results.size() >= 3, kRunTimeoutMs);
        QVERIFY(window.views()->compareView()->hasComparison());
        QCOMPARE(window.tourPanel()->stepTitle(), QStringLiteral("3. Side by side, on the same Q, K, V"));
        window.tourPanel()->backButton()->click();
        QCOMPARE(window.tourPanel()->step(), 1);
        QCOMPARE(window.currentView(), MainWindow::View::Mask);
    }

    // The tour shows its own settings and gives the person's back when closed.
    void theGuidedTourGivesThePersonsSettingsBack() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.initialText = QStringLiteral("my own words about whales and ships");
        options.compareVariant = QStringLiteral("performer");
        AppSettings settings;
        settings.variantId = QStringLiteral("longformer");
        MainWindow window(&runner, settings, options);
        window.resize(1366, 741);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, kRunTimeoutMs);
        window.inputs()->paramForm()->setValues({{"window", std::int64_t{3}}});
        window.tourPanel()->showStep(0);
        QCOMPARE(window.inputs()->variantCombo()->currentData().toString(), QStringLiteral("full"));
        window.tourPanel()->nextButton()->click();
        window.tourPanel()->nextButton()->click();
        QSignalSpy shown(&window, &MainWindow::resultShown);
        window.tourPanel()->close();
        QCOMPARE(window.inputs()->variantCombo()->currentData().toString(), QStringLiteral("longformer"));
        QCOMPARE(std::get<std::int64_t>(window.inputs()->paramForm()->values().at("window")), std::int64_t{3});
        QCOMPARE(window.inputs()->compareEditor()->combo(0)->currentData().toString(), QStringLiteral("performer"));
        QCOMPARE(window.inputs()->compareEditor()->rowCount(), 1);
        QCOMPARE(window.inputs()->text()->toPlainText(), options.initialText);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1, kRunTimeoutMs);  // and runs them again
        QCOMPARE(QString::fromStdString(window.lastResult()->results[0].variantId), QStringLiteral("longformer"));
    }

    void longMessagesNeverWidenTheWindowAndAreKeptWhole() {
        // BigBird padding the sample: a warning several hundred characters long.
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.params = {QStringLiteral("pad=true")};
        AppSettings settings;
        settings.variantId = QStringLiteral("bigbird");
        MainWindow window(&runner, settings, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, kRunTimeoutMs);
        QVERIFY2(window.statusText().contains(QStringLiteral("padded")), qPrintable(window.statusText()));
        QVERIFY(window.statusText().size() > 150);
        // One line of it in the status bar, which no longer sets the window's minimum width...
        QVERIFY2(window.minimumSizeHint().width() <= 1366, qPrintable(QString::number(window.minimumSizeHint().width())));
        QCOMPARE(window.width(), 1366);
        // ...and all of it, with every earlier message, in View ▸ Messages.
        const QStringList messages = window.noticesPanel()->messages();
        QVERIFY(messages.size() >= 2);
        QVERIFY(messages.first().contains(QStringLiteral("Starting the engine")));
        QVERIFY(messages.last().endsWith(window.statusText()));
    }

    // A laptop screen (1366 × 768): no content changes the window's size — not a BigBird row's long
    // key list in the Mask tab's row panel, not the Messages dock, not the Guided Tour's dock.
    void contentNeverChangesTheWindowsSize() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.params = {QStringLiteral("pad=true")};
        AppSettings settings;
        settings.variantId = QStringLiteral("bigbird");
        MainWindow window(&runner, settings, options);
        window.resize(1366, 741);  // (768 less a desktop panel)
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, kRunTimeoutMs);
        const QSize size = window.size();
        window.showView(MainWindow::View::Mask);
        window.views()->maskView()->moveCursorTo(40, 0);
        QVERIFY2(window.views()->maskView()->rowPanelText().count(QLatin1Char('\n')) >= 20,
                 qPrintable(window.views()->maskView()->rowPanelText()));
        QTest::qWait(50);
        QCOMPARE(window.size(), size);
        window.noticesPanel()->show();
        QTest::qWait(50);
        QCOMPARE(window.size(), size);
        window.noticesPanel()->hide();
        QSignalSpy tourRan(&window, &MainWindow::resultShown);
        window.tourPanel()->showStep(0);
        QTRY_VERIFY_WITH_TIMEOUT(tourRan.count() >= 1, kRunTimeoutMs);
        QTest::qWait(50);
        QCOMPARE(window.size(), size);
        window.tourPanel()->nextButton()->click();  // the Mask step, its row panel filled
        QTest::qWait(50);
        QCOMPARE(window.size(), size);
        QVERIFY2(window.minimumSizeHint().height() <= 741, qPrintable(QString::number(window.minimumSizeHint().height())));
        QVERIFY2(window.minimumSizeHint().width() <= 1366, qPrintable(QString::number(window.minimumSizeHint().width())));
    }

    // --compare-param ID:NAME=VALUE goes to that compared variant's row; a plain NAME=VALUE to the first.
    void eachComparedVariantTakesItsOwnParameters() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.compareVariant = QStringLiteral("bigbird,longformer,performer");
        options.compareParams = {QStringLiteral("longformer:window=2"), QStringLiteral("block=8"),
                                 QStringLiteral("performer:nb_features=16")};
        MainWindow window(&runner, AppSettings{}, options);
        window.show();
        attnscope::app::CompareVariantsEditor* editor = window.inputs()->compareEditor();
        QTRY_COMPARE_WITH_TIMEOUT(editor->rowCount(), 3, kRunTimeoutMs);
        QCOMPARE(editor->combo(0)->currentData().toString(), QStringLiteral("bigbird"));
        QCOMPARE(std::get<std::int64_t>(editor->form(0)->values().at("block")), std::int64_t{8});
        QCOMPARE(editor->combo(1)->currentData().toString(), QStringLiteral("longformer"));
        QCOMPARE(std::get<std::int64_t>(editor->form(1)->values().at("window")), std::int64_t{2});
        QCOMPARE(std::get<std::int64_t>(editor->form(2)->values().at("nb_features")), std::int64_t{16});
    }

    // A compared variant's parameter that does not parse is marked under its field (also when the
    // run does not compare) and, when the Compare tab asked for the run, said in the tab's footer.
    void aComparedVariantsBadParameterIsMarkedAndSaidInTheCompareTab() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = true;
        options.runOnStart = false;
        options.compareVariant = QStringLiteral("longformer");
        MainWindow window(&runner, AppSettings{}, options);
        window.show();
        attnscope::app::CompareVariantsEditor* editor = window.inputs()->compareEditor();
        QTRY_COMPARE_WITH_TIMEOUT(editor->rowCount(), 1, kRunTimeoutMs);
        QTRY_COMPARE_WITH_TIMEOUT(editor->combo(0)->currentData().toString(), QStringLiteral("longformer"), kRunTimeoutMs);
        auto* global = editor->form(0)->findChild<QLineEdit*>(QStringLiteral("global"));
        QVERIFY(global);
        global->setText(QStringLiteral("abc, 3"));
        window.showView(MainWindow::View::Mask);  // not comparing: the run goes on, the field is marked
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.runNow() != 0);
        QVERIFY(!editor->form(0)->fieldNote(QStringLiteral("global")).isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, kRunTimeoutMs);
        window.showView(MainWindow::View::Compare);
        QCOMPARE(window.runNow(), quint64{0});
        QVERIFY(!editor->form(0)->fieldNote(QStringLiteral("global")).isEmpty());
        QVERIFY2(window.views()->compareView()->infoText().contains(QStringLiteral("global")),
                 qPrintable(window.views()->compareView()->infoText()));
        QVERIFY(window.findChildren<QMessageBox*>().isEmpty());
    }

    void theFirstWindowTakesMostOfTheScreen() {
        // No saved geometry: 90 % of the screen's available area (capped), not Qt's small default.
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        MainWindow window(&runner, AppSettings{}, options);
        const QRect available = QGuiApplication::primaryScreen()->availableGeometry();
        QCOMPARE(window.width(), std::min(available.width() * 9 / 10, MainWindow::kFirstWindowMaxWidth));
        QCOMPARE(window.height(), std::min(available.height() * 9 / 10, MainWindow::kFirstWindowMaxHeight));
    }

    void editsAfterARunMarkTheResultOutOfDateUntilTheNextRun() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QStringLiteral("some text to look at");
        MainWindow window(&runner, AppSettings{}, options);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kRunTimeoutMs);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(!window.resultOutOfDate());  // nothing shown yet
        QVERIFY(window.runNow() != 0);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, kRunTimeoutMs);
        QVERIFY(!window.resultOutOfDate());
        // another variant: out of date; back to the shown one: current again
        const int shownIndex = window.inputs()->variantCombo()->currentIndex();
        window.inputs()->variantCombo()->setCurrentIndex(shownIndex == 0 ? 1 : 0);
        QVERIFY(window.resultOutOfDate());
        window.inputs()->variantCombo()->setCurrentIndex(shownIndex);
        QVERIFY(!window.resultOutOfDate());
        // the text
        window.inputs()->text()->setPlainText(QStringLiteral("another text"));
        QVERIFY(window.resultOutOfDate());
        QVERIFY(window.runNow() != 0);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, kRunTimeoutMs);
        QVERIFY(!window.resultOutOfDate());
    }

    void failedUserRunIsReportedInTheStatusBarWithoutBlocking() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QStringLiteral("some text");
        MainWindow window(&runner, AppSettings{}, options);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kRunTimeoutMs);
        QSignalSpy failed(&window, &MainWindow::runFailed);
        window.inputs()->text()->clear();  // the engine refuses a text without tokens (InvalidInput)
        QVERIFY(window.runNow() != 0);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kRunTimeoutMs);
        QCOMPARE(failed.at(0).at(2).toInt(), static_cast<int>(engine::ErrorCode::InvalidInput));
        QVERIFY(window.lastResult() == nullptr);
        QVERIFY2(window.statusText().startsWith(QStringLiteral("Run failed")), qPrintable(window.statusText()));
        QVERIFY(window.findChildren<QMessageBox*>().isEmpty());
    }

    void compareTabRunsBothVariantsInOneRequest() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1400, 900);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kRunTimeoutMs);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QSignalSpy finished(&runner, &EngineRunner::runFinished);

        window.inputs()->variantCombo()->setCurrentIndex(window.inputs()->variantCombo()->findData(QStringLiteral("full")));
        const int longformer = window.inputs()->compareEditor()->combo(0)->findData(QStringLiteral("longformer"));
        QVERIFY(longformer >= 0);
        window.inputs()->compareEditor()->combo(0)->setCurrentIndex(longformer);
        QCOMPARE(window.inputs()->compareEditor()->form(0)->variant().id, std::string("longformer"));
        window.inputs()->compareEditor()->form(0)->setValues({{"window", std::int64_t{2}}});
        QVERIFY(window.lastResult() == nullptr);

        window.showView(MainWindow::View::Compare);  // selecting the tab starts the one run
        QCOMPARE(window.views()->tabs()->currentIndex(), static_cast<int>(MainWindow::View::Compare));
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, kRunTimeoutMs);
        QTest::qWait(200);  // nothing else queued behind it
        QCOMPARE(shown.count(), 1);
        QCOMPARE(finished.count(), 1);
        const auto result = window.lastResult();
        QCOMPARE(result->results.size(), std::size_t{2});
        QCOMPARE(result->results[0].variantId, std::string("full"));
        const engine::AttentionResult& lf = result->results[1];
        QCOMPARE(lf.variantId, std::string("longformer"));
        QCOMPARE(std::get<std::int64_t>(lf.params.at("window")), std::int64_t{2});

        const int n = static_cast<int>(result->n);
        const auto* compare = window.views()->compareView();
        QVERIFY(compare->hasComparison());
        window.showNextHead();
        for (int pane : {0, 1}) {
            QCOMPARE(compare->pane(pane)->shownHead(), 1);
            QCOMPARE(compare->pane(pane)->dataSize(), QSize(n, n));
        }
        // Same (query, key) in both panes: full attends it, longformer's window (2) does not.
        window.views()->compareView()->hoverCell(n - 1, 0);
        QCOMPARE(compare->hoveredQuery(1), n - 1);
        QCOMPARE(compare->shownValue(0), static_cast<double>(result->results[0].weightAt(1, n - 1, 0)));
        QVERIFY(!compare->shownInPattern(1));
        QCOMPARE(compare->pane(1)->cellValue(5, 4), static_cast<double>(lf.weightAt(1, 5, 4)));

        // The Mask tab shows the selected result's pattern: full attends every key.
        window.showView(MainWindow::View::Mask);
        QCOMPARE(window.views()->maskView()->legendReasons(), QStringList{QStringLiteral("dense")});
        QCOMPARE(window.views()->maskView()->shownHead(), 1);
        QCOMPARE(shown.count(), 1);  // switching away from Compare does not run again
    }

    // A parameter's problem appears under its field, not in a dialog, with the fix the engine
    // suggests as a button; the next run clears it.
    void aParameterProblemIsShownUnderItsFieldWithItsFix() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = true;
        options.runOnStart = false;
        options.initialText = QStringLiteral("a b c d e f g h i j k l m n o p q r s t u v w x y z");  // 26 words
        MainWindow window(&runner, AppSettings{}, options);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kRunTimeoutMs);
        window.inputs()->variantCombo()->setCurrentIndex(window.inputs()->variantCombo()->findData(QStringLiteral("bigbird")));
        attnscope::views::ParamForm* form = window.inputs()->paramForm();
        form->setValues({{"block", std::int64_t{4}}, {"pad", false}});
        QSignalSpy failed(&window, &MainWindow::runFailed);
        QVERIFY(window.runNow() != 0);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kRunTimeoutMs);
        QVERIFY(window.findChildren<QMessageBox*>().isEmpty());
        QVERIFY2(form->fieldNote(QStringLiteral("block")).contains(QStringLiteral("needs n = 26 to be a multiple of parameter 'block' = 4")),
                 qPrintable(form->fieldNote(QStringLiteral("block"))));
        QVERIFY(form->findChild<QSpinBox*>(QStringLiteral("block"))->property("problem").toBool());
        QPushButton* fix = form->fieldFix(QStringLiteral("block"));
        QVERIFY(fix != nullptr);
        QCOMPARE(fix->text(), QStringLiteral("Set pad = true and run"));
        QSignalSpy shown(&window, &MainWindow::resultShown);
        fix->click();
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, kRunTimeoutMs);
        QCOMPARE(std::get<bool>(form->values().at("pad")), true);
        QVERIFY(form->fieldNote(QStringLiteral("block")).isEmpty());
        QVERIFY(!form->findChild<QSpinBox*>(QStringLiteral("block"))->property("problem").toBool());

        // every list that does not parse is marked at once
        window.inputs()->variantCombo()->setCurrentIndex(window.inputs()->variantCombo()->findData(QStringLiteral("longformer")));
        form->findChild<QLineEdit*>(QStringLiteral("global"))->setText(QStringLiteral("0, x"));
        form->findChild<QLineEdit*>(QStringLiteral("dilation"))->setText(QStringLiteral("one"));
        QCOMPARE(window.runNow(), quint64{0});
        QVERIFY(form->fieldNote(QStringLiteral("global")).startsWith(QStringLiteral("Expected comma-separated numbers")));
        QVERIFY(form->fieldNote(QStringLiteral("dilation")).startsWith(QStringLiteral("Expected comma-separated numbers")));
    }

    // A value typed outside its range becomes the nearest allowed one, and the window says so
    // (QSpinBox alone refused the keys: 99999 in Heads became 9).
    // Every variant, as the window starts it, runs on an ordinary sentence of 38 words: a length
    // no block divides (BigBird starts with `pad` ticked; the engine's own default refuses).
    void everyVariantsStartValuesRunOnOrdinaryText() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = true;
        options.runOnStart = false;
        options.initialText = QStringLiteral(
            "The students asked the teacher why the model looked back at the first word of every sentence, and she "
            "answered that attention often rests there when nothing else in the text is worth a look today.");
        MainWindow window(&runner, AppSettings{}, options);
        window.show();
        QComboBox* combo = window.inputs()->variantCombo();
        QTRY_VERIFY_WITH_TIMEOUT(combo->count() > 0, kRunTimeoutMs);
        int ran = 0;
        for (int i = 0; i < combo->count(); ++i) {
            const QString id = combo->itemData(i).toString();
            if (id.isEmpty() || id == QStringLiteral("local2d")) continue;  // (local2d takes a picture's grid)
            combo->setCurrentIndex(i);
            QSignalSpy shown(&window, &MainWindow::resultShown);
            QSignalSpy failed(&window, &MainWindow::runFailed);
            QVERIFY2(window.runNow() != 0, qPrintable(id));
            QTRY_VERIFY_WITH_TIMEOUT(shown.count() + failed.count() > 0, kRunTimeoutMs);
            QVERIFY2(failed.isEmpty(), qPrintable(id + QStringLiteral(": ") + failed.value(0).value(1).toString()));
            ++ran;
        }
        QVERIFY(ran >= 14);  // every variant of the registry but local2d and the model-only one
        combo->setCurrentIndex(combo->findData(QStringLiteral("bigbird")));
        QCOMPARE(std::get<bool>(window.inputs()->paramForm()->values().at("pad")), true);
        // (the sentence's length is one BigBird's block does not divide: unticked, it is refused)
        window.inputs()->paramForm()->setValues({{"pad", false}});
        QSignalSpy refused(&window, &MainWindow::runFailed);
        QVERIFY(window.runNow() != 0);
        QTRY_COMPARE_WITH_TIMEOUT(refused.count(), 1, kRunTimeoutMs);
    }

    void valuesTypedOutsideTheirRangeAreClampedWithANotice() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        MainWindow window(&runner, AppSettings{}, options);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kRunTimeoutMs);
        QSpinBox* heads = window.inputs()->headsSpin();
        heads->setFocus();
        heads->selectAll();
        QTest::keyClicks(heads, QStringLiteral("99999"));
        QTest::keyClick(heads, Qt::Key_Return);
        QCOMPARE(heads->value(), 64);
        QCOMPARE(window.statusText(), QStringLiteral("Heads: 99999 is above the largest allowed value, 64; using 64."));

        window.inputs()->variantCombo()->setCurrentIndex(window.inputs()->variantCombo()->findData(QStringLiteral("longformer")));
        auto* windowSpin = window.inputs()->paramForm()->findChild<QSpinBox*>(QStringLiteral("window"));
        windowSpin->setFocus();
        windowSpin->selectAll();
        QTest::keyClicks(windowSpin, QStringLiteral("-3"));
        QTest::keyClick(windowSpin, Qt::Key_Tab);  // (leaving the field ends the edit too)
        QCOMPARE(windowSpin->value(), 0);
        QCOMPARE(window.inputs()->paramForm()->fieldNote(QStringLiteral("window")),
                 QStringLiteral("window: -3 is below the smallest allowed value, 0; using 0."));
        QCOMPARE(window.statusText(), window.inputs()->paramForm()->fieldNote(QStringLiteral("window")));
    }

    // F1 opens the help panel on the shown tab and the chosen variant, from any field; it follows
    // the tab and the variant.
    void f1ExplainsTheShownTabAndVariant() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        MainWindow window(&runner, AppSettings{}, options);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kRunTimeoutMs);
        window.inputs()->variantCombo()->setCurrentIndex(window.inputs()->variantCombo()->findData(QStringLiteral("longformer")));
        QVERIFY(!window.helpPanel()->isVisible());
        window.inputs()->text()->setFocus();
        QTest::keyClick(window.inputs()->text(), Qt::Key_F1);
        QTRY_VERIFY(window.helpPanel()->isVisible());
        QVERIFY(window.helpPanel()->plainText().startsWith(QStringLiteral("Heatmap")));
        QVERIFY(window.helpPanel()->plainText().contains(QStringLiteral("Beltagy et al. 2020")));
        window.showView(MainWindow::View::Mask);
        QVERIFY(window.helpPanel()->plainText().startsWith(QStringLiteral("Mask")));
        window.inputs()->variantCombo()->setCurrentIndex(window.inputs()->variantCombo()->findData(QStringLiteral("performer")));
        QVERIFY(window.helpPanel()->plainText().contains(QStringLiteral("Approximates softmax")));
        QTest::keyClick(window.inputs()->text(), Qt::Key_F1);
        QTRY_VERIFY(!window.helpPanel()->isVisible());
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestMainWindow)
#include "test_main_window.moc"
