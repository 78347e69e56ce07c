// File ▸ Open Result as a user does it: a result file written by the engine (as `attnscope-cli run
// --qkv` writes it) opened by path, shown in the heatmap with its weights recomputed from the
// file's q and k; a damaged result refused with its reason, the shown result kept; a .safetensors
// that is no result goes on to the model opener as before.

#include "support/qt_test_support.h"

#include "gui/settings/app_settings.h"
#include "gui/engine/engine_runner.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/window/random_projection_banner.h"
#include "gui/window/view_tabs.h"

#include "views/heatmap/head_heatmap.h"

#include <attnscope/result_file.h>
#include <attnscope/safetensors.h>
#include <attnscope/torch_free_run.h>

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using attnscope::app::AppSettings;
using attnscope::app::EngineRunner;
using attnscope::app::LocalEngineBackend;
using attnscope::app::MainWindow;
namespace engine = attnscope::engine;

namespace {

constexpr int kTimeoutMs = 60000;

// A longformer run on explicit q, k, v (2 heads, 300 tokens, d = 8), written as a result file.
std::shared_ptr<const engine::RunResult> writeLongformerResult(const QString& path) {
    const std::int64_t heads = 2, n = 300, d = 8;
    const auto make = [&](int salt) {
        std::vector<float> x(static_cast<std::size_t>(heads * n * d));
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + salt));
        return engine::PlainTensor::fromF32({heads, n, d}, x);
    };
    engine::RunRequest request;
    request.source = engine::QkvTensors{make(1), make(2), make(3)};
    request.variants.push_back(engine::VariantRequest{"longformer", {{"window", std::int64_t{5}}}});
    engine::TorchFreeRunOptions options;
    options.weightsOnDemand = false;  // (the run's own weights, to compare the file's with)
    auto run = engine::runTorchFree(request, options);
    if (!run) return nullptr;
    if (!engine::writeResultFile(QFile::encodeName(path).toStdString(), **run, 0, engine::ResultFileOptions{0})) return nullptr;
    return run.value();
}

// The window as a user has it before opening a file: a typed text, its first run shown.
struct TypedWindow {
    static MainWindow::Options typedText() {
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.initialText = QStringLiteral("the text the user typed");
        return options;
    }
    EngineRunner runner{std::make_unique<LocalEngineBackend>()};
    MainWindow window{&runner, AppSettings{}, typedText()};
};

}  // namespace

class TestOpenResult : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aResultFileOpensAsAFinishedRunWithItsOwnWeights() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("longformer.safetensors"));
        const auto written = writeLongformerResult(path);
        QVERIFY(written);
        QVERIFY(engine::isResultFile(QFile::encodeName(path).toStdString()));

        TypedWindow user;
        MainWindow& window = user.window;
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult(), kTimeoutMs);  // the text's first run
        const auto typed = window.lastResult();

        QVERIFY2(window.openPath(path).isEmpty(), qPrintable(window.statusText()));  // judged by content
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != typed, kTimeoutMs);
        const auto shown = window.lastResult();
        QCOMPARE(shown->results.front().variantId, std::string("longformer"));
        QCOMPARE(shown->n, std::int64_t{300});
        QCOMPARE(shown->heads, std::int64_t{2});
        QVERIFY2(window.statusText().contains(QStringLiteral("Opened the result longformer.safetensors")), qPrintable(window.statusText()));
        QVERIFY2(window.statusText().contains(QStringLiteral("300 tokens")), qPrintable(window.statusText()));
        QVERIFY(!window.resultOutOfDate());  // (the inputs did not make it: nothing to rerun)
        QVERIFY(!window.views()->banner()->isVisible());  // (its q, k, v are the file's, not random projections)
        QCOMPARE(shown->results.front().counters.seconds, written->results.front().counters.seconds);  // what it cost, as measured
        QCOMPARE(shown->results.front().counters.peakBytes, written->results.front().counters.peakBytes);

        // Every weight the window recomputes from the file equals the run's own.
        const engine::AttentionWeights& fromFile = *shown->results.front().weights;
        const engine::AttentionWeights& fromRun = *written->results.front().weights;
        for (int h = 0; h < 2; ++h) {
            const engine::WeightTile a = fromFile.tile(h, 0, 300, 0, 300);
            const engine::WeightTile b = fromRun.tile(h, 0, 300, 0, 300);
            QCOMPARE(a.weights, b.weights);
        }
        window.showView(MainWindow::View::Heatmap);
        attnscope::views::HeadHeatmap* heatmap = window.views()->heatmap();
        QTRY_VERIFY_WITH_TIMEOUT(!heatmap->isPooling(), kTimeoutMs);
        QVERIFY2(heatmap->title().contains(QStringLiteral("ongformer")), qPrintable(heatmap->title()));
    }

    // The random-projection banner hidden for a result file stays hidden when the next result is
    // a model's (its q, k, v are the model's, not random projections either).
    void theBannerHiddenForAFileStaysHiddenForAModelsResult() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("longformer.safetensors"));
        QVERIFY(writeLongformerResult(path));
        TypedWindow user;
        MainWindow& window = user.window;
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult(), kTimeoutMs);
        QVERIFY(window.views()->banner()->isVisible());
        const auto typed = window.lastResult();
        QVERIFY(window.openPath(path).isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != typed, kTimeoutMs);
        QVERIFY(!window.views()->banner()->isVisible());
        window.openModelFolder(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/samples/copy-model"));
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && !window.lastResult()->modelFolder.empty() && !user.runner.isRunning(), kTimeoutMs);
        QVERIFY(!window.views()->banner()->isVisible());
    }

    void aDamagedResultIsRefusedAndTheShownResultStays() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("damaged.safetensors"));
        QVERIFY(writeLongformerResult(path));
        {
            // q's first value becomes a NaN: every weight of head 0 would be recomputed from it
            auto file = engine::SafetensorsFile::open(QFile::encodeName(path).toStdString());
            QVERIFY(file.ok());
            const auto offset = static_cast<qint64>(8 + file.value()->header().headerLength + file.value()->find("q")->begin);
            QFile raw(path);
            QVERIFY(raw.open(QIODevice::ReadWrite));
            QVERIFY(raw.seek(offset));
            const float nan = std::nanf("");
            QCOMPARE(raw.write(reinterpret_cast<const char*>(&nan), sizeof nan), qint64{sizeof nan});
        }
        TypedWindow user;
        MainWindow& window = user.window;
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult(), kTimeoutMs);
        const auto typed = window.lastResult();
        QVERIFY(window.openPath(path).isEmpty());  // (its reading started)
        QTRY_VERIFY_WITH_TIMEOUT(window.statusText().contains(QStringLiteral("Cannot open the result damaged.safetensors")), kTimeoutMs);
        QVERIFY2(window.statusText().contains(QStringLiteral("tensor 'q' holds a NaN")), qPrintable(window.statusText()));
        QCOMPARE(window.lastResult(), typed);
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestOpenResult)
#include "test_open_result.moc"
