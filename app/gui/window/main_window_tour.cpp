// The Help menu (HelpMenu) and the guided tour's steps: each step of views/help/guided_tour.h sets
// the tab, the variant and the compared variants it talks about and runs them on the sample.

#include "gui/window/main_window.h"
#include "gui/panels/run_settings_panel.h"

#include "gui/panels/compare_variants_editor.h"
#include "gui/window/help_menu.h"
#include "gui/settings/session.h"
#include "gui/window/tour_panel.h"
#include "views/help/guided_tour.h"

#include <QAction>
#include <QComboBox>
#include <QMenu>

namespace attnscope::app {

void MainWindow::buildHelpActions() {
    m_helpMenu = new HelpMenu(this, m_views->tabs(), m_inputs->paramForm());
    connect(m_helpMenu, &HelpMenu::tourStepShown, this, &MainWindow::uiApplyTourStep);
    connect(tourPanel(), &TourPanel::ended, this, &MainWindow::uiEndTour);
}

// The tour works on its own settings: the person's text, variant, compared variants, source and
// tab are kept when it starts and given back when it is finished or closed.
void MainWindow::uiEndTour() {
    if (!m_beforeTour) return;
    const std::shared_ptr<SessionState> before = std::move(m_beforeTour);
    if (const QString refused = applySession(*before); !refused.isEmpty()) setStatusMessage(refused);
}

void MainWindow::uiApplyTourStep(int index) {
    if (!m_beforeTour) m_beforeTour = std::make_shared<SessionState>(captureSession());
    const views::TourStep& step = views::guidedTour()[static_cast<std::size_t>(index)];
    if (!step.variant.isEmpty()) {
        const int found = m_inputs->variantCombo()->findData(step.variant);
        if (found >= 0) m_inputs->variantCombo()->setCurrentIndex(found);
    }
    if (!step.compare.isEmpty()) {
        std::vector<engine::VariantRequest> rows;
        for (const QString& id : step.compare) rows.push_back({id.toStdString(), {}});
        m_inputs->compareEditor()->setRows(rows);
    }
    showView(viewTabNamed(step.view));
    if (step.sampleModel) {
        useSampleModel();  // the Atlas tab analyses the model once it is open
        return;
    }
    runNow();
}

}  // namespace attnscope::app
