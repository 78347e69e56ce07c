#pragma once
// The contract of every view that shows a run — each result tab of the window and each page of
// the Diagnostics tab: it is given the run and the inspection state it follows, it may let go of
// the run while hidden, and it finishes its background work when asked (exports, screenshots).
// The window registers its tabs by this interface in one table (app/gui/window/view_tabs), the
// Diagnostics tab its pages (DiagnosticsStack).

#include <attnscope/types.h>

#include <memory>

namespace attnscope::views {

class InspectionState;

class ResultView {
public:
    using Run = std::shared_ptr<const engine::RunResult>;

    virtual ~ResultView() = default;

    /// Shows `run`; null: none.
    virtual void setResult(Run run) = 0;
    /// Follows the selected result, head and cells of `state` (owned by the window).
    virtual void setInspectionState(InspectionState* state) = 0;
    /// The view is hidden: it lets go of the run when keeping it costs memory or work, and says
    /// so (it is given the run again when shown); false: it keeps it.
    virtual bool park() { return false; }
    /// Blocks until what it computes on the views' worker thread is shown.
    virtual void finishBackgroundWork() {}

protected:
    ResultView() = default;
    ResultView(const ResultView&) = default;
    ResultView& operator=(const ResultView&) = default;
};

}  // namespace attnscope::views
