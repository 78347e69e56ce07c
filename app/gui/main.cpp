// attnscope-gui: the desktop app, started by the attnscope launcher. `--screenshot PATH` makes the README screenshots with the app itself.

#include "common/image_file.h"
#include "common/omp_wait_policy.h"
#include "common/variant_flags.h"
#include "gui/app_settings.h"
#include "gui/context_controller.h"
#include "gui/engine_runner.h"
#include "gui/eval_speed_job.h"
#include "gui/local_engine_backend.h"
#include "gui/main_window.h"
#include "gui/tour_panel.h"
#include "views/context_search_view.h"
#include "views/neuron_view.h"
#include "views/help/guided_tour.h"
#include "views/help/help_panel.h"
#include "gui/model_source.h"
#include "gui/recipe/export_command.h"
#include "gui/scaling_job.h"
#include "gui/text_autosave.h"

#include "views/compare_view.h"
#include "views/cost_view.h"
#include "views/diagnostics/approximation_view.h"
#include "views/diagnostics/diagnostics_stack.h"
#include "views/diagnostics/receptive_field_view.h"
#include "views/diagnostics/star_player.h"
#include "views/diagnostics/star_reach_view.h"
#include "views/eval_speed_panel.h"
#include "views/image/image_overlay_view.h"
#include "views/inspection_state.h"
#include "views/mask_view.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QLineEdit>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QMap>

#include <optional>
#include <QPixmap>
#include <QSettings>
#include <QTabWidget>
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

using attnscope::app::AppSettings;
using attnscope::app::MainWindow;
using attnscope::app::TextAutosave;

