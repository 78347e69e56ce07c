// RunController against the fake backend: what each tab's run requests, which answers come out,
// the retry without exact softmax after an over-budget compare, a parameter's error under its
// field, and whether the shown result is out of date.

#include "app/fake_backend.h"
#include "support/qt_test_support.h"

#include "gui/panels/compare_variants_editor.h"
#include "gui/engine/engine_runner.h"
#include "gui/controllers/model_controller.h"
#include "gui/controllers/run_controller.h"
#include "gui/panels/run_settings_panel.h"

#include "views/diagnostics/approximation_view.h"
#include "views/widgets/param_form.h"

#include <attnscope/variant_catalog.h>

#include <QComboBox>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include <memory>

using attnscope::app::CompareVariantsEditor;
using attnscope::app::EngineRunner;
using attnscope::app::ModelController;
using attnscope::app::RunController;
using attnscope::app::RunSettingsPanel;
using attnscope::testing::FakeBackend;
namespace engine = attnscope::engine;

namespace {

using Purpose = RunController::Purpose;
using Run = std::shared_ptr<const engine::RunResult>;

std::vector<std::string> idsOf(const engine::RunRequest& request) {
    std::vector<std::string> ids;
    for (const auto& v : request.variants) ids.push_back(v.id);
    return ids;
}

Run resultWith(const std::vector<std::string>& ids) {
    auto result = std::make_shared<engine::RunResult>();
    for (const std::string& id : ids) {
        result->results.emplace_back();
        result->results.back().variantId = id;
    }
    return result;
}

}  // namespace

class TestRunController : public QObject {
    Q_OBJECT
private:
    std::shared_ptr<FakeBackend::Control> m_control;
    std::unique_ptr<EngineRunner> m_runner;
    std::unique_ptr<QWidget> m_window;  // parents the column, the model box and the view
    RunSettingsPanel* m_inputs = nullptr;
    ModelController* m_models = nullptr;
    attnscope::views::ApproximationView* m_approximation = nullptr;
    RunController* m_runs = nullptr;

    // The column with `variant` chosen and its projection seed = `tag` (the fake's run id).
    void choose(const QString& variant, int tag) {
        m_inputs->variantCombo()->setCurrentIndex(m_inputs->variantCombo()->findData(variant));
        QCOMPARE(m_inputs->variantId(), variant);
        m_inputs->seedSpin()->setValue(tag);
    }

    std::vector<std::string> requestedIds(std::size_t index) {
        std::lock_guard<std::mutex> lock(m_control->mutex);
        return index < m_control->requests.size() ? idsOf(m_control->requests[index]) : std::vector<std::string>{};
    }

    std::size_t requestCount() {
        std::lock_guard<std::mutex> lock(m_control->mutex);
        return m_control->requests.size();
    }

private Q_SLOTS:
    void init() {
        m_control = std::make_shared<FakeBackend::Control>();
        m_runner = std::make_unique<EngineRunner>(std::make_unique<FakeBackend>(m_control));
        m_window = std::make_unique<QWidget>();
        RunSettingsPanel::Initial initial;
        initial.text = QStringLiteral("the cat sat on the mat");
        initial.tokenizer = QStringLiteral("words");
        m_inputs = new RunSettingsPanel(initial, m_window.get());
        m_inputs->setVariants(engine::variantCatalog());
        m_inputs->compareEditor()->setVariants(engine::variantCatalog(), QStringLiteral("bigbird"));
        m_models = new ModelController(m_runner.get(), m_window.get(), false);
        m_approximation = new attnscope::views::ApproximationView(m_window.get());
        m_runs = new RunController(m_runner.get(), m_inputs, m_models, m_approximation, m_window.get());
    }

    void cleanup() {
        m_control->releaseEverything();
        m_runs = nullptr;
        m_window.reset();
        m_runner.reset();
    }

