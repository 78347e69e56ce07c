// MainWindow's part of Find Token (TokenFinder): the views that mark the found tokens (bands in
// the heatmap, mask and compare panes, orange labels in Links) and how the shown one goes to a
// token.

#include "gui/main_window.h"

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
        m_heatmap->setHighlightedTokens(tokens);
        m_maskView->setHighlightedTokens(tokens);
        m_compareView->setHighlightedTokens(tokens);
        m_tokenLinks->setHighlightedTokens(tokens);
    };
    views.goTo = [this](int token) { uiGoToToken(token); };
    views.focusAfterClose = [this] { return m_viewTabs->currentWidget(); };
    m_finder = new TokenFinder(m_findBar, std::move(views), this);
    m_finder->addAction(viewMenu);
}

void MainWindow::uiGoToToken(int token) {
    // The found token as the query; the key stays where the cursor was (or the token itself).
    switch (currentView()) {
        case View::Mask: {
            const int key = m_maskView->hoveredKey() >= 0 ? m_maskView->hoveredKey() : token;
            m_maskView->moveCursorTo(token, key);
            break;
        }
        case View::Links:
            m_tokenLinks->showToken(token);
            break;
        case View::Heatmap: {
            const int key = m_heatmap->hoveredKey() >= 0 ? m_heatmap->hoveredKey() : token;
            m_heatmap->moveCursorTo(token, key);
            break;
        }
        default:
            break;
    }
}

}  // namespace attnscope::app
