// The Help menu: "What am I looking at?" (F1), a panel explaining the shown tab and the chosen
// variant (views/help/), and About.

#include "gui/main_window.h"
#include "gui/view_tabs.h"
#include "gui/run_settings_panel.h"

#include "views/help/help_panel.h"
#include "views/help/view_guide.h"
#include "views/param_form.h"

#include <QAction>
#include <QComboBox>
#include <QCoreApplication>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QTabWidget>

namespace attnscope::app {

void MainWindow::buildHelpActions() {
    m_help = new views::HelpPanel(this);
    addDockWidget(Qt::RightDockWidgetArea, m_help);
    m_help->hide();
    QMenu* helpMenu = menuBar()->addMenu(tr("&Help"));
    QAction* what = m_help->toggleViewAction();
    what->setText(tr("&What Am I Looking At?"));
    what->setShortcut(QKeySequence::HelpContents);  // F1
    what->setToolTip(tr("Explains the shown tab and the chosen variant (F1)"));
    helpMenu->addAction(what);
    buildTourAction(helpMenu);
    helpMenu->addAction(tr("&About AttnScope"), this, [this] {
        QMessageBox::about(this, tr("About AttnScope"),
                           tr("<p><b>AttnScope</b> %1</p><p>How Transformer attention works and how the efficient "
                              "variants change it: every variant computed exactly as its paper defines it, on the same "
                              "queries, keys and values.</p>")
                               .arg(QCoreApplication::applicationVersion().toHtmlEscaped()));
    });
    connect(m_views->tabs(), &QTabWidget::currentChanged, this, &MainWindow::uiUpdateHelp);
    // (the form is rebuilt for a new variant before it says its values changed)
    connect(m_inputs->paramForm(), &views::ParamForm::valuesChanged, this, &MainWindow::uiUpdateHelp);
    uiUpdateHelp();
}

void MainWindow::uiUpdateHelp() {
    static const QStringList keys = views::viewGuideKeys();
    m_help->setView(keys.value(m_views->tabs()->currentIndex()));
    if (!m_inputs->paramForm()->variant().id.empty()) m_help->setVariant(m_inputs->paramForm()->variant());
}

}  // namespace attnscope::app
