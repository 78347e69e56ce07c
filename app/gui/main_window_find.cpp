// View ▸ Find Token (Ctrl+F): the tokens whose text contains what is typed are marked in every
// view that draws tokens (bands in the heatmap, mask and compare panes, orange labels in Links),
// and Enter moves the cell cursor to the next one.

#include "gui/main_window.h"

#include "gui/token_find_bar.h"
#include "views/compare_view.h"
#include "views/head_heatmap.h"
#include "views/mask_view.h"
#include "views/token_highlight.h"
#include "views/token_label.h"
#include "views/token_links.h"

#include <QAction>
#include <QMenu>
#include <QVBoxLayout>

namespace attnscope::app {

void MainWindow::buildFindAction(QMenu* viewMenu) {
    QAction* find = viewMenu->addAction(tr("&Find Token…"), this, [this] { m_findBar->open(); });
    find->setShortcut(QKeySequence::Find);  // Ctrl+F
    find->setToolTip(tr("Mark the tokens containing a text in every view; Enter goes from one to the next"));
    connect(m_findBar, &TokenFindBar::searchChanged, this, [this] { uiFindTokens(); });
    connect(m_findBar, &TokenFindBar::nextRequested, this, [this] { uiGoToFoundToken(+1); });
    connect(m_findBar, &TokenFindBar::previousRequested, this, [this] { uiGoToFoundToken(-1); });
    connect(m_findBar, &TokenFindBar::closed, this, [this] {
        m_found.clear();
        uiShowFoundTokens();
        if (QWidget* view = m_viewTabs->currentWidget()) view->setFocus();
    });
}

void MainWindow::uiFindTokens() {
    m_foundIndex = -1;
    const QString needle = m_findBar->isVisible() ? m_findBar->text().trimmed() : QString();
    m_found = m_result ? views::findTokens(m_result->input.tokens, needle) : QVector<int>{};
    if (needle.isEmpty()) m_findBar->setStatus(QString());
    else if (!m_result) m_findBar->setStatus(tr("Run first (F5): there are no tokens yet."));
    else if (m_found.isEmpty()) m_findBar->setStatus(tr("No token contains “%1”.").arg(needle));
    else
        m_findBar->setStatus(m_found.size() == 1 ? tr("1 token (Enter: go to it)")
                                                 : tr("%1 tokens (Enter: go to the next)").arg(m_found.size()));
    uiShowFoundTokens();
}

void MainWindow::uiShowFoundTokens() {
    m_heatmap->setHighlightedTokens(m_found);
    m_maskView->setHighlightedTokens(m_found);
    m_compareView->setHighlightedTokens(m_found);
    m_tokenLinks->setHighlightedTokens(m_found);
}

void MainWindow::uiGoToFoundToken(int step) {
    if (m_found.isEmpty()) return;
    const int count = static_cast<int>(m_found.size());
    m_foundIndex = m_foundIndex < 0 ? (step > 0 ? 0 : count - 1) : (m_foundIndex + step + count) % count;
    const int token = m_found[m_foundIndex];
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
        default: {
            const int key = m_heatmap->hoveredKey() >= 0 ? m_heatmap->hoveredKey() : token;
            if (currentView() == View::Heatmap) m_heatmap->moveCursorTo(token, key);
            break;
        }
    }
    const QString text = m_result && token < static_cast<int>(m_result->input.tokens.size())
                             ? views::tokenLabel(m_result->input.tokens[static_cast<std::size_t>(token)].text)
                             : QString();
    m_findBar->setStatus(tr("token %1 “%2” (%3 of %4)").arg(token).arg(text).arg(m_foundIndex + 1).arg(count));
}

}  // namespace attnscope::app
