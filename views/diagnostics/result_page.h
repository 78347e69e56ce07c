#pragma once
// The base of a Diagnostics page: it keeps the run and the inspection state and draws itself
// again (rebuild) when either changes, so a page holds only what it shows.

#include "views/widgets/result_view.h"

#include <QPointer>
#include <QWidget>

namespace attnscope::views {

class ResultPage : public QWidget, public ResultView {
    Q_OBJECT
public:
    void setInspectionState(InspectionState* state) override;
    /// Keeps `run` and rebuilds; a page that resets its own choices for a new run overrides it.
    void setResult(Run run) override;

protected:
    explicit ResultPage(QWidget* parent = nullptr);
    /// Draws the page for m_result and m_state's selection.
    virtual void rebuild() = 0;

    QPointer<InspectionState> m_state;
    Run m_result;
};

}  // namespace attnscope::views
