// MainWindow's part of Find Token (TokenFinder): the views that mark the found tokens (bands in
// the heatmap, mask and compare panes, orange labels in Links) and how the shown one goes to a
// token.

#include "gui/main_window.h"
#include "gui/view_tabs.h"

#include "gui/token_find_bar.h"
#include "gui/token_finder.h"
#include "views/compare_view.h"
#include "views/head_heatmap.h"
#include "views/mask_view.h"
#include "views/token_links.h"

#include <QTabWidget>

namespace attnscope::app {

void MainWindow::buildTokenFinder(QMenu* viewMenu) {
    TokenFinder::Views views;
    views.shown = [this] { return m_result.get(); };
    views.mark = [this](const QVector<int>& tokens) {
        m_views->heatmap()->setHighlightedTokens(tokens);
        m_views->maskView()->setHighlightedTokens(tokens);
        m_views->compareView()->setHighlightedTokens(tokens);
        m_views->tokenLinks()->setHighlightedTokens(tokens);
    };
    views.goTo = [this](int token) { uiGoToToken(token); };
    views.focusAfterClose = [this] { return m_views->tabs()->currentWidget(); };
    m_finder = new TokenFinder(m_views->findBar(), std::move(views), this);
    m_finder->addAction(viewMenu);
}

void MainWindow::uiGoToToken(int token) {
    // The found token as the query; the key stays where the cursor was (or the token itself).
    switch (currentView()) {
        case View::Mask: {
            const int key = m_views->maskView()->hoveredKey() >= 0 ? m_views->maskView()->hoveredKey() : token;
            m_views->maskView()->moveCursorTo(token, key);
            break;
        }
        case View::Links:
            m_views->tokenLinks()->showToken(token);
            break;
        case View::Heatmap: {
            const int key = m_views->heatmap()->hoveredKey() >= 0 ? m_views->heatmap()->hoveredKey() : token;
            m_views->heatmap()->moveCursorTo(token, key);
            break;
        }
        default:
            break;
    }
}

}  // namespace attnscope::app
