#pragma once
// Help ▸ Guided Tour's panel (views/help/guided_tour.h): the step's title and text, Back, Next and
// "3 of 7". The window applies each step (tab, variant, compared variants) when it is shown.

#include <QDockWidget>

class QLabel;
class QPushButton;

namespace attnscope::app {

class TourPanel : public QDockWidget {
    Q_OBJECT
public:
    explicit TourPanel(QWidget* parent = nullptr);

    /// Shows step `index` (clamped) and emits stepShown.
    void showStep(int index);
    int step() const { return m_step; }
    int stepCount() const;
    QString stepTitle() const;
    QPushButton* nextButton() const { return m_next; }
    QPushButton* backButton() const { return m_back; }

Q_SIGNALS:
    /// The window sets up what the step talks about.
    void stepShown(int index);
    /// The tour was finished or closed: the window gives the person's own settings back.
    void ended();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    QLabel* m_title = nullptr;
    QLabel* m_text = nullptr;
    QLabel* m_counter = nullptr;
    QPushButton* m_back = nullptr;
    QPushButton* m_next = nullptr;
    int m_step = 0;
};

}  // namespace attnscope::app