// The command line's options (besides --help and --version).
struct Flags {
    QCommandLineOption screenshot{QStringLiteral("screenshot"),
                                  QStringLiteral("Run the input once, save a PNG of the window to PATH and quit."),
                                  QStringLiteral("PATH")};
    QCommandLineOption windowSize{QStringLiteral("window-size"),
                                  QStringLiteral("With --screenshot: the window's size (default 1400x900; e.g. 1366x768)."),
                                  QStringLiteral("WxH")};
    QCommandLineOption image{QStringLiteral("image"),
                             QStringLiteral("Open this image as the input (its pixels or patches are the tokens; docs/IMAGES.md)."),
                             QStringLiteral("PATH")};
    QCommandLineOption textFile{QStringLiteral("text-file"), QStringLiteral("Open this UTF-8 text file instead of the sample."),
                                QStringLiteral("PATH")};
    QCommandLineOption variant{QStringLiteral("variant"), QStringLiteral("Select this variant id (see attnscope-cli variants)."),
                               QStringLiteral("ID")};
    QCommandLineOption view{QStringLiteral("view"),
                            QStringLiteral("Show this view: heatmap (default), mask, compare, diagnostics, links, cost, atlas, experts, image, neuron, qkmap or context."),
                            QStringLiteral("VIEW")};
    QCommandLineOption compare{QStringLiteral("compare"),
                               QStringLiteral("The \"Compare with\" variant ids, comma-separated (up to 3; the compare view "
                                              "runs them beside --variant)."),
                               QStringLiteral("ID")};
    QCommandLineOption param{QStringLiteral("param"), QStringLiteral("A parameter of --variant, e.g. window=2 (repeatable)."),
                             QStringLiteral("NAME=VALUE")};
    QCommandLineOption compareParam{QStringLiteral("compare-param"), QStringLiteral("A parameter of a --compare variant: ID:NAME=VALUE for the entry ID, "
                                                   "NAME=VALUE for the first (repeatable)."),
                                    QStringLiteral("[ID:]NAME=VALUE")};
    QCommandLineOption head{QStringLiteral("head"), QStringLiteral("Show this head (default 0)."), QStringLiteral("H")};
    QCommandLineOption query{QStringLiteral("query"), QStringLiteral("Mask view: fill the row panel for this query (screenshots)."),
                             QStringLiteral("I")};
    QCommandLineOption key{QStringLiteral("key"),
                           QStringLiteral("Compare view: with --query, hover the cell (query, key) (screenshots)."),
                           QStringLiteral("J")};
    QCommandLineOption errorCurve{QStringLiteral("error-curve"),
                                  QStringLiteral("Diagnostics view: compute the approximation error curve before the screenshot.")};
    QCommandLineOption receptiveField{
        QStringLiteral("receptive-field"),
        QStringLiteral("Diagnostics view of transformer_xl: show the receptive field (of --query; with --model, its flow).")};
    QCommandLineOption starReach{QStringLiteral("star-reach"),
                                 QStringLiteral("Diagnostics view of star: show the Reach tab (what reaches each node).")};
    QCommandLineOption evalSpeed{QStringLiteral("eval-speed"),
                                 QStringLiteral("Cost view: measure Transformer-XL's evaluation speed before the screenshot.")};
    QCommandLineOption scaling{QStringLiteral("scaling"),
                               QStringLiteral("Cost view: measure the run's variants at these sizes (e.g. 256,512,1024) before "
                                              "the screenshot."),
                               QStringLiteral("SIZES")};
    QCommandLineOption tour{QStringLiteral("tour"), QStringLiteral("Open Help ▸ Guided Tour at step N (1-based)."),
                            QStringLiteral("N")};
    QCommandLineOption helpPanel{QStringLiteral("help-panel"),
                                 QStringLiteral("Show the \"What am I looking at?\" panel (F1) beside the views.")};
    QCommandLineOption maskWeights{QStringLiteral("mask-weights"), QStringLiteral("Mask view: shade allowed cells by their weights.")};
    QCommandLineOption imageShow{QStringLiteral("image-show"),
                                 QStringLiteral("Image tab: weights | mask | groups | layers | rollout | flow | dino (the last four "
                                                "with a vision model)."),
                                 QStringLiteral("KIND")};
    QCommandLineOption model{QStringLiteral("model"),
                             QStringLiteral("Open this model folder; its layer (--layer) is the Q/K/V source."), QStringLiteral("DIR")};
    QCommandLineOption welcome{QStringLiteral("welcome"),
                               QStringLiteral("Show the first-start card (screenshots; the app shows it until it is closed once).")};
    QCommandLineOption layer{QStringLiteral("layer"), QStringLiteral("With --model: the layer whose Q/K/V runs take (default 0)."),
                             QStringLiteral("L")};
    QCommandLineOption corpus{QStringLiteral("corpus"),
                              QStringLiteral("Context tab: search this corpus (a UTF-8 text file) with the open model."), QStringLiteral("FILE")};
    // NOTE: not "--session": QGuiApplication takes -session/--session for X11 session management.
    QCommandLineOption session{QStringLiteral("session-file"),
                               QStringLiteral("Open this session file (docs/SESSIONS.md) once the engine is ready."),
                               QStringLiteral("PATH")};

    void addTo(QCommandLineParser& parser) const {
        parser.addOptions({variant, errorCurve, receptiveField, starReach, evalSpeed, scaling, tour, helpPanel, view, compare, param, compareParam, head, query, key, maskWeights, imageShow, model, layer, welcome,
                           screenshot, windowSize, textFile, image, session, corpus});
    }
};

// What the window starts with, read from the command line (and, outside screenshots, the saved
// settings and the autosaved text).
struct Startup {
    MainWindow::Options options;
    AppSettings settings;
    QString screenshotPath, sessionPath, corpusPath;
    int head = 0, query = -1, key = -1;
    QSize windowSize{kScreenshotWidth, kScreenshotHeight};
    bool errorCurve = false, receptiveField = false, starReach = false, evalSpeed = false, maskWeights = false;
    bool helpPanel = false;
    std::optional<attnscope::views::OverlayKind> imageShow;
    QString scalingSizes;
    int tourStep = 0;  // 1-based; 0 = no tour
    bool screenshot() const { return !screenshotPath.isEmpty(); }
};

// The named text file; exit status 2 with the reason when it cannot be read as UTF-8.
int readTextFile(const QString& path, MainWindow::Options& options) {
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
    return 0;
}

