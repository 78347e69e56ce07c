// MainWindow's part of Find Token (TokenFinder): the views that mark the found tokens (bands in
// the heatmap, mask and compare panes, orange labels in Links) and how the shown one goes to a
// token.

#include "gui/window/main_window.h"
#include "gui/window/view_tabs.h"

#include "gui/window/token_find_bar.h"
#include "gui/window/token_finder.h"
#include "views/compare/compare_view.h"
#include "views/heatmap/head_heatmap.h"
#include "views/mask/mask_view.h"
#include "views/links/token_links.h"

#include <QTabWidget>

namespace attnscope::app {

void MainWindow::buildTokenFinder(QMenu* viewMenu) {
    TokenFinder::Views views;
    views.shown = [this] { return lastResult().get(); };
    views.mark = [this](const QVector<int>& tokens) { m_views->markTokens(tokens); };
    views.goTo = [this](int token) { m_views->goToToken(token); };
    views.focusAfterClose = [this] { return m_views->currentPage(); };
    m_finder = new TokenFinder(m_views->findBar(), std::move(views), this);
    m_finder->addAction(viewMenu);
}

}  // namespace attnscope::app
