// Generate in the window, end to end on a GGUF file with its own tokenizer and the real engine:
// Ctrl+G continues the input text, the written tokens appear in the box, and the window then shows
// the model's own attention of the prompt and the written tokens, those marked, the newest selected.

#include "support/qt_test_support.h"
#include "support/tiny_gguf.h"

#include "gui/settings/app_settings.h"
#include "gui/engine/engine_runner.h"
#include "gui/controllers/generate_controller.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/controllers/model_controller.h"
#include "gui/panels/model_source_panel.h"
#include "gui/panels/run_settings_panel.h"
#include "gui/window/view_tabs.h"

#include "views/heatmap/head_heatmap.h"

#include <QAction>
#include <QGroupBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QSignalSpy>
#include <QTest>

#include <cmath>

using namespace attnscope;
using attnscope::app::AppSettings;
using attnscope::app::EngineRunner;
using attnscope::app::LocalEngineBackend;
using attnscope::app::MainWindow;

namespace {
constexpr int kTimeoutMs = 60000;
}

class TestGenerate : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void ctrlGWritesAndShowsTheAttentionOfTheWholeSequence() {
        QTemporaryDir temp;
        QVERIFY(temp.isValid());
        attnscope::testing::LlamaSpec spec;
        spec.vocab = 259;
        attnscope::testing::GgufModelOptions o;
        o.extraMetadata = attnscope::testing::byteLevelTokenizerMetadata();
        const QString model = temp.filePath(QStringLiteral("tiny.gguf"));
        attnscope::testing::writeGgufModel(model.toStdString(), spec, attnscope::testing::llamaTensors(spec), o);

        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QStringLiteral("ab a");
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        app::GenerateController* generator = window.generator();
        QVERIFY(!generator->action()->isEnabled());  // no model yet
        window.openModelFolder(model);
        QTRY_VERIFY_WITH_TIMEOUT(window.modelSourcePanel()->hasModel(), kTimeoutMs);
        QVERIFY(window.modelSourcePanel()->modelText().contains(QStringLiteral("GGUF")));
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->n == 2, kTimeoutMs);  // "ab", " a"
        QVERIFY(generator->action()->isEnabled());
        QCOMPARE(generator->action()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_G));

        // while it writes: the heatmap draws the shown layer's attention of the sequence so far,
        // the newest row selected, the written tokens marked
        std::vector<std::int64_t> liveLengths;
        bool heatmapFollowed = true;
        connect(generator, &app::GenerateController::liveRun, this,
                [&](const std::shared_ptr<const engine::RunResult>& run, const QVector<int>& marked) {
                    liveLengths.push_back(run->n);
                    heatmapFollowed = heatmapFollowed && window.inputs()->cancelButton()->isEnabled();  // (Cancel stops it)
                    heatmapFollowed = heatmapFollowed && window.views()->heatmap()->result() == run &&
                                      window.views()->heatmap()->hoveredQuery() == run->n - 1 && run->ownAttention == 0 &&
                                      marked.size() == run->n - 2;
                });
        QSignalSpy shown(&window, &MainWindow::resultShown);
        generator->action()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!generator->isGenerating() && window.lastResult() && window.lastResult()->n > 2, kTimeoutMs);
        const auto result = window.lastResult();
        const auto written = generator->box()->findChild<QPlainTextEdit*>();
        QVERIFY(written);
        QVERIFY(!written->toPlainText().isEmpty() || result->n == 2 + 32);
        // what the newest token looked at, in the shown layer
        bool looked = false;
        for (const QLabel* label : generator->box()->findChildren<QLabel*>())
            looked = looked || label->text().contains(QStringLiteral("looked most at"));
        QVERIFY(looked);
        // the run is the written sequence's own attention: the prompt's ids first, then the written ones
        QCOMPARE(result->input.tokens.at(0).id, std::int64_t{256});
        QCOMPARE(result->input.tokens.at(1).id, std::int64_t{257});
        QCOMPARE(static_cast<std::int64_t>(window.findChild<app::ModelController*>()->generatedIds().size()), result->n);
        QCOMPARE(result->ownAttention, 0);
        QVERIFY(!liveLengths.empty());
        QCOMPARE(liveLengths.front(), std::int64_t{2});  // the first token was written from the prompt's last row
        QVERIFY(liveLengths.back() < result->n);
        QVERIFY(heatmapFollowed);
        // (causal: the newest token's row sums to one over the whole sequence)
        double sum = 0;
        for (std::int64_t j = 0; j < result->n; ++j) sum += result->results[0].weightAt(0, result->n - 1, j);
        QVERIFY(std::abs(sum - 1.0) < 1e-5);

        // editing the text: the next run reads the text again
        window.inputs()->text()->setPlainText(QStringLiteral("ab"));
        QVERIFY(window.findChild<app::ModelController*>()->generatedIds().empty());
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestGenerate)

#include "test_generate.moc"
