// attnscope-gui: the desktop app, started by the attnscope launcher. `--screenshot PATH` makes the
// README screenshots with the app itself (screenshot_harness.h); the flags are startup_options.h's.

#include "common/omp_wait_policy.h"
#include "gui/controllers/context_controller.h"
#include "gui/engine/engine_runner.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/recipe/export_command.h"
#include "gui/screenshot_harness.h"
#include "gui/startup_options.h"
#include "gui/window/tour_panel.h"
#include "gui/window/view_tabs.h"

#include "views/help/help_panel.h"
#include "views/image/image_overlay_view.h"
#include "views/mask/mask_view.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>

#include <memory>

using attnscope::app::MainWindow;
using attnscope::app::printStartupError;

int main(int argc, char** argv) {
    attnscope::app::ensurePassiveOpenMpWait(argv);
    // Headless figure export must work without a display (DESIGN.md): --screenshot picks the
    // offscreen platform unless the user chose one; `attnscope export RECIPE.json --out-dir DIR`
    // (batch figures) never opens a window either.
    const bool exportCommand = attnscope::app::isExportCommand(argc, argv);
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && (attnscope::app::wantsScreenshot(argc, argv) || exportCommand))
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
    const attnscope::app::StartupFlags flags;
    flags.addTo(parser);
    parser.process(app);
    attnscope::app::Startup startup;
    if (const int rc = attnscope::app::readStartup(parser, flags, startup)) return rc;

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
                    printStartupError(error);
                    QApplication::exit(2);
                }
            },
            Qt::QueuedConnection);
    }
    window.views()->maskView()->setShowWeights(startup.maskWeights);
    if (startup.imageShow) window.views()->imageView()->setKind(*startup.imageShow);
    if (!startup.corpusPath.isEmpty()) window.contextController()->chooseCorpus(startup.corpusPath);
    if (startup.screenshot()) attnscope::app::armScreenshot(window, runner, startup);

    window.show();
    const int rc = QApplication::exec();
    if (!startup.screenshot()) {
        QSettings stored;
        window.settings().save(stored);
    }
    return rc;
}
