#include "gui/window/token_finder.h"

#include "gui/window/token_find_bar.h"

#include "views/data/token_highlight.h"
#include "views/data/token_label.h"

#include <QAction>
#include <QKeySequence>
#include <QMenu>
#include <QWidget>

#include <utility>

namespace attnscope::app {

TokenFinder::TokenFinder(TokenFindBar* bar, Views views, QObject* parent)
    : QObject(parent), m_bar(bar), m_views(std::move(views)) {
    connect(m_bar, &TokenFindBar::searchChanged, this, [this] { search(); });
    connect(m_bar, &TokenFindBar::nextRequested, this, [this] { step(+1); });
    connect(m_bar, &TokenFindBar::previousRequested, this, [this] { step(-1); });
    connect(m_bar, &TokenFindBar::closed, this, [this] {
        m_found.clear();
        m_views.mark(m_found);
        if (QWidget* view = m_views.focusAfterClose()) view->setFocus();
    });
}

void TokenFinder::addAction(QMenu* viewMenu) {
    QAction* find = viewMenu->addAction(tr("&Find Token…"), m_bar, &TokenFindBar::open);
    find->setShortcut(QKeySequence::Find);  // Ctrl+F
    find->setToolTip(tr("Mark the tokens containing a text in every view; Enter goes from one to the next"));
}

void TokenFinder::resultChanged() {
    if (m_bar->isVisible()) search();
}

void TokenFinder::search() {
    m_index = -1;
    const QString needle = m_bar->isVisible() ? m_bar->text().trimmed() : QString();
    const engine::RunResult* result = m_views.shown();
    m_found = result ? views::findTokens(result->input, needle) : QVector<int>{};
    if (needle.isEmpty()) m_bar->setStatus(QString());
    else if (!result) m_bar->setStatus(tr("Run first (F5): there are no tokens yet."));
    else if (m_found.isEmpty()) m_bar->setStatus(tr("No token contains “%1”, and the text does not.").arg(needle));
    else
        m_bar->setStatus(m_found.size() == 1 ? tr("1 token (Enter: go to it)")
                                             : tr("%1 tokens (Enter: go to the next)").arg(m_found.size()));
    m_views.mark(m_found);
}

void TokenFinder::step(int direction) {
    if (m_found.isEmpty()) return;
    const int count = static_cast<int>(m_found.size());
    m_index = m_index < 0 ? (direction > 0 ? 0 : count - 1) : (m_index + direction + count) % count;
    const int token = m_found[m_index];
    m_views.goTo(token);
    const engine::RunResult* result = m_views.shown();
    const QString text = result && token < static_cast<int>(result->input.tokens.size())
                             ? views::tokenLabel(result->input.tokens[static_cast<std::size_t>(token)].text)
                             : QString();
    m_bar->setStatus(tr("token %1 “%2” (%3 of %4)").arg(token).arg(text).arg(m_index + 1).arg(count));
}

}  // namespace attnscope::app
