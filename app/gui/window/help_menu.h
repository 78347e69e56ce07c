#pragma once
// The Help menu and what it opens: "What am I looking at?" (F1), a panel beside the views that
// follows the shown tab and the chosen variant; the guided tour's panel; About.

#include <QObject>

class QMainWindow;
class QTabWidget;

namespace attnscope::views {
class HelpPanel;
class ParamForm;
}  // namespace attnscope::views

namespace attnscope::app {

class TourPanel;

class HelpMenu : public QObject {
    Q_OBJECT
public:
    /// Adds the menu and the two panels (hidden) to `window`; the help follows `tabs` and the
    /// variant of `variantForm`.
    HelpMenu(QMainWindow* window, QTabWidget* tabs, views::ParamForm* variantForm);

    views::HelpPanel* panel() const { return m_help; }
    TourPanel* tour() const { return m_tour; }

Q_SIGNALS:
    /// The tour shows step `index` of views::guidedTour(): the window sets what it talks about.
    void tourStepShown(int index);

private:
    void update();

    QMainWindow* m_window = nullptr;
    QTabWidget* m_tabs = nullptr;
    views::ParamForm* m_variantForm = nullptr;
    views::HelpPanel* m_help = nullptr;
    TourPanel* m_tour = nullptr;
};

}  // namespace attnscope::app