// --view: 0 and the view, or 2 with the reason.
int readView(const QString& view, MainWindow::Options& options) {
    // (atlas analyses --model once it opens)
    if (view.isEmpty()) return 0;
    const QStringList& names = attnscope::app::viewTabNames();
    if (names.contains(view)) {
        options.initialView = attnscope::app::viewTabNamed(view);
        return 0;
    }
    printError(QStringLiteral("--view %1: expected %2 or %3").arg(view, names.mid(0, names.size() - 1).join(QStringLiteral(", ")), names.last()));
    return 2;
}

// 0, or 2 after naming a --variant, --param, --compare or --compare-param the catalog refuses.
int checkVariantFlags(const QCommandLineParser& parser, const Flags& f, const Startup& s) {
    attnscope::app::VariantFlags flags;
    flags.variant = parser.isSet(f.variant) ? parser.value(f.variant).toStdString() : std::string();
    flags.fallback = s.settings.variantId.toStdString();
    for (const QString& p : parser.values(f.param)) flags.params.push_back(p.toStdString());
    flags.compare = parser.value(f.compare).toStdString();
    for (const QString& p : parser.values(f.compareParam)) flags.compareParams.push_back(p.toStdString());
    const std::string problem = attnscope::app::checkVariantFlags(flags);
    if (problem.empty()) return 0;
    printError(QString::fromStdString(problem));
    return 2;
}