    void compareRunHoldsTheRowsAndExactSoftmax() {
        choose(QStringLiteral("longformer"), 11);
        m_inputs->compareEditor()->setRows({{"bigbird", {}}, {"reformer", {}}});
        QSignalSpy ready(m_runs, &RunController::resultReady);
        QVERIFY(m_runs->start(Purpose::Compare, true) != 0);
        QTRY_VERIFY(m_control->hasStarted(11));
        QVERIFY(m_runs->runningFor(Purpose::Compare));
        QVERIFY(!m_runs->runningFor(Purpose::Diagnostics));
        QCOMPARE(requestedIds(0), (std::vector<std::string>{"longformer", "bigbird", "reformer", "full"}));
        m_control->release(11);
        QTRY_COMPARE(ready.count(), 1);
        const Run run = ready.at(0).at(1).value<Run>();
        QCOMPARE(ready.at(0).at(2).toInt(), 3);  // the panes: main and both rows, not the added `full`
        QVERIFY(ready.at(0).at(3).toString().isEmpty());
        QVERIFY(!m_runs->shownLacks(Purpose::Compare, run.get()));
        // Another row order is another comparison.
        m_inputs->compareEditor()->setRows({{"reformer", {}}, {"bigbird", {}}});
        QVERIFY(m_runs->shownLacks(Purpose::Compare, run.get()));
        // Other tabs do not ask for the rows.
        QVERIFY(m_runner->isRunning() == false);
        QVERIFY(m_runs->start(Purpose::Views, false) != 0);
        QTRY_COMPARE(requestCount(), std::size_t{2});
        QCOMPARE(requestedIds(1), (std::vector<std::string>{"longformer"}));
    }

    void overBudgetCompareRunsAgainWithoutExact() {
        choose(QStringLiteral("longformer"), 12);
        m_inputs->compareEditor()->setRows({{"bigbird", {}}});
        m_control->failures[12] = {engine::ErrorCode::OutOfBudget, "full: 9 GiB over the 4 GiB budget"};
        QSignalSpy ready(m_runs, &RunController::resultReady);
        QSignalSpy failed(m_runs, &RunController::failed);
        m_runs->start(Purpose::Compare, true);
        QTRY_VERIFY(m_control->hasStarted(12));
        m_control->release(12);
        QTRY_COMPARE(requestCount(), std::size_t{2});
        QCOMPARE(requestedIds(1), (std::vector<std::string>{"longformer", "bigbird"}));
        QTRY_COMPARE(ready.count(), 1);
        QCOMPARE(failed.count(), 0);  // the retry is not a failure the user sees
        const QString note = ready.at(0).at(3).toString();
        QVERIFY2(note.contains(QStringLiteral("does not fit the memory budget")) && note.contains(QStringLiteral("9 GiB")),
                 qPrintable(note));
    }

    void diagnosticsRunAddsExactForApproximationsAndSparseVariants() {
        choose(QStringLiteral("performer"), 13);
        QVERIFY(m_runs->shownLacks(Purpose::Diagnostics, resultWith({"performer"}).get()));
        QVERIFY(m_runs->shownLacks(Purpose::Diagnostics, resultWith({"linear", "full"}).get()));  // another variant's
        QVERIFY(!m_runs->shownLacks(Purpose::Diagnostics, resultWith({"performer", "full"}).get()));
        m_runs->start(Purpose::Diagnostics, false);
        QTRY_VERIFY(m_control->hasStarted(13));
        QCOMPARE(requestedIds(0), (std::vector<std::string>{"performer", "full"}));
        QVERIFY(m_runs->runningFor(Purpose::Diagnostics));

        choose(QStringLiteral("longformer"), 14);  // its page shows the softmax mass its pattern keeps
        QVERIFY(m_runs->shownLacks(Purpose::Diagnostics, resultWith({"longformer"}).get()));
        m_runs->start(Purpose::Diagnostics, false);
        QTRY_VERIFY(m_control->hasStarted(14));
        QCOMPARE(requestedIds(1), (std::vector<std::string>{"longformer", "full"}));

        choose(QStringLiteral("reformer"), 31);  // buckets and chunks: nothing to add
        QVERIFY(!m_runs->shownLacks(Purpose::Diagnostics, resultWith({"reformer"}).get()));
        m_runs->start(Purpose::Diagnostics, false);
        QTRY_VERIFY(m_control->hasStarted(31));
        QCOMPARE(requestedIds(2), (std::vector<std::string>{"reformer"}));
    }

