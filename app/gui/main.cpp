// attnscope-gui: the desktop app, started by the attnscope launcher. `--screenshot PATH` makes the README screenshots with the app itself.

#include "common/omp_wait_policy.h"
#include "gui/app_settings.h"
#include "gui/engine_runner.h"
#include "gui/local_engine_backend.h"
#include "gui/main_window.h"
#include "gui/recipe/export_command.h"
#include "gui/text_autosave.h"

#include "views/compare_view.h"
#include "views/diagnostics/approximation_view.h"
#include "views/diagnostics/diagnostics_stack.h"
#include "views/inspection_state.h"
#include "views/mask_view.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPixmap>
#include <QSettings>
#include <QStringDecoder>
#include <QTimer>

#include <cstdio>
#include <cstring>
#include <memory>

namespace {

constexpr int kScreenshotWidth = 1400;
constexpr int kScreenshotHeight = 900;
constexpr int kScreenshotTimeoutMs = 120000;
// After the result is shown: let queued replots and layouts run before grabbing.
constexpr int kScreenshotSettleMs = 300;

void printError(const QString& message) { std::fprintf(stderr, "attnscope: %s\n", qPrintable(message)); }

bool wantsScreenshot(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--screenshot") == 0 || std::strncmp(argv[i], "--screenshot=", 13) == 0) return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    attnscope::app::ensurePassiveOpenMpWait(argv);
    using attnscope::app::AppSettings;
    using attnscope::app::MainWindow;
    using attnscope::app::TextAutosave;

    // Headless figure export must work without a display (DESIGN.md): --screenshot picks the
    // offscreen platform unless the user chose one.
    // `attnscope export RECIPE.json --out-dir DIR` (batch figures) never opens a window either.
    const bool exportCommand = attnscope::app::isExportCommand(argc, argv);
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && (wantsScreenshot(argc, argv) || exportCommand))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("AttnScope"));
    QApplication::setOrganizationName(QStringLiteral("AttnScope"));
    QApplication::setApplicationVersion(QStringLiteral(ATTNSCOPE_VERSION));
    if (exportCommand) return attnscope::app::runExportCommand(QApplication::arguments());

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Attention visualiser: per-head heatmaps of attention variants."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"), QStringLiteral("Run the input once, save a PNG of the window to PATH and quit."),
        QStringLiteral("PATH"));
    const QCommandLineOption textFileOption(QStringLiteral("text-file"),
                                            QStringLiteral("Open this UTF-8 text file instead of the sample."),
                                            QStringLiteral("PATH"));
    const QCommandLineOption variantOption(QStringLiteral("variant"),
                                           QStringLiteral("Select this variant id (see attnscope-cli variants)."),
                                           QStringLiteral("ID"));
    const QCommandLineOption viewOption(QStringLiteral("view"),
                                        QStringLiteral("Show this view: heatmap (default), mask, compare, diagnostics, links, cost or atlas."),
                                        QStringLiteral("VIEW"));
    const QCommandLineOption compareOption(
        QStringLiteral("compare"), QStringLiteral("The \"Compare with\" variant ids, comma-separated (up to 3; the compare view runs them beside --variant)."),
        QStringLiteral("ID"));
    const QCommandLineOption paramOption(QStringLiteral("param"),
                                         QStringLiteral("A parameter of --variant, e.g. window=2 (repeatable)."),
                                         QStringLiteral("NAME=VALUE"));
    const QCommandLineOption compareParamOption(
        QStringLiteral("compare-param"), QStringLiteral("A parameter of --compare (repeatable)."),
        QStringLiteral("NAME=VALUE"));
    const QCommandLineOption headOption(QStringLiteral("head"), QStringLiteral("Show this head (default 0)."),
                                        QStringLiteral("H"));
    const QCommandLineOption queryOption(
        QStringLiteral("query"), QStringLiteral("Mask view: fill the row panel for this query (screenshots)."),
        QStringLiteral("I"));
    parser.addOption(variantOption);
    const QCommandLineOption keyOption(
        QStringLiteral("key"), QStringLiteral("Compare view: with --query, hover the cell (query, key) (screenshots)."),
        QStringLiteral("J"));
    const QCommandLineOption errorCurveOption(
        QStringLiteral("error-curve"),
        QStringLiteral("Diagnostics view: compute the approximation error curve before the screenshot."));
    parser.addOption(errorCurveOption);
    const QCommandLineOption maskWeightsOption(QStringLiteral("mask-weights"),
                                               QStringLiteral("Mask view: shade allowed cells by their weights."));
    parser.addOptions({viewOption, compareOption, paramOption, compareParamOption, headOption, queryOption,
                       keyOption, maskWeightsOption});
    const QCommandLineOption modelOption(
        QStringLiteral("model"), QStringLiteral("Open this model folder; its layer (--layer) is the Q/K/V source."),
        QStringLiteral("DIR"));
    const QCommandLineOption layerOption(QStringLiteral("layer"),
                                         QStringLiteral("With --model: the layer whose Q/K/V runs take (default 0)."),
                                         QStringLiteral("L"));
    parser.addOptions({modelOption, layerOption});
    parser.addOption(screenshotOption);
    parser.addOption(textFileOption);
    // NOTE: not "--session": QGuiApplication takes -session/--session for X11 session management.
    const QCommandLineOption sessionOption(QStringLiteral("session-file"),
                                           QStringLiteral("Open this session file (docs/SESSIONS.md) once the engine is ready."),
                                           QStringLiteral("PATH"));
    parser.addOption(sessionOption);
    parser.process(app);

    MainWindow::Options options;
    if (parser.isSet(textFileOption)) {
        const QString path = parser.value(textFileOption);
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            printError(QStringLiteral("%1: %2").arg(path, file.errorString()));
            return 2;
        }
        QStringDecoder decoder(QStringDecoder::Utf8);
        options.initialText = decoder.decode(file.readAll());
        if (decoder.hasError()) {
            printError(QStringLiteral("%1: not valid UTF-8 text").arg(path));
            return 2;
        }
        options.textSource = QFileInfo(path).fileName();
    }

    const QString screenshotPath = parser.value(screenshotOption);
    const bool screenshot = !screenshotPath.isEmpty();
    if (!screenshot) {
        // What the user typed last time comes back after a crash or an accidental close,
        // unless a file was named on the command line.
        options.autosavePath = TextAutosave::defaultPath();
        if (!parser.isSet(textFileOption)) {
            if (const auto restored = TextAutosave::load(options.autosavePath); restored && !restored->isEmpty()) {
                options.initialText = *restored;
                options.textSource = QObject::tr("restored text");
            }
        }
    }
    // Screenshots use the defaults, so they do not depend on the machine's saved settings.
    AppSettings settings;
    if (!screenshot) {
        QSettings stored;
        settings = AppSettings::load(stored);
    }
    if (parser.isSet(variantOption)) settings.variantId = parser.value(variantOption);
    const QString view = parser.value(viewOption);
    if (view == QLatin1String("mask")) {
        options.initialView = MainWindow::View::Mask;
    } else if (view == QLatin1String("compare")) {
        options.initialView = MainWindow::View::Compare;
    } else if (view == QLatin1String("links")) {
        options.initialView = MainWindow::View::Links;
    } else if (view == QLatin1String("diagnostics")) {
        options.initialView = MainWindow::View::Diagnostics;
    } else if (view == QLatin1String("cost")) {
        options.initialView = MainWindow::View::Cost;
    } else if (view == QLatin1String("atlas")) {
        options.initialView = MainWindow::View::Atlas;  // analyses --model once it opens
    } else if (!view.isEmpty() && view != QLatin1String("heatmap")) {
        printError(QStringLiteral("--view %1: expected heatmap, mask, compare, diagnostics, links, cost or atlas").arg(view));
        return 2;
    }
    options.compareVariant = parser.value(compareOption);
    options.params = parser.values(paramOption);
    options.compareParams = parser.values(compareParamOption);
    bool headOk = true, queryOk = true, keyOk = true;
    const int key = parser.isSet(keyOption) ? parser.value(keyOption).toInt(&keyOk) : -1;
    const int head = parser.isSet(headOption) ? parser.value(headOption).toInt(&headOk) : 0;
    const int query = parser.isSet(queryOption) ? parser.value(queryOption).toInt(&queryOk) : -1;
    if (!headOk || !queryOk || !keyOk || head < 0) {
        printError(QStringLiteral("--head, --query and --key take non-negative integers"));
        return 2;
    }
    options.showErrorDialogs = !screenshot;
    options.persistRecentFiles = !screenshot;  // screenshots leave the user's settings alone
    const QString sessionPath = parser.value(sessionOption);
    if (!sessionPath.isEmpty()) options.runOnStart = false;  // the session runs its own state
    bool layerOk = true;
    options.modelFolder = parser.value(modelOption);
    options.modelLayer = parser.isSet(layerOption) ? parser.value(layerOption).toInt(&layerOk) : 0;
    if (!layerOk || options.modelLayer < 0 || (parser.isSet(layerOption) && options.modelFolder.isEmpty())) {
        printError(QStringLiteral("--layer takes a non-negative integer and needs --model DIR"));
        return 2;
    }
    if (screenshot && options.initialView == MainWindow::View::Atlas && options.modelFolder.isEmpty()) {
        printError(QStringLiteral("--view atlas needs --model DIR: the atlas describes a model's heads"));
        return 2;
    }

    attnscope::app::EngineRunner runner(std::make_unique<attnscope::app::LocalEngineBackend>());
    MainWindow window(&runner, settings, options);
    if (!sessionPath.isEmpty()) {
        // Queued: the window takes the variant list first, then the session is checked against it.
        QObject::connect(
            &runner, &attnscope::app::EngineRunner::variantsLoaded, &window,
            [&window, &sessionPath, screenshot] {
                const QString error = window.openPath(sessionPath);
                if (!error.isEmpty() && screenshot) {
                    printError(error);
                    QApplication::exit(2);
                }
            },
            Qt::QueuedConnection);
    }
    window.maskView()->setShowWeights(parser.isSet(maskWeightsOption));

    const auto grabLater = [&] {
        QTimer::singleShot(kScreenshotSettleMs, &window, [&] {
            window.flushPendingResult();  // a head still pooling in the background is drawn first
            QCoreApplication::processEvents();
            const QImage image = window.grab().toImage();
            if (!image.save(screenshotPath, "PNG")) {
                printError(QStringLiteral("cannot write %1").arg(screenshotPath));
                QApplication::exit(1);
                return;
            }
            QApplication::exit(0);
        });
    };
    if (screenshot) {
        window.resize(kScreenshotWidth, kScreenshotHeight);
        // The Atlas tab is grabbed when its analysis is shown, not on the first run.
        QObject::connect(&window, &MainWindow::atlasShown, &window, [&] { grabLater(); });
        QObject::connect(&window, &MainWindow::modelOpenFailed, &window, [](const QString& message) {
            printError(message);
            QApplication::exit(1);
        });
        QObject::connect(&window, &MainWindow::atlasFailed, &window, [](const QString& message, int) {
            printError(QStringLiteral("analysis failed: %1").arg(message));
            QApplication::exit(1);
        });
        QObject::connect(&window, &MainWindow::resultShown, &window, [&] {
            if (window.currentView() == MainWindow::View::Atlas) return;
            // The result of the first request may be superseded by the compare tab's pair.
            if (window.currentView() == MainWindow::View::Compare && window.lastResult()->results.size() < 2) return;
            // The Diagnostics tab of an approximating variant waits for its `full` reference.
            if (window.currentView() == MainWindow::View::Diagnostics &&
                attnscope::views::DiagnosticsStack::needsExactReference(settings.variantId) &&
                window.lastResult()->results.size() < 2)
                return;
            if (head > 0) window.inspection()->setHead(head);
            if (query >= 0) window.maskView()->showQuery(query);
            if (query >= 0 && key >= 0) window.compareView()->hoverCell(query, key);
            if (parser.isSet(errorCurveOption) && window.currentView() == MainWindow::View::Diagnostics) {
                // Connected after the window's own handler, so the curve is drawn when this runs.
                QObject::connect(&runner, &attnscope::app::EngineRunner::runFinished, &window, grabLater);
                QObject::connect(&runner, &attnscope::app::EngineRunner::jobFailed, &window,
                                 [](quint64, const QString& message, int) {
                                     printError(QStringLiteral("error curve failed: %1").arg(message));
                                     QApplication::exit(1);
                                 });
                window.diagnostics()->approximationView()->requestErrorCurve();
                return;
            }
            grabLater();
        });
        QObject::connect(&window, &MainWindow::runFailed, &window, [](quint64, const QString& message, int) {
            printError(QStringLiteral("run failed: %1").arg(message));
            QApplication::exit(1);
        });
        QTimer::singleShot(kScreenshotTimeoutMs, &window, [] {
            printError(QStringLiteral("no result within %1 s").arg(kScreenshotTimeoutMs / 1000));
            QApplication::exit(3);
        });
    }

    window.show();
    const int rc = QApplication::exec();
    if (!screenshot) {
        QSettings stored;
        window.settings().save(stored);
    }
    return rc;
}
