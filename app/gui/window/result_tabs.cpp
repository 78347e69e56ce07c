#include "gui/window/result_tabs.h"

#include <utility>

namespace attnscope::app {

void ResultTabs::add(int view, views::ResultView* tab) { m_tabs[view] = tab; }

views::ResultView* ResultTabs::tab(int view) const {
    const auto it = m_tabs.find(view);
    return it == m_tabs.end() ? nullptr : it->second;
}

bool ResultTabs::pending(int view) const { return (m_pending & (1u << view)) != 0; }

void ResultTabs::setPending(int view, bool pending) {
    if (pending) m_pending |= 1u << view;
    else m_pending &= ~(1u << view);
}

void ResultTabs::setResult(Run run) {
    unsigned waiting = 0;
    for (const auto& [view, tab] : m_tabs) {
        if (!pending(view)) tab->setResult(nullptr);
        waiting |= 1u << view;
    }
    m_pending = waiting;
    m_result = std::move(run);
}

void ResultTabs::deliver(int view) {
    if (!m_result || !pending(view)) return;  // before the first result every tab is empty
    setPending(view, false);
    if (views::ResultView* t = tab(view)) t->setResult(m_result);
}

void ResultTabs::park(int view) {
    views::ResultView* t = tab(view);
    if (!m_result || pending(view) || !t) return;
    if (t->park()) setPending(view, true);
}

void ResultTabs::flush() {
    for (const auto& [view, t] : m_tabs) deliver(view);
    for (const auto& [view, t] : m_tabs) t->finishBackgroundWork();
}

}  // namespace attnscope::app
