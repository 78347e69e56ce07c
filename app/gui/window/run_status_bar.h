#pragma once
// The window's status bar: the latest message on one elided line (whole on hover, every one kept
// in the Messages panel), the Messages button, the run's progress (shown only once a run has
// taken a while), the run's time and peak memory, and the "out of date" mark.

#include <QObject>
#include <QString>

#include <cstdint>
#include <functional>

class QLabel;
class QProgressBar;
class QStatusBar;
class QTimer;
class QToolButton;

namespace attnscope::engine {
struct RunResult;
}

namespace attnscope::views {
class ElidedLabel;
class NoticesPanel;
}

namespace attnscope::app {

class RunStatusBar : public QObject {
    Q_OBJECT
public:
    /// A run shows its progress after this long (FORMATS.md §5: only runs that take a while).
    static constexpr int kProgressDelayMs = 500;

    /// Fills `bar`; `notices` keeps every message; `running` says whether a run is still going
    /// when the progress delay ends.
    RunStatusBar(QStatusBar* bar, views::NoticesPanel* notices, std::function<bool()> running, QObject* parent);

    /// The message line (and the Messages panel); `details` go to its tooltip and the panel.
    void setMessage(const QString& text, const QString& details = {});
    QString message() const;

    /// A run started: its progress shows if it lasts past kProgressDelayMs.
    void runStarted();
    void runEnded();
    void setProgress(int permille, const QString& stage);
    /// The shown run's attention time and peak engine memory.
    void setCounters(double seconds, std::uint64_t peakBytes);

    /// The shown run: its tokens and heads (with its warnings) as the message, its counters.
    void showResult(const engine::RunResult& result);

    void setOutOfDate(bool outOfDate);
    bool outOfDate() const;

    /// "12.5 ms", "340 µs", "1.25 s".
    static QString formatSeconds(double seconds);

private:
    views::ElidedLabel* m_message = nullptr;
    views::NoticesPanel* m_notices = nullptr;
    QToolButton* m_noticesButton = nullptr;
    QProgressBar* m_progress = nullptr;
    QTimer* m_progressDelay = nullptr;
    QLabel* m_timeLabel = nullptr;
    QLabel* m_memoryLabel = nullptr;
    QLabel* m_outOfDate = nullptr;
};

}  // namespace attnscope::app
