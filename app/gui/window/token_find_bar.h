#pragma once
// The bar of View ▸ Find Token (Ctrl+F), above the view tabs: a field, the number of tokens found,
// previous and next (Enter, Shift+Enter, F3) and close (Esc). The window does the finding.

#include <QWidget>

class QLabel;
class QLineEdit;

namespace attnscope::app {

class TokenFindBar : public QWidget {
    Q_OBJECT
public:
    explicit TokenFindBar(QWidget* parent = nullptr);

    /// Shows the bar with the field focused and its text selected.
    void open();
    QString text() const;
    QLineEdit* field() const { return m_field; }
    void setStatus(const QString& text);
    QString status() const;

Q_SIGNALS:
    void searchChanged(const QString& text);
    void nextRequested();
    void previousRequested();
    /// Esc or the close button: the window clears the highlights.
    void closed();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QLineEdit* m_field = nullptr;
    QLabel* m_status = nullptr;
};

}  // namespace attnscope::app
