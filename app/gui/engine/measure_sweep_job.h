#pragma once
// A Cost-tab measurement over a list of sizes (attention lengths, token counts): one size per step
// of an EngineTask on the engine thread, so the user's own runs go between sizes and Cancel stops
// within one; a newer sweep supersedes the answers of an older one. EvalSpeedJob and SwitchFfnJob
// are this with their own measurement and sample signal.

#include <attnscope/result.h>

#include <QObject>
#include <QString>
#include <QVector>

#include <functional>
#include <memory>

namespace attnscope::app {

class EngineRunner;

class MeasureSweepJob : public QObject {
    Q_OBJECT
public:
    ~MeasureSweepJob() override;
    void cancel();
    bool isRunning() const { return m_running; }

Q_SIGNALS:
    void started(int total);
    void progressChanged(int done, int total, const QString& text);
    void finished(const QString& message, bool cancelled);

protected:
    /// How a sweep names its sizes: `size` with %1 ("Length %1", "%1 tokens"), `sizes` ("lengths",
    /// "token counts"), and what an empty list says.
    struct Words {
        QString size, sizes, nothing;
    };
    /// Hands one size's sample to the GUI (called there, for the latest sweep only).
    using Deliver = std::function<void()>;
    /// Measures one size on the engine thread, stopping soon after `keepGoing` turns false.
    using Measure = std::function<engine::Result<Deliver>(int size, const std::function<bool()>& keepGoing)>;

    MeasureSweepJob(EngineRunner* runner, Words words, QObject* parent);
    /// Starts measuring `sizes` (cancelling a sweep in flight); an empty list finishes at once.
    void startSweep(const QVector<int>& sizes, Measure measure);

private:
    struct State;
    void uiSample(quint64 id, const Deliver& deliver, int done, int total);
    void uiFinished(quint64 id, const QString& message, bool cancelled);

    EngineRunner* m_runner = nullptr;
    Words m_words;
    std::shared_ptr<State> m_state;
    quint64 m_nextId = 0;
    bool m_running = false;
};

}  // namespace attnscope::app
