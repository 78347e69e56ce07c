#include "views/diagnostics/result_page.h"

#include "views/data/inspection_state.h"

namespace attnscope::views {

ResultPage::ResultPage(QWidget* parent) : QWidget(parent) {}

void ResultPage::setInspectionState(InspectionState* state) {
    followInspectionState(this, m_state, state, [this] { rebuild(); });
}

void ResultPage::setResult(Run run) {
    m_result = std::move(run);
    rebuild();
}

}  // namespace attnscope::views