// 0, or the exit status after printing what is wrong with the command line.
int readStartup(const QCommandLineParser& parser, const Flags& f, Startup& s) {
    MainWindow::Options& options = s.options;
    if (parser.isSet(f.textFile))
        if (const int rc = readTextFile(parser.value(f.textFile), options)) return rc;
    s.screenshotPath = parser.value(f.screenshot);
    if (parser.isSet(f.windowSize)) {
        const QStringList parts = parser.value(f.windowSize).split(QLatin1Char('x'));
        bool okWidth = false, okHeight = false;
        const int width = parts.size() == 2 ? parts[0].toInt(&okWidth) : 0;
        const int height = parts.size() == 2 ? parts[1].toInt(&okHeight) : 0;
        if (!okWidth || !okHeight || width < 320 || height < 240 || width > 8192 || height > 8192) {
            printError(QStringLiteral("--window-size '%1': expected WIDTHxHEIGHT, e.g. 1366x768 (320x240 to 8192x8192)")
                           .arg(parser.value(f.windowSize)));
            return 2;
        }
        s.windowSize = QSize(width, height);
    }
    if (!s.screenshot()) {
        // What the user typed last time comes back after a crash or an accidental close, unless
        // a file was named on the command line.
        options.autosavePath = TextAutosave::defaultPath();
        if (!parser.isSet(f.textFile))
            if (const auto restored = TextAutosave::load(options.autosavePath); restored && !restored->isEmpty()) {
                options.initialText = *restored;
                options.textSource = QObject::tr("restored text");
            }
        // Screenshots use the defaults, so they do not depend on the machine's saved settings.
        QSettings stored;
        s.settings = AppSettings::load(stored);
    }
    if (parser.isSet(f.variant)) s.settings.variantId = parser.value(f.variant);
    if (const int rc = readView(parser.value(f.view), options)) return rc;
    if (parser.isSet(f.image)) {
        auto picture = attnscope::app::readImageFile(parser.value(f.image));
        if (!picture) {
            printError(QString::fromStdString(picture.error().message));
            return 2;
        }
        options.initialImage = picture.value();
        options.initialImageName = QFileInfo(parser.value(f.image)).fileName();
        options.initialImagePath = QFileInfo(parser.value(f.image)).absoluteFilePath();
        if (!parser.isSet(f.view)) options.initialView = attnscope::app::ViewTab::Image;
    }
    options.compareVariant = parser.value(f.compare);
    options.params = parser.values(f.param);
    options.compareParams = parser.values(f.compareParam);
    if (const int rc = checkVariantFlags(parser, f, s)) return rc;
    bool headOk = true, queryOk = true, keyOk = true, layerOk = true;
    s.key = parser.isSet(f.key) ? parser.value(f.key).toInt(&keyOk) : -1;
    s.head = parser.isSet(f.head) ? parser.value(f.head).toInt(&headOk) : 0;
    s.query = parser.isSet(f.query) ? parser.value(f.query).toInt(&queryOk) : -1;
    if (!headOk || !queryOk || !keyOk || s.head < 0) {
        printError(QStringLiteral("--head, --query and --key take non-negative integers"));
        return 2;
    }
    options.showErrorDialogs = !s.screenshot();
    options.persistRecentFiles = !s.screenshot();  // screenshots leave the user's settings alone
    options.showWelcome = !s.screenshot() || parser.isSet(f.welcome);
    s.sessionPath = parser.value(f.session);
    s.corpusPath = parser.value(f.corpus);
    if (!s.sessionPath.isEmpty()) options.runOnStart = false;  // the session runs its own state
    options.modelFolder = parser.value(f.model);
    options.modelLayer = parser.isSet(f.layer) ? parser.value(f.layer).toInt(&layerOk) : 0;
    options.modelKeepsVariant = parser.isSet(f.variant);
    if (!layerOk || options.modelLayer < 0 || (parser.isSet(f.layer) && options.modelFolder.isEmpty())) {
        printError(QStringLiteral("--layer takes a non-negative integer and needs --model DIR"));
        return 2;
    }
    if (s.screenshot() && options.initialView == MainWindow::View::Atlas && options.modelFolder.isEmpty()) {
        printError(QStringLiteral("--view atlas needs --model DIR: the atlas describes a model's heads"));
        return 2;
    }
    s.errorCurve = parser.isSet(f.errorCurve);
    s.receptiveField = parser.isSet(f.receptiveField);
    s.evalSpeed = parser.isSet(f.evalSpeed);
    s.scalingSizes = parser.value(f.scaling);
    if (parser.isSet(f.tour)) {
        bool ok = false;
        s.tourStep = parser.value(f.tour).toInt(&ok);
        if (!ok || s.tourStep < 1 || s.tourStep > static_cast<int>(attnscope::views::guidedTour().size())) {
            printError(QStringLiteral("--tour '%1': expected a step from 1 to %2")
                           .arg(parser.value(f.tour))
                           .arg(attnscope::views::guidedTour().size()));
            return 2;
        }
    }
    s.starReach = parser.isSet(f.starReach);
    s.helpPanel = parser.isSet(f.helpPanel);
    s.maskWeights = parser.isSet(f.maskWeights);
    if (parser.isSet(f.imageShow)) {
        using attnscope::views::OverlayKind;
        const QMap<QString, OverlayKind> kinds{{QStringLiteral("weights"), OverlayKind::Weights}, {QStringLiteral("mask"), OverlayKind::Mask},
                                               {QStringLiteral("groups"), OverlayKind::Groups},   {QStringLiteral("layers"), OverlayKind::Layers},
                                               {QStringLiteral("rollout"), OverlayKind::Rollout}, {QStringLiteral("flow"), OverlayKind::Flow},
                                               {QStringLiteral("dino"), OverlayKind::MassShare}};
        const QString name = parser.value(f.imageShow);
        if (!kinds.contains(name)) {
            printError(QStringLiteral("--image-show '%1': expected one of %2").arg(name, QStringList(kinds.keys()).join(QStringLiteral(", "))));
            return 2;
        }
        s.imageShow = kinds.value(name);
    }
    return 0;
}

