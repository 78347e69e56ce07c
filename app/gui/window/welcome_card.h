#pragma once
// The card a person sees on the first start: what is on screen (the heads, the selected head's
// attention, the settings at the left) and three things to try, with the guided tour one click
// away. Dismissed once, it stays away (AppSettings::welcomeSeen).

#include <QFrame>

class QLabel;
class QPushButton;

namespace attnscope::app {

class WelcomeCard : public QFrame {
    Q_OBJECT
public:
    explicit WelcomeCard(QWidget* parent = nullptr);
    /// What the window shows: a model's own attention (its folder name) or random projections.
    void setShowing(const QString& modelName);
    QString text() const;
    QPushButton* tourButton() const { return m_tour; }
    QPushButton* closeButton() const { return m_close; }

Q_SIGNALS:
    /// The person asked for the guided tour (the card is closed).
    void tourRequested();
    /// The card was closed (by either button); it is not shown again.
    void dismissed();

private:
    QLabel* m_title = nullptr;
    QLabel* m_text = nullptr;
    QPushButton* m_tour = nullptr;
    QPushButton* m_close = nullptr;
};

}  // namespace attnscope::app
