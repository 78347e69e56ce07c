#pragma once
// The window's exports in its File menu: the shown tab as a figure or a slide, every head of the
// layer (the heads grid), the run's data — on the Experts tab the routing instead — and a copy of
// the figure; each described by the run, the selected result, layer and head it shows.

#include <attnscope/types.h>

#include <QHash>
#include <QString>

#include <functional>
#include <memory>

class QMenu;
class QWidget;

namespace attnscope::app {

class ExportController;
class ViewTabs;

struct WindowExportSources {
    ViewTabs* views = nullptr;
    std::function<std::shared_ptr<const engine::RunResult>()> shownRun;
    std::function<QHash<QString, QString>()> variantNames;
};

/// The export controller of `window`, its actions added to `fileMenu`.
ExportController* addWindowExports(QWidget* window, QMenu* fileMenu, WindowExportSources sources, bool showDialogs);

}  // namespace attnscope::app