// Saves a PNG of the window once its result (or atlas) is shown and quits; errors quit non-zero.
void armScreenshot(MainWindow& window, attnscope::app::EngineRunner& runner, const Startup& s) {
    // (a failed run is grabbed too, as the window shows the failure, and exits 1)
    const auto grabAndExit = [&window, path = s.screenshotPath](int status) {
        QTimer::singleShot(kScreenshotSettleMs, &window, [&window, path, status] {
            window.flushPendingResult();  // a head still pooling in the background is drawn first
            QCoreApplication::processEvents();
            const QImage image = window.grab().toImage();
            if (!image.save(path, "PNG")) {
                printError(QStringLiteral("cannot write %1").arg(path));
                QApplication::exit(1);
                return;
            }
            QApplication::exit(status);
        });
    };
    const auto grabLater = [grabAndExit] { grabAndExit(0); };
    window.resize(s.windowSize);
    // The Atlas tab is grabbed when its analysis is shown, not on the first run.
    QObject::connect(&window, &MainWindow::atlasShown, &window, grabLater);
    QObject::connect(&window, &MainWindow::modelOpenFailed, &window, [](const QString& message) {
        printError(message);
        QApplication::exit(1);
    });
    QObject::connect(&window, &MainWindow::atlasFailed, &window, [](const QString& message, int) {
        printError(QStringLiteral("analysis failed: %1").arg(message));
        QApplication::exit(1);
    });
    QObject::connect(&window, &MainWindow::resultShown, &window, [&window, &runner, s, grabLater] {
        if (window.currentView() == MainWindow::View::Atlas) return;
        // The result of the first request may be superseded by the compare tab's pair.
        if (window.currentView() == MainWindow::View::Compare && window.lastResult()->results.size() < 2) return;
        // The Diagnostics tab of an approximating variant waits for its exact reference.
        if (window.currentView() == MainWindow::View::Diagnostics &&
            attnscope::views::DiagnosticsStack::needsExactReference(s.settings.variantId) &&
            window.lastResult()->results.size() < 2)
            return;
        if (s.head > 0) window.views()->state()->setHead(s.head);
        if (s.query >= 0) window.views()->maskView()->showQuery(s.query);
        if (s.query >= 0 && window.currentView() == MainWindow::View::Neuron) window.views()->neuronView()->setQuery(s.query);
        if (window.currentView() == MainWindow::View::Context) {
            if (s.query >= 0) window.views()->contextView()->setQuery(s.query);
            // grabbed once the corpus is indexed and the first search answered
            auto* context = window.contextController();
            const auto searchedOnce = [context, grabLater, done = std::make_shared<bool>(false)] {
                if (*done || context->isIndexing() || !context->index()) return;
                *done = true;
                grabLater();
            };
            QObject::connect(context, &attnscope::app::ContextController::searched, &window, searchedOnce, Qt::QueuedConnection);
            return;
        }
        if (s.query >= 0 && s.key >= 0) window.views()->compareView()->hoverCell(s.query, s.key);
        if (s.errorCurve && window.currentView() == MainWindow::View::Diagnostics) {
            // Connected after the window's own handler, so the curve is drawn when this runs.
            QObject::connect(&runner, &attnscope::app::EngineRunner::runFinished, &window, grabLater);
            QObject::connect(&runner, &attnscope::app::EngineRunner::jobFailed, &window, [](quint64, const QString& message, int) {
                printError(QStringLiteral("error curve failed: %1").arg(message));
                QApplication::exit(1);
            });
            window.views()->diagnostics()->approximationView()->requestErrorCurve();
            return;
        }
        if (s.evalSpeed && window.currentView() == MainWindow::View::Cost) {
            auto* panel = window.views()->costView()->evalSpeedPanel();
            window.views()->costView()->measureTabs()->setCurrentWidget(panel);
            QObject::connect(window.evalSpeedJob(), &attnscope::app::EvalSpeedJob::finished, &window,
                             [grabLater](const QString&, bool) { grabLater(); });
            panel->requestMeasure();
            return;
        }
        if (!s.scalingSizes.isEmpty() && window.currentView() == MainWindow::View::Cost) {
            window.views()->costView()->sizesEdit()->setText(s.scalingSizes);
            QObject::connect(window.scalingJob(), &attnscope::app::ScalingJob::finished, &window,
                             [grabLater](const QString&, bool) { grabLater(); });
            window.views()->costView()->requestScaling();
            if (!window.views()->costView()->scalingRunning()) {
                printError(QStringLiteral("--scaling: %1").arg(window.views()->costView()->scalingStatus()));
                QApplication::exit(2);
            }
            return;
        }
        if (s.starReach && window.currentView() == MainWindow::View::Diagnostics) {
            window.views()->diagnostics()->starTabs()->setCurrentWidget(window.views()->diagnostics()->starReachView());
            if (!window.views()->diagnostics()->starPlayer()->pass()) {
                // the cycles arrive from the engine thread after the page shows
                QObject::connect(window.views()->diagnostics()->starPlayer(), &attnscope::views::StarPlayer::passChanged, &window, grabLater,
                                 Qt::QueuedConnection);
                return;
            }
        }
        if (s.receptiveField && window.currentView() == MainWindow::View::Diagnostics) {
            auto* field = window.views()->diagnostics()->receptiveFieldView();
            window.views()->diagnostics()->memoryTabs()->setCurrentWidget(field);
            if (s.query >= 0) field->setQuery(s.query);
            if (!window.lastResult()->modelFolder.empty() && !field->hasFlow()) {
                // the model's attention arrives after the page shows; grab once it is drawn
                QObject::connect(window.modelSource(), &attnscope::app::ModelSource::bandsReady, &window, grabLater, Qt::QueuedConnection);
                QObject::connect(window.modelSource(), &attnscope::app::ModelSource::bandsFailed, &window, [](const QString& message) {
                    printError(QStringLiteral("receptive field failed: %1").arg(message));
                    QApplication::exit(1);
                });
                return;
            }
        }
        grabLater();
    });
    QObject::connect(&window, &MainWindow::runFailed, &window, [grabAndExit](quint64, const QString& message, int) {
        printError(QStringLiteral("run failed: %1").arg(message));
        grabAndExit(1);
    });
    QTimer::singleShot(kScreenshotTimeoutMs, &window, [] {
        printError(QStringLiteral("no result within %1 s").arg(kScreenshotTimeoutMs / 1000));
        QApplication::exit(3);
    });
}

}  // namespace

