// Help ▸ Guided Tour: each step of views/help/guided_tour.h sets the tab, the variant and the
// compared variants it talks about and runs them on the sample.

#include "gui/main_window.h"
#include "gui/run_settings_panel.h"

#include "gui/compare_variants_editor.h"
#include "gui/tour_panel.h"
#include "views/help/guided_tour.h"

#include <QAction>
#include <QComboBox>
#include <QMenu>

namespace attnscope::app {

namespace {

MainWindow::View viewNamed(const QString& name) {
    static const QHash<QString, MainWindow::View> views{
        {QStringLiteral("heatmap"), MainWindow::View::Heatmap}, {QStringLiteral("mask"), MainWindow::View::Mask},
        {QStringLiteral("compare"), MainWindow::View::Compare}, {QStringLiteral("diagnostics"), MainWindow::View::Diagnostics},
        {QStringLiteral("links"), MainWindow::View::Links},     {QStringLiteral("cost"), MainWindow::View::Cost},
        {QStringLiteral("atlas"), MainWindow::View::Atlas},     {QStringLiteral("experts"), MainWindow::View::Experts}};
    return views.value(name, MainWindow::View::Heatmap);
}

}  // namespace

void MainWindow::buildTourAction(QMenu* helpMenu) {
    m_tour = new TourPanel(this);
    addDockWidget(Qt::RightDockWidgetArea, m_tour);
    m_tour->hide();
    QAction* tour = helpMenu->addAction(tr("Guided &Tour"), this, [this] { m_tour->showStep(0); });
    tour->setToolTip(tr("Seven steps through the window on the sample text"));
    connect(m_tour, &TourPanel::stepShown, this, &MainWindow::uiApplyTourStep);
}

void MainWindow::uiApplyTourStep(int index) {
    const views::TourStep& step = views::guidedTour()[static_cast<std::size_t>(index)];
    if (!step.variant.isEmpty()) {
        const int found = m_inputs->variantCombo()->findData(step.variant);
        if (found >= 0) m_inputs->variantCombo()->setCurrentIndex(found);
    }
    if (!step.compare.isEmpty()) {
        while (m_inputs->compareEditor()->rowCount() > 1) m_inputs->compareEditor()->removeRow(m_inputs->compareEditor()->rowCount() - 1);
        if (QComboBox* first = m_inputs->compareEditor()->combo(0)) {
            const int found = first->findData(step.compare.front());
            if (found >= 0) first->setCurrentIndex(found);
        }
        for (int i = 1; i < step.compare.size(); ++i) m_inputs->compareEditor()->addRow(step.compare[i]);
    }
    showView(viewNamed(step.view));
    if (step.sampleModel) {
        useSampleModel();  // the Atlas tab analyses the model once it is open
        return;
    }
    runNow();
}

}  // namespace attnscope::app
