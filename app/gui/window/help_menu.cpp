#include "gui/window/help_menu.h"

#include "gui/window/tour_panel.h"

#include "views/help/help_panel.h"
#include "views/help/view_guide.h"
#include "views/widgets/param_form.h"

#include <QAction>
#include <QCoreApplication>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QTabWidget>

namespace attnscope::app {

HelpMenu::HelpMenu(QMainWindow* window, QTabWidget* tabs, views::ParamForm* variantForm)
    : QObject(window), m_window(window), m_tabs(tabs), m_variantForm(variantForm) {
    m_help = new views::HelpPanel(window);
    window->addDockWidget(Qt::RightDockWidgetArea, m_help);
    m_help->hide();
    m_tour = new TourPanel(window);
    window->addDockWidget(Qt::RightDockWidgetArea, m_tour);
    m_tour->hide();

    QMenu* menu = window->menuBar()->addMenu(tr("&Help"));
    QAction* what = m_help->toggleViewAction();
    what->setText(tr("&What Am I Looking At?"));
    what->setShortcut(QKeySequence::HelpContents);  // F1
    what->setToolTip(tr("Explains the shown tab and the chosen variant (F1)"));
    menu->addAction(what);
    QAction* tour = menu->addAction(tr("Guided &Tour"), m_tour, [this] { m_tour->showStep(0); });
    tour->setToolTip(tr("Seven steps through the window on the sample text"));
    connect(m_tour, &TourPanel::stepShown, this, &HelpMenu::tourStepShown);
    menu->addAction(tr("&About AttnScope"), this, [this] {
        QMessageBox::about(m_window, tr("About AttnScope"),
                           tr("<p><b>AttnScope</b> %1</p><p>How Transformer attention works and how the efficient "
                              "variants change it: every variant computed exactly as its paper defines it, on the same "
                              "queries, keys and values.</p>")
                               .arg(QCoreApplication::applicationVersion().toHtmlEscaped()));
    });

    connect(m_tabs, &QTabWidget::currentChanged, this, &HelpMenu::update);
    // (the form is rebuilt for a new variant before it says its values changed)
    connect(m_variantForm, &views::ParamForm::valuesChanged, this, &HelpMenu::update);
    update();
}

void HelpMenu::update() {
    static const QStringList keys = views::viewGuideKeys();
    m_help->setView(keys.value(m_tabs->currentIndex()));
    if (!m_variantForm->variant().id.empty()) m_help->setVariant(m_variantForm->variant());
}

}  // namespace attnscope::app
