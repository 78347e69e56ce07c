#pragma once
// The window's tabs that show runs, held in one table by their contract (views::ResultView), and
// the rule that delivers a result to them: a new result goes to the shown tab at once and to each
// hidden tab when it is first shown; a tab left behind may let go of its result (park) and takes
// it again when shown; before an export every tab takes it and finishes its background work. No
// widget code: tests drive it with recording views.

#include "views/widgets/result_view.h"

#include <map>

namespace attnscope::app {

class ResultTabs {
public:
    using Run = views::ResultView::Run;

    /// `view` identifies the tab (ViewTab as an int); `tab` shows its runs.
    void add(int view, views::ResultView* tab);
    /// The tab of `view`, or null (a tab that shows no runs, such as the atlas).
    views::ResultView* tab(int view) const;

    /// A new result: every tab that holds the old one lets go of it first (cheap, so nothing is
    /// redrawn for the old result while the selection changes), then every tab waits for the new
    /// one. Call deliver() for the shown tab afterwards.
    void setResult(Run run);
    const Run& result() const { return m_result; }

    /// True while `view`'s tab has not taken the result.
    bool pending(int view) const;
    /// Gives the result to `view`'s tab unless it has it (or there is none yet).
    void deliver(int view);
    /// `view`'s tab was left: it lets go of the result if it parks (it takes it again when shown).
    void park(int view);
    /// Every tab takes the result and finishes its background work (exports, screenshots, tests).
    void flush();

private:
    void setPending(int view, bool pending);

    std::map<int, views::ResultView*> m_tabs;
    Run m_result;
    unsigned m_pending = ~0u;  // bit per view whose tab has not taken m_result (all before the first)
};

}  // namespace attnscope::app
