#include "gui/export/window_exports.h"

#include "gui/export/export_controller.h"
#include "gui/export/figure_metadata.h"
#include "gui/window/view_tabs.h"

#include "views/data/inspection_state.h"
#include "views/heatmap/heads_grid.h"
#include "views/moe/routing_view.h"

#include <QMenu>

namespace attnscope::app {

ExportController* addWindowExports(QWidget* window, QMenu* fileMenu, WindowExportSources sources, bool showDialogs) {
    ViewTabs* views = sources.views;
    // What a figure shows: the shown tab, or (head < 0) every head of the layer.
    const auto subject = [sources, views](QWidget* page, bool oneHead) {
        const views::InspectionState* state = views->state();
        return FigureSubject::describe(page, sources.shownRun(), state->resultIndex(), state->layer(), oneHead ? state->head() : -1,
                                       sources.variantNames());
    };
    auto* exports = new ExportController(
        window, [views] { return views->currentForExport(); }, [subject, views] { return subject(views->currentPage(), true); },
        showDialogs);
    fileMenu->addAction(exports->exportFigureAction());
    fileMenu->addAction(exports->exportSlideAction());
    // The heads grid above the tabs: every head of the layer in one figure.
    views->headsGrid()->setObjectName(QStringLiteral("all heads"));
    exports->setAllHeads([views]() -> QWidget* { return views->headsGrid(); },
                         [subject, views] { return subject(views->headsGrid(), false); });
    fileMenu->addAction(exports->exportAllHeadsAction());
    fileMenu->addAction(exports->exportDataAction());
    // On the Experts tab, Export Data writes the routing rather than the attention run.
    views::MoeRoutingView* routing = views->routingView();
    exports->setDataExport(
        routing, [routing](const QString& path) { return routing->exportRouting(path); },
        QCoreApplication::translate("attnscope::app::MainWindow", "Routing as safetensors (*.safetensors);;Routing choices as CSV (*.csv)"));
    fileMenu->addAction(exports->copyFigureAction());
    return exports;
}

}  // namespace attnscope::app