int main(int argc, char** argv) {
    attnscope::app::ensurePassiveOpenMpWait(argv);
    // Headless figure export must work without a display (DESIGN.md): --screenshot picks the
    // offscreen platform unless the user chose one; `attnscope export RECIPE.json --out-dir DIR`
    // (batch figures) never opens a window either.
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
    const Flags flags;
    flags.addTo(parser);
    parser.process(app);
    Startup startup;
    if (const int rc = readStartup(parser, flags, startup)) return rc;

    attnscope::app::EngineRunner runner(std::make_unique<attnscope::app::LocalEngineBackend>());
    MainWindow window(&runner, startup.settings, startup.options);
    if (startup.helpPanel) window.helpPanel()->show();
    if (startup.tourStep > 0)  // once the variants are known: the step selects one
        QObject::connect(&runner, &attnscope::app::EngineRunner::variantsLoaded, &window,
                         [&window, step = startup.tourStep - 1] { window.tourPanel()->showStep(step); }, Qt::QueuedConnection);
    if (!startup.sessionPath.isEmpty()) {
        // Queued: the window takes the variant list first, then the session is checked against it.
        QObject::connect(
            &runner, &attnscope::app::EngineRunner::variantsLoaded, &window,
            [&window, path = startup.sessionPath, screenshot = startup.screenshot()] {
                const QString error = window.openPath(path);
                if (!error.isEmpty() && screenshot) {
                    printError(error);
                    QApplication::exit(2);
                }
            },
            Qt::QueuedConnection);
    }
    window.views()->maskView()->setShowWeights(startup.maskWeights);
    if (startup.imageShow) window.views()->imageView()->setKind(*startup.imageShow);
    if (!startup.corpusPath.isEmpty()) window.contextController()->chooseCorpus(startup.corpusPath);
    if (startup.screenshot()) armScreenshot(window, runner, startup);

    window.show();
    const int rc = QApplication::exec();
    if (!startup.screenshot()) {
        QSettings stored;
        window.settings().save(stored);
    }
    return rc;
}
