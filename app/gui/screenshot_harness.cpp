#include "gui/screenshot_harness.h"

#include "gui/controllers/context_controller.h"
#include "gui/engine/engine_runner.h"
#include "gui/engine/eval_speed_job.h"
#include "gui/window/main_window.h"
#include "gui/engine/model_source.h"
#include "gui/engine/scaling_job.h"
#include "gui/startup_options.h"
#include "gui/window/view_tabs.h"

#include "views/compare/compare_view.h"
#include "views/context/context_search_view.h"
#include "views/cost/cost_view.h"
#include "views/diagnostics/approximation_view.h"
#include "views/diagnostics/diagnostics_stack.h"
#include "views/diagnostics/receptive_field_view.h"
#include "views/diagnostics/star_player.h"
#include "views/diagnostics/star_reach_view.h"
#include "views/cost/eval_speed_panel.h"
#include "views/data/inspection_state.h"
#include "views/mask/mask_view.h"
#include "views/neuron/neuron_view.h"

#include <attnscope/diagnostics.h>

#include <QApplication>
#include <QImage>
#include <QLineEdit>
#include <QPixmap>
#include <QTabWidget>
#include <QTimer>

#include <memory>

namespace attnscope::app {
namespace {

constexpr int kScreenshotTimeoutMs = 120000;
// After the result is shown: let queued replots and layouts run before grabbing.
constexpr int kScreenshotSettleMs = 300;

void printError(const QString& message) { printStartupError(message); }

}  // namespace

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
            engine::diagnosticsNeedExactReference(s.settings.variantId.toStdString()) &&
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

}  // namespace attnscope::app
