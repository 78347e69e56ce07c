#pragma once
// One tab of the window that shows runs. The main window holds one per View in a list and loops:
// the shown tab takes each new result at once, hidden ones when first shown; a tab may let go of
// its result while hidden (park) and is asked to finish its background work before an export.

#include <attnscope/types.h>

#include <functional>
#include <memory>

class QWidget;

namespace attnscope::app {

struct ResultTab {
    using Run = std::shared_ptr<const engine::RunResult>;
    QWidget* widget = nullptr;        ///< what the tab shows (and exports)
    std::function<void(const Run&)> take;  ///< show this result (nullptr: none)
    /// Let go of the result while the tab is hidden (it takes it again when shown); empty: the
    /// tab keeps it (cheap to keep, e.g. the heatmap's pooled heads).
    std::function<void()> park;
    std::function<void()> finishBackgroundWork;  ///< block until its worker-thread jobs are shown; may be empty
};

}  // namespace attnscope::app
