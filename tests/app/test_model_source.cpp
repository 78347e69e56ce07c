// Trained checkpoints in the GUI: ModelSource against the fake backend (refusals, cancel), and
// the main window against the real engine on a tiny model written here (model layer as the Q/K/V
// source, refused folders, the Atlas tab and its click-to-compare).

#include "support/qt_test_support.h"
#include "support/tiny_model.h"

#include "app/fake_backend.h"
#include "gui/settings/app_settings.h"
#include "gui/panels/compare_variants_editor.h"
#include "gui/engine/engine_runner.h"
#include "gui/export/figure_exporter.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/panels/run_settings_panel.h"
#include "gui/engine/model_source.h"
#include "gui/panels/model_source_panel.h"
#include "gui/window/random_projection_banner.h"
#include "gui/settings/session.h"

#include "views/compare/compare_error_panel.h"
#include "views/compare/compare_view.h"
#include "views/atlas/coverage_editor.h"
#include "views/heatmap/head_heatmap.h"
#include "views/widgets/param_form.h"
#include "views/atlas/head_atlas.h"
#include "views/data/inspection_state.h"
#include "views/atlas/rollout_view.h"

#include <attnscope/coverage_settings.h>
#include <attnscope/engine.h>
#include <attnscope/safetensors.h>

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QKeySequence>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>

using attnscope::app::AppSettings;
using attnscope::app::EngineRunner;
using attnscope::app::LocalEngineBackend;
using attnscope::app::MainWindow;
using attnscope::app::ModelSource;
using attnscope::app::ModelSourcePanel;
using attnscope::app::RunSettingsPanel;
using attnscope::app::Session;
using attnscope::app::SessionState;
using attnscope::testing::FakeBackend;
namespace engine = attnscope::engine;

namespace {

constexpr int kTimeoutMs = 60000;
const char* const kText = "the cat sat on the mat and the dog ran to the park";

QString writeTinyBert(const QString& dir) {
    const std::filesystem::path path = dir.toStdString();
    attnscope::testing::writeTinyModel(attnscope::testing::makeTinyModel({}), path, "bert.");
    attnscope::testing::writeTinyWordPieceVocab(path);
    return dir;
}

/// A folder as users get it from old exports: config.json and a pickled pytorch_model.bin.
QString writePickleFolder(const QString& dir) {
    const std::filesystem::path path = dir.toStdString();
    std::filesystem::create_directories(path);
    attnscope::testing::writeText(path / "config.json", attnscope::testing::makeTinyModel({}).configJson());
    attnscope::testing::writeText(path / "pytorch_model.bin", std::string("\x80\x02}q\x00.", 6));
    return dir;
}

}  // namespace

class TestModelSource : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aRefusedFolderKeepsThePreviousModel() {
        auto control = std::make_shared<FakeBackend::Control>();
        control->refusedFolders = {"/models/pickled"};
        EngineRunner runner(std::make_unique<FakeBackend>(control));
        ModelSource source(&runner);
        QSignalSpy opened(&source, &ModelSource::modelOpened);
        QSignalSpy failed(&source, &ModelSource::modelOpenFailed);