    void onlyTheLatestRunsAnswerComesOut() {
        m_control->ignoreCancel = true;  // the first run still answers after it was superseded
        choose(QStringLiteral("longformer"), 15);
        QSignalSpy ready(m_runs, &RunController::resultReady);
        m_runs->start(Purpose::Views, false);
        QTRY_VERIFY(m_control->hasStarted(15));
        m_inputs->seedSpin()->setValue(16);
        const quint64 second = m_runs->start(Purpose::Views, false);
        m_control->release(15);
        QTRY_VERIFY(m_control->hasStarted(16));
        m_control->release(16);
        QTRY_COMPARE(ready.count(), 1);
        QCOMPARE(ready.at(0).at(0).toULongLong(), second);
        QCOMPARE(ready.at(0).at(1).value<Run>()->n, 16);
    }

    void unparsableListIsRefusedBeforeAnyRun() {
        choose(QStringLiteral("longformer"), 17);
        auto* global = m_inputs->paramForm()->findChild<QLineEdit*>(QStringLiteral("global"));
        QVERIFY(global);
        global->setText(QStringLiteral("1, x"));
        QSignalSpy refused(m_runs, &RunController::refused);
        QCOMPARE(m_runs->start(Purpose::Views, true), quint64{0});
        QCOMPARE(refused.count(), 1);
        QVERIFY(refused.at(0).at(0).toString().contains(QStringLiteral("global")));
        QVERIFY(!m_inputs->paramForm()->fieldNote(QStringLiteral("global")).isEmpty());
        QTest::qWait(20);
        QCOMPARE(requestCount(), std::size_t{0});
    }

    void parameterErrorIsShownUnderItsFieldWithTheFix() {
        choose(QStringLiteral("bigbird"), 18);
        m_control->failures[18] = {engine::ErrorCode::InvalidArgument,
                                   "bigbird: the block form needs n = 6 to be a multiple of parameter 'block' = 4 "
                                   "(set pad=true to pad the end with masked tokens)"};
        QSignalSpy failed(m_runs, &RunController::failed);
        QSignalSpy rerun(m_runs, &RunController::rerunRequested);
        m_runs->start(Purpose::Views, true);
        QTRY_VERIFY(m_control->hasStarted(18));
        m_control->release(18);
        QTRY_COMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(3).toBool(), true);  // the user asked for it
        QCOMPARE(failed.at(0).at(4).toBool(), true);  // and its field shows why
        const QString note = m_inputs->paramForm()->fieldNote(QStringLiteral("block"));
        QVERIFY2(note.startsWith(QStringLiteral("the block form needs n = 6")), qPrintable(note));  // without "bigbird: "
        QPushButton* fix = m_inputs->paramForm()->fieldFix(QStringLiteral("block"));
        QVERIFY(fix);
        fix->click();
        QCOMPARE(rerun.count(), 1);
        QCOMPARE(std::get<bool>(m_inputs->paramForm()->values().at("pad")), true);
    }

    void compareRowsErrorIsNotPutUnderTheMainForm() {
        choose(QStringLiteral("bigbird"), 19);
        m_control->failures[19] = {engine::ErrorCode::InvalidArgument, "longformer: parameter 'window' = 99 must be below n = 6"};
        QSignalSpy failed(m_runs, &RunController::failed);
        m_runs->start(Purpose::Views, true);
        QTRY_VERIFY(m_control->hasStarted(19));
        m_control->release(19);
        QTRY_COMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(4).toBool(), false);
    }

    void shownResultGoesOutOfDateWhenAnInputChanges() {
        choose(QStringLiteral("longformer"), 20);
        QVERIFY(!m_runs->shownOutOfDate());  // nothing shown yet
        QSignalSpy changed(m_runs, &RunController::inputsChanged);
        QSignalSpy ready(m_runs, &RunController::resultReady);
        m_runs->start(Purpose::Views, false);
        QTRY_VERIFY(m_control->hasStarted(20));
        m_control->release(20);
        QTRY_COMPARE(ready.count(), 1);
        QVERIFY(!m_runs->shownOutOfDate());
        const QString text = m_inputs->text()->toPlainText();
        m_inputs->text()->setPlainText(text + QStringLiteral(" again"));
        QVERIFY(changed.count() >= 1);
        QVERIFY(m_runs->shownOutOfDate());
        m_inputs->text()->setPlainText(text);  // back to what was run
        QVERIFY(!m_runs->shownOutOfDate());
        m_inputs->headsSpin()->setValue(m_inputs->headsSpin()->value() + 1);
        QVERIFY(m_runs->shownOutOfDate());
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestRunController)
#include "test_run_controller.moc"
