#pragma once
// View ▸ Find Token (Ctrl+F): the tokens whose text contains what is typed in the find bar are
// marked in every view that draws tokens, and Enter / Shift+Enter / F3 step through them. The
// window says how the views mark them and how a view goes to one (Views).

#include <attnscope/types.h>

#include <QObject>
#include <QVector>

#include <functional>

class QMenu;
class QWidget;

namespace attnscope::app {

class TokenFindBar;

class TokenFinder : public QObject {
    Q_OBJECT
public:
    struct Views {
        /// The result the views show (null before the first run).
        std::function<const engine::RunResult*()> shown;
        /// Marks these tokens in every view (empty clears the marks).
        std::function<void(const QVector<int>& tokens)> mark;
        /// The shown view goes to `token` (its cell cursor, its link panel).
        std::function<void(int token)> goTo;
        /// Where the keyboard goes when the bar closes.
        std::function<QWidget*()> focusAfterClose;
    };

    TokenFinder(TokenFindBar* bar, Views views, QObject* parent);

    /// Find Token… (Ctrl+F) in `viewMenu`.
    void addAction(QMenu* viewMenu);
    /// A new result is shown: its tokens are searched again while the bar is open.
    void resultChanged();
    const QVector<int>& found() const { return m_found; }

private:
    void search();
    void step(int direction);

    TokenFindBar* m_bar = nullptr;
    Views m_views;
    QVector<int> m_found;  // in token order
    int m_index = -1;      // the one gone to last
};

}  // namespace attnscope::app