        source.open(QStringLiteral("/models/good"));
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, kTimeoutMs);
        QVERIFY(source.model().has_value());
        QCOMPARE(source.model()->layers, 2);
        QCOMPARE(source.folder(), QStringLiteral("/models/good"));

        source.open(QStringLiteral("/models/pickled"));
        QVERIFY(source.isOpening());
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kTimeoutMs);
        QVERIFY(!source.isOpening());
        QCOMPARE(failed.at(0).at(0).toString(), QStringLiteral("/models/pickled"));
        QVERIFY(failed.at(0).at(1).toString().contains(QStringLiteral("pytorch_model.bin")));
        QCOMPARE(failed.at(0).at(2).toInt(), static_cast<int>(engine::ErrorCode::InvalidInput));
        // Nothing changed on the GUI side, and the engine has the previous model open again.
        QCOMPARE(opened.count(), 1);
        QCOMPARE(source.folder(), QStringLiteral("/models/good"));
        {
            std::lock_guard<std::mutex> lock(control->mutex);
            QCOMPARE(control->openCalls, (std::vector<std::string>{"/models/good", "/models/pickled", "/models/good"}));
            QCOMPARE(control->openFolder, std::string("/models/good"));
        }
        // So the previous model can still be analysed.
        control->releaseEverything();
        QSignalSpy ready(&source, &ModelSource::atlasReady);
        engine::AtlasRequest request;
        request.text = "four";
        source.analyze(request);
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kTimeoutMs);
        QCOMPARE(source.atlas()->n, 4);
        QCOMPARE(source.atlas()->metrics[4].entropy, 11.0);  // layer 1, head 1
    }

    void analysisIsCancellable() {
        auto control = std::make_shared<FakeBackend::Control>();
        EngineRunner runner(std::make_unique<FakeBackend>(control));
        ModelSource source(&runner);
        QSignalSpy opened(&source, &ModelSource::modelOpened);
        source.open(QStringLiteral("/models/good"));
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, kTimeoutMs);

        QSignalSpy progress(&source, &ModelSource::analysisProgress);
        QSignalSpy ready(&source, &ModelSource::atlasReady);
        QSignalSpy failed(&source, &ModelSource::analysisFailed);
        source.analyze(engine::AtlasRequest{});
        QTRY_VERIFY_WITH_TIMEOUT(control->hasStarted(FakeBackend::kAnalysisTag), kTimeoutMs);
        QVERIFY(source.isAnalyzing());
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, kTimeoutMs);
        source.cancelAnalysis();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kTimeoutMs);
        QCOMPARE(failed.at(0).at(1).toInt(), static_cast<int>(engine::ErrorCode::Cancelled));
        QVERIFY(control->sawCancel(FakeBackend::kAnalysisTag));
        QVERIFY(!source.isAnalyzing());
        QCOMPARE(ready.count(), 0);
        QVERIFY(source.atlas() == nullptr);
    }

    void escapeCancelsTheAtlasAnalysis() {
        auto control = std::make_shared<FakeBackend::Control>();
        EngineRunner runner(std::make_unique<FakeBackend>(control));
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QStringLiteral("some text");
        MainWindow window(&runner, AppSettings{}, options);
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        window.openModelFolder(QStringLiteral("/models/good"));
        QTRY_VERIFY_WITH_TIMEOUT(window.modelSourcePanel()->usesModel(), kTimeoutMs);
        control->release(0);  // the model layer's run (seed 0) that opening started
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, kTimeoutMs);

        QSignalSpy failed(&window, &MainWindow::atlasFailed);
        window.analyzeModel();
        QTRY_VERIFY_WITH_TIMEOUT(control->hasStarted(FakeBackend::kAnalysisTag), kTimeoutMs);
        QVERIFY(!window.views()->atlasView()->analyzeButton()->isEnabled());
        QVERIFY(window.views()->atlasView()->cancelButton()->isEnabled());
        // Esc is the Run menu's Cancel action; it must be live while only the analysis runs.
        QAction* cancel = nullptr;
        for (QAction* action : window.findChildren<QAction*>())
            if (action->shortcut() == QKeySequence(Qt::Key_Escape)) cancel = action;
        QVERIFY(cancel);
        // The run's end (handled after the analysis started) must leave Esc live for the analysis.
        QTRY_VERIFY_WITH_TIMEOUT(cancel->isEnabled(), kTimeoutMs);
        QTest::qWait(50);
        QVERIFY(cancel->isEnabled());
        cancel->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kTimeoutMs);
        QCOMPARE(failed.at(0).at(1).toInt(), static_cast<int>(engine::ErrorCode::Cancelled));
        QVERIFY(control->sawCancel(FakeBackend::kAnalysisTag));
        QCOMPARE(window.views()->atlasView()->message(), QStringLiteral("Analysis cancelled."));
        QVERIFY(window.views()->atlasView()->analyzeButton()->isEnabled());
        QVERIFY(window.views()->atlasView()->atlas() == nullptr);
    }

    void backendsWithoutModelsRefuseClearly() {
        // The default of EngineBackend (fakes of runs only): refused, never a crash.
        struct RunsOnly final : attnscope::app::EngineBackend {
            engine::Result<std::shared_ptr<const engine::RunResult>> run(const engine::RunRequest&,
                                                                         const engine::ProgressFn&) override {
                return engine::makeError(engine::ErrorCode::Unsupported, "no runs");
            }
            std::vector<engine::VariantInfo> variants() override { return {}; }
        } backend;
        auto opened = backend.openModel("/models/good");
        QVERIFY(!opened.ok());
        QCOMPARE(opened.error().code, engine::ErrorCode::Unsupported);
        QVERIFY(QString::fromStdString(opened.error().message).contains(QStringLiteral("/models/good")));
    }
};

class TestModelWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A dropped .safetensors file with tokens in its metadata is captured attention: it opens as
    // the source, the text box shows its tokens (Ctrl+Z gives the typed text back), and `full`
    // on a layer gives softmax(q kᵀ / √d) of the file's own q, k.
    void capturedAttentionOpensAsTheSource() {
        QTemporaryDir temp;
        QVERIFY(temp.isValid());
        engine::PlainTensor q = engine::PlainTensor::zeros(engine::DType::F32, {2, 2, 3, 4});
        for (std::size_t i = 0; i < q.f32.size(); ++i) q.f32[i] = static_cast<float>((i * 37) % 11) / 11.0f - 0.5f;
        const QString file = temp.filePath(QStringLiteral("captured.safetensors"));
        QVERIFY(engine::writeSafetensors(file.toStdString(),
                                         {engine::StWriteItem("q", &q), engine::StWriteItem("k", &q), engine::StWriteItem("v", &q)},
                                         {{"tokens", R"(["one", " two", " three"])"}})
                    .ok());
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QString::fromLatin1(kText);
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        window.inputs()->variantCombo()->setCurrentIndex(window.inputs()->variantCombo()->findData(QStringLiteral("full")));
        window.openPath(file);
        QTRY_VERIFY_WITH_TIMEOUT(window.modelSourcePanel()->hasModel(), kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->modelLayer == 0, kTimeoutMs);
        QCOMPARE(window.inputs()->text()->toPlainText(), QStringLiteral("one two three"));
        const auto result = window.lastResult();
        QCOMPARE(result->n, std::int64_t{3});
        QCOMPARE(result->input.tokens.at(1).text, std::string(" two"));
        // head 0, query 1 (bidirectional: the file says nothing of causality and has no weights)
        double scores[3], top = -1e300, sum = 0;
        for (int j = 0; j < 3; ++j) {
            scores[j] = 0;
            for (int c = 0; c < 4; ++c) scores[j] += double(q.f32[std::size_t(1 * 4 + c)]) * q.f32[std::size_t(j * 4 + c)];
            scores[j] /= 2.0;
            top = std::max(top, scores[j]);
        }
        for (double& s : scores) sum += (s = std::exp(s - top));
        for (int j = 0; j < 3; ++j) QVERIFY(std::abs(result->results[0].weightAt(0, 1, j) - scores[j] / sum) < 1e-6);
        window.inputs()->text()->undo();
        QCOMPARE(window.inputs()->text()->toPlainText(), QString::fromLatin1(kText));
    }

    void randomProjectionsNoteSwitchesToTheTrainedSample() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        attnscope::app::RandomProjectionBanner* banner = window.views()->banner();
        QVERIFY(banner->isVisible());  // the first screen says what random projections are
        QVERIFY(banner->text().contains(QStringLiteral("no model has learned anything here")));
        QSpinBox* heads = window.inputs()->headsSpin();
        QVERIFY(heads && heads->isVisible());

        QTRY_VERIFY_WITH_TIMEOUT(!runner.isRunning(), kTimeoutMs);
        banner->useModelButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(window.modelSourcePanel()->usesModel(), kTimeoutMs);
        // its own attention: Transformer-XL's memory and relative terms, as the model computes them
        QCOMPARE(window.inputs()->variantCombo()->currentData().toString(), RunSettingsPanel::ownAttentionId());
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && !window.lastResult()->modelFolder.empty() &&
                                     window.lastResult()->results[0].variantId == "transformer_xl",
                                 kTimeoutMs);
        QCOMPARE(window.lastResult()->ownAttention, 0);
        const auto& r = window.lastResult()->results[0];
        QCOMPARE(std::get<std::int64_t>(r.params.at("segment")), std::int64_t{32});  // the model's tgt_len
        QCOMPARE(window.lastResult()->headDim, std::int64_t{16});
        QVERIFY(!banner->isVisible());
        QVERIFY2(window.windowTitle().contains(QStringLiteral("model transfo-xl-moby")), qPrintable(window.windowTitle()));
        // the window shows what the run used: the model's tokenizer, heads and head dim
        QVERIFY(!heads->isVisible());
        QVERIFY(window.modelSourcePanel()->modelText().contains(QStringLiteral("4 heads of 16, bytes tokenizer")));
        QLabel* ownTokenizer = nullptr;
        for (QLabel* label : window.findChildren<QLabel*>())
            if (label->text().startsWith(QStringLiteral("the model's own"))) ownTokenizer = label;
        QVERIFY(ownTokenizer && ownTokenizer->isVisible());
        QCOMPARE(ownTokenizer->text(), QStringLiteral("the model's own (bytes)"));

        // back to random projections: the window's own settings again, the note stays dismissable
        window.modelSourcePanel()->setKind(attnscope::app::ModelSourcePanel::Kind::RandomProjections);
        QVERIFY(heads->isVisible());
        QVERIFY(banner->isVisible());
        banner->dismissButton()->click();
        QVERIFY(!banner->isVisible());
        window.modelSourcePanel()->setKind(attnscope::app::ModelSourcePanel::Kind::ModelLayer);
        window.modelSourcePanel()->setKind(attnscope::app::ModelSourcePanel::Kind::RandomProjections);
        QVERIFY(!banner->isVisible());  // dismissed stays dismissed
    }

    // Every setting follows the open model: a causal model's causality does not stay for an
    // encoder opened after it, nor for random projections, on the variant's form or a compared row.
    void causalityFollowsTheOpenModel() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QStringLiteral("call me Ishmael");
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        const auto causalOf = [](attnscope::views::ParamForm* form) { return std::get<bool>(form->values().at("causal")); };
        const auto chooseFull = [&] {
            window.inputs()->variantCombo()->setCurrentIndex(window.inputs()->variantCombo()->findData(QStringLiteral("full")));
        };
        const auto openAndWait = [&](const QString& folder) {
            window.openModelFolder(folder);
            QTRY_VERIFY_WITH_TIMEOUT(window.modelSource()->folder() == folder && window.lastResult() &&
                                         QString::fromStdString(window.lastResult()->modelFolder) == folder && !runner.isRunning(),
                                     kTimeoutMs);
        };
        window.inputs()->compareEditor()->setRows({engine::VariantRequest{"longformer", {}}});
        openAndWait(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/samples/transfo-xl-moby"));
        chooseFull();
        QVERIFY(causalOf(window.inputs()->paramForm()));  // a decoder
        QVERIFY(causalOf(window.inputs()->compareEditor()->form(0)));
        openAndWait(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/samples/copy-model"));
        QCOMPARE(window.inputs()->variantCombo()->currentData().toString(), RunSettingsPanel::ownAttentionId());
        QCOMPARE(std::get<bool>(window.lastResult()->results[0].params.at("causal")), false);
        QVERIFY(!causalOf(window.inputs()->compareEditor()->form(0)));  // an encoder's rows read both ways
        chooseFull();
        QVERIFY(!causalOf(window.inputs()->paramForm()));
        window.runNow();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult()->results[0].variantId == "full" && !runner.isRunning(), kTimeoutMs);
        QCOMPARE(std::get<bool>(window.lastResult()->results[0].params.at("causal")), false);
        QVERIFY2(window.views()->heatmap()->title().contains(QStringLiteral("on layer 0's Q/K")),
                 qPrintable(window.views()->heatmap()->title()));
        // back to the causal model, then random projections: the schema's (bidirectional) again
        openAndWait(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/samples/transfo-xl-moby"));
        chooseFull();
        QVERIFY(causalOf(window.inputs()->paramForm()));
        window.modelSourcePanel()->setKind(ModelSourcePanel::Kind::RandomProjections);
        QVERIFY(!causalOf(window.inputs()->paramForm()));
        QVERIFY(!causalOf(window.inputs()->compareEditor()->form(0)));
        QCOMPARE(window.inputs()->variantCombo()->findData(RunSettingsPanel::ownAttentionId()), -1);  // no model, no own attention
    }

    // File ▸ Open Model on a Transformer-XL folder shows its own attention (memory and relative
    // terms), as "Use the trained sample model" does: the two ways into a model agree.
    void aTransformerXlModelOpensOnItsOwnAttention() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QStringLiteral("It is a way I have of driving off the spleen and regulating the circulation.");
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        window.openModelFolder(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/samples/transfo-xl-moby"));
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && !window.lastResult()->modelFolder.empty() && !runner.isRunning(), kTimeoutMs);
        QCOMPARE(window.inputs()->variantCombo()->currentData().toString(), RunSettingsPanel::ownAttentionId());
        const auto result = window.lastResult();
        QCOMPARE(result->ownAttention, 0);
        QCOMPARE(result->results[0].variantId, std::string("transformer_xl"));
        QCOMPARE(std::get<std::int64_t>(result->results[0].params.at("memory")), std::int64_t{32});
        QVERIFY2(window.views()->heatmap()->title().contains(QStringLiteral("own attention of layer 0 (Transformer-XL)")),
                 qPrintable(window.views()->heatmap()->title()));
        QVERIFY2(window.inputs()->variantInfo()->text().contains(QStringLiteral("memory")), qPrintable(window.inputs()->variantInfo()->text()));
        // a query past the first segment draws on the memory before it, as the model does
        const std::int64_t n = result->n;
        QVERIFY(n > 40);
        double memory = 0;
        for (std::int64_t j = 0; j < 32; ++j) memory += result->results[0].weightAt(0, 40, j);
        QVERIFY(memory > 0);
    }

    void modelLayerIsTheSourceOfEveryRun() {
        QTemporaryDir temp;
        QVERIFY(temp.isValid());
        const QString modelDir = writeTinyBert(temp.filePath(QStringLiteral("tiny-bert")));
        const QString pickleDir = writePickleFolder(temp.filePath(QStringLiteral("pickled")));

        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QString::fromLatin1(kText);
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1200, 800);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        window.inputs()->variantCombo()->setCurrentIndex(window.inputs()->variantCombo()->findData(QStringLiteral("full")));

        // Opening switches the source to the model and runs its layer 0.
        QSignalSpy shown(&window, &MainWindow::resultShown);
        window.openModelFolder(modelDir);
        QTRY_VERIFY_WITH_TIMEOUT(window.modelSourcePanel()->hasModel(), kTimeoutMs);
        QVERIFY(window.modelSourcePanel()->usesModel());
        QVERIFY(window.modelSourcePanel()->modelText().contains(QStringLiteral("2 layers × 4 heads")));
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->modelLayer == 0, kTimeoutMs);

        // Opening shows the model's own attention, whatever variant was chosen before.
        QCOMPARE(window.inputs()->variantCombo()->currentData().toString(), RunSettingsPanel::ownAttentionId());
        window.modelSourcePanel()->setLayer(1);
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->modelLayer == 1, kTimeoutMs);
        const auto result = window.lastResult();
        QCOMPARE(QString::fromStdString(result->modelFolder), modelDir);
        QCOMPARE(result->ownAttention, 0);
        QCOMPARE(result->results.at(0).variantId, std::string("model_softmax"));
        QVERIFY2(window.views()->heatmap()->title().contains(QStringLiteral("own attention of layer 1 (BERT)")),
                 qPrintable(window.views()->heatmap()->title()));

        auto reference = engine::Engine::create();
        QVERIFY(reference.ok());
        QVERIFY(reference.value()->openModel(modelDir.toStdString()).ok());
        engine::ModelInput input;
        input.text = kText;
        auto forward = reference.value()->forwardModel(input);
        QVERIFY2(forward.ok(), forward.ok() ? "" : forward.error().message.c_str());
        const engine::ModelForward& f = *forward.value();
        QCOMPARE(result->n, f.n);
        QCOMPARE(result->heads, f.heads);
        QCOMPARE(result->input.tokens.size(), f.input.tokens.size());
        QCOMPARE(result->input.tokens.front().text, std::string("[CLS]"));
        const engine::PlainTensor& attention = f.attention.at(1);
        double worst = 0;
        for (std::int64_t h = 0; h < f.heads; ++h)
            for (std::int64_t i = 0; i < f.n; ++i)
                for (std::int64_t j = 0; j < f.n; ++j)
                    worst = std::max(
                        worst, std::abs(static_cast<double>(result->results[0].weightAt(static_cast<int>(h), i, j)) -
                                        attention.f32[static_cast<std::size_t>((h * f.n + i) * f.n + j)]));
        QVERIFY2(worst <= 1e-5, qPrintable(QStringLiteral("largest difference %1").arg(worst)));

        // A refused folder: the message names the file, and the previous model stays the source.
        QSignalSpy refused(&window, &MainWindow::modelOpenFailed);
        const QString before = window.modelSourcePanel()->modelText();
        window.openModelFolder(pickleDir);
        QTRY_COMPARE_WITH_TIMEOUT(refused.count(), 1, kTimeoutMs);
        QVERIFY2(window.statusText().contains(QStringLiteral("pytorch_model.bin")), qPrintable(window.statusText()));
        QVERIFY2(window.statusText().contains(QStringLiteral("pickle")), qPrintable(window.statusText()));
        for (const char* code : {"(unsupported)", "(invalid input)", "(not found)"})  // (no error code names)
            QVERIFY2(!window.statusText().contains(QLatin1String(code)), qPrintable(window.statusText()));
        QCOMPARE(window.modelSourcePanel()->modelText(), before);
        QVERIFY(window.modelSourcePanel()->usesModel());
        QCOMPARE(window.modelSourcePanel()->layer(), 1);
        QCOMPARE(window.modelSource()->folder(), modelDir);
        QCOMPARE(window.lastResult(), result);
        // The GUI stays usable: the next run still takes the model's layer 1.
        const int shownBefore = shown.count();
        window.runNow();
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() > shownBefore, kTimeoutMs);
        QCOMPARE(window.lastResult()->modelLayer, 1);
        QCOMPARE(QString::fromStdString(window.lastResult()->modelFolder), modelDir);

        // Dropping or opening config.json opens its folder (the drop handler's model hook).
        QSignalSpy opened(window.modelSource(), &ModelSource::modelOpened);
        QCOMPARE(window.openPath(modelDir + QStringLiteral("/config.json")), QString());
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, kTimeoutMs);
        QCOMPARE(window.modelSource()->folder(), modelDir);

        // Random projections again: no model in the request.
        window.modelSourcePanel()->setKind(ModelSourcePanel::Kind::RandomProjections);
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult()->modelLayer == -1, kTimeoutMs);
        QCOMPARE(window.lastResult()->heads, AppSettings{}.heads);
    }

    void sessionsRoundTripTheModelSource() {
        QTemporaryDir temp;
        QVERIFY(temp.isValid());
        const QString modelDir = writeTinyBert(temp.filePath(QStringLiteral("tiny-bert")));
        const QString path = temp.filePath(QStringLiteral("model.attnscope.json"));
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QString::fromLatin1(kText);
        SessionState saved;
        {
            EngineRunner runner(std::make_unique<LocalEngineBackend>());
            MainWindow window(&runner, AppSettings{}, options);
            window.show();
            QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
            QVERIFY(window.captureSession().modelFolder.isEmpty());  // random projections
            window.openModelFolder(modelDir);
            QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->modelLayer == 0, kTimeoutMs);
            window.modelSourcePanel()->setLayer(1);
            QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->modelLayer == 1, kTimeoutMs);
            saved = window.captureSession();
            QCOMPARE(saved.modelFolder, modelDir);
            QCOMPARE(saved.modelLayer, 1);
            QVERIFY2(window.saveSessionTo(path).isEmpty(), qPrintable(window.statusText()));
        }
        // The file holds it, and parsing gives the same state back.
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray bytes = file.readAll();
        QString error;
        const auto parsed = Session::parse(bytes, QStringLiteral("model.attnscope.json"), &error);
        QVERIFY2(parsed.has_value(), qPrintable(error));
        QCOMPARE(*parsed, saved);

        // A fresh window opens the model and runs the saved layer.
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow window(&runner, AppSettings{}, options);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        QVERIFY2(window.openPath(path).isEmpty(), qPrintable(window.statusText()));
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->modelLayer == 1, kTimeoutMs);
        QCOMPARE(QString::fromStdString(window.lastResult()->modelFolder), modelDir);
        QVERIFY(window.modelSourcePanel()->usesModel());
        QCOMPARE(window.modelSourcePanel()->layer(), 1);
        const SessionState restored = window.captureSession();
        QCOMPARE(restored.modelFolder, saved.modelFolder);
        QCOMPARE(restored.modelLayer, saved.modelLayer);
        QCOMPARE(restored.variantId, saved.variantId);

        QCOMPARE(saved.variantId, RunSettingsPanel::ownAttentionId());  // the own attention was shown
        QCOMPARE(window.lastResult()->ownAttention, 0);
        // A session without a model puts random projections back as the source.
        SessionState plain = saved;
        plain.variantId = QStringLiteral("full");
        plain.modelFolder.clear();
        plain.modelLayer = 0;
        QVERIFY(window.applySession(plain).isEmpty());
        QVERIFY(!window.modelSourcePanel()->usesModel());
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->modelLayer == -1, kTimeoutMs);
        QVERIFY(window.captureSession().modelFolder.isEmpty());
        // The open model's session switches back to it without opening it again.
        QVERIFY(window.applySession(saved).isEmpty());
        QVERIFY(window.modelSourcePanel()->usesModel());
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->modelLayer == 1, kTimeoutMs);
    }

    void atlasTabAnalysesAndOpensAHeadInCompare() {
        QTemporaryDir temp;
        QVERIFY(temp.isValid());
        const QString modelDir = writeTinyBert(temp.filePath(QStringLiteral("tiny-bert")));
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QString::fromLatin1(kText);
        options.initialView = MainWindow::View::Atlas;
        options.modelFolder = modelDir;  // as --model DIR --view atlas
        options.modelLayer = 1;
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1200, 800);
        window.show();
        QSignalSpy atlasShown(&window, &MainWindow::atlasShown);
        // The Atlas tab analyses a model as soon as it opens.
        QTRY_COMPARE_WITH_TIMEOUT(atlasShown.count(), 1, kTimeoutMs);
        QCOMPARE(window.modelSourcePanel()->layer(), 1);
        const auto atlas = window.views()->atlasView()->atlas();
        QVERIFY(atlas);
        QCOMPARE(atlas->layers, 2);
        QCOMPARE(atlas->heads, 4);
        QCOMPARE(window.views()->atlasView()->layerCount(), 2);
        QCOMPARE(window.views()->atlasView()->cellValue(1, 2), atlas->metrics[1 * 4 + 2].entropy);
        QCOMPARE(window.views()->atlasView()->rolloutView()->size(), static_cast<int>(atlas->n));

        // The tab exports through the figure exporter like every view: grid and rollout drawn.
        const QString figure = QDir(QDir::tempPath()).filePath(QStringLiteral("attnscope-atlas-test.png"));
        attnscope::app::FigureRequest figureRequest;
        figureRequest.dpi = 96;
        figureRequest.writeSidecar = false;
        const auto exported = attnscope::app::FigureExporter::exportFigure(window.views()->atlasView(), figure, figureRequest);
        QVERIFY2(exported.ok(), qPrintable(exported.error));
        const QImage image(figure);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > 400 && image.height() > 200);
        QFile::remove(figure);

        // Clicking a head: its layer's own attention in Compare, the reference of the coverage
        // settings beside it (which take the model's causality, as the atlas ran them).
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        Q_EMIT window.views()->atlasView()->headSelected(0, 3);
        QCOMPARE(window.currentView(), MainWindow::View::Compare);
        QCOMPARE(window.modelSourcePanel()->layer(), 0);
        QCOMPARE(window.views()->state()->head(), 3);
        QCOMPARE(window.inputs()->variantCombo()->currentData().toString(), RunSettingsPanel::ownAttentionId());
        const QStringList compared = window.inputs()->compareEditor()->ids();
        QVERIFY(compared.size() >= 1 && compared.size() <= 3);
        for (int row = 0; row < compared.size(); ++row) {
            const engine::ParamValues values = window.inputs()->compareEditor()->form(row)->values();
            if (values.count("causal")) QCOMPARE(std::get<bool>(values.at("causal")), false);  // BERT reads both ways
        }
        QTRY_VERIFY_WITH_TIMEOUT(
            shown.count() > 0 && window.lastResult()->results.size() >= 2 && window.lastResult()->modelLayer == 0,
            kTimeoutMs);
        const auto result = window.lastResult();
        QCOMPARE(result->ownAttention, 0);
        QCOMPARE(result->results[0].variantId, std::string("model_softmax"));
        QCOMPARE(QString::fromStdString(result->results[1].variantId), compared.front());
        // the reference pane and the error baseline are the model's own attention
        QCOMPARE(window.views()->compareView()->exactIndex(), 0);
        QTRY_VERIFY_WITH_TIMEOUT(window.views()->compareView()->errorPanel()->note().contains(QStringLiteral("own attention of layer 0")),
                                 kTimeoutMs);
        QCOMPARE(window.views()->state()->head(), 3);
        // The first compared setting is the one with the lowest output error for that head.
        const auto& head = atlas->metrics[0 * 4 + 3];
        double best = std::numeric_limits<double>::infinity();
        for (std::size_t s = 0; s < atlas->settings.size(); ++s)
            if (std::isfinite(head.outputError[s])) best = std::min(best, head.outputError[s]);
        bool firstIsBest = false;
        for (std::size_t s = 0; s < atlas->settings.size(); ++s)
            if (head.outputError[s] == best && QString::fromStdString(atlas->settings[s].variantId) == compared.front())
                firstIsBest = true;
        QVERIFY(firstIsBest);
    }

    void atlasCoverageSettingsAreFittedAndEditable() {
        QTemporaryDir temp;
        QVERIFY(temp.isValid());
        const QString modelDir = writeTinyBert(temp.filePath(QStringLiteral("tiny-bert")));
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QString::fromLatin1(kText);
        options.initialView = MainWindow::View::Atlas;
        options.modelFolder = modelDir;
        MainWindow window(&runner, AppSettings{}, options);
        QSignalSpy atlasShown(&window, &MainWindow::atlasShown);
        QTRY_COMPARE_WITH_TIMEOUT(atlasShown.count(), 1, kTimeoutMs);
        auto* coverage = window.views()->atlasView()->coverageEditor();
        // Automatic: the catalog's settings fitted to this short text, all of them applicable.
        auto atlas = window.views()->atlasView()->atlas();
        const auto fitted = attnscope::engine::coverageSettingsFor(atlas->n);
        QCOMPARE(atlas->settings.size(), fitted.size());
        for (const auto& note : atlas->settingNotes) QCOMPARE(QString::fromStdString(note), QString());
        QVERIFY(coverage->automatic());
        QStringList expectedLines;
        for (const auto& s : fitted) expectedLines << QString::fromStdString(attnscope::engine::coverageSettingText(s));
        QCOMPARE(coverage->editor()->toPlainText(), expectedLines.join(QLatin1Char('\n')));

        // A line that does not parse: nothing runs, the line is named under the field.
        coverage->editor()->setPlainText(QStringLiteral("longformer:window=1\nlongformer:size=3"));
        QVERIFY(!coverage->automatic());
        window.analyzeModel();
        QVERIFY(coverage->problem().startsWith(QStringLiteral("Line 2: ")));
        QVERIFY(coverage->problem().contains(QStringLiteral("'size=3' is not NAME=VALUE")));
        QTest::qWait(100);
        QCOMPARE(atlasShown.count(), 1);

        // The user's lines are what the atlas measures.
        coverage->editor()->setPlainText(QStringLiteral("longformer:window=1\n# a comment\ntopk:k=3"));
        window.analyzeModel();
        QTRY_COMPARE_WITH_TIMEOUT(atlasShown.count(), 2, kTimeoutMs);
        QCOMPARE(coverage->problem(), QString());
        atlas = window.views()->atlasView()->atlas();
        QCOMPARE(atlas->settings.size(), std::size_t{2});
        QCOMPARE(QString::fromStdString(atlas->settings[0].label), QStringLiteral("longformer window=1"));
        QCOMPARE(QString::fromStdString(atlas->settings[1].label), QStringLiteral("topk k=3"));
        QCOMPARE(coverage->editor()->toPlainText(), QStringLiteral("longformer:window=1\n# a comment\ntopk:k=3"));

        // Automatic again: the fitted defaults.
        coverage->resetToAutomatic();
        window.analyzeModel();
        QTRY_COMPARE_WITH_TIMEOUT(atlasShown.count(), 3, kTimeoutMs);
        QCOMPARE(window.views()->atlasView()->atlas()->settings.size(), fitted.size());
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestModelSource)
ATTNSCOPE_REGISTER_QT_TEST(TestModelWindow)
#include "test_model_source.moc"
