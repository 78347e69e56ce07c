#pragma once
// The window's messages (View ▸ Messages, or the status bar's "Messages" button): every warning,
// error and notice the status bar showed, whole and wrapped, newest last, with the time it came —
// the status bar has room for one line of the latest only.

#include <QDockWidget>
#include <QStringList>

class QListWidget;

namespace attnscope::views {

class NoticesPanel : public QDockWidget {
    Q_OBJECT
public:
    static constexpr int kMaxMessages = 500;

    explicit NoticesPanel(QWidget* parent = nullptr);

    /// Appends a message (a repeat of the last one only counts it again); `details`, when given,
    /// is its tooltip. Empty text is ignored.
    void add(const QString& text, const QString& details = {});
    void clear();
    int count() const;
    /// The messages as listed, e.g. "12:04:31  bigbird: padded 77 tokens to 80 …".
    QStringList messages() const;

Q_SIGNALS:
    void countChanged(int count);

private:
    QListWidget* m_list = nullptr;
    QString m_last;
    int m_repeats = 1;
};

}  // namespace attnscope::views
