#pragma once
// A Cost-tab measurement over a list of steps (attention lengths, token counts, (variant, n)
// pairs): one step per step of an EngineTask on the engine thread, so the user's own runs go between
// steps and Cancel stops within one; a newer sweep supersedes the answers of an older one.
// ScalingJob, EvalSpeedJob and SwitchFfnJob are this with their own measurement and sample signal.

#include <attnscope/result.h>

#include <QObject>
#include <QString>
#include <QVector>

#include <functional>
#include <memory>

namespace attnscope::app {

class EngineBackend;
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
    /// How a sweep names its steps: `size` with %1 ("Length %1", "%1 tokens"), `sizes` ("lengths",
    /// "token counts"), what an empty list says, and a cancelled sweep ("Cancelled." when empty).
    struct Words {
        QString size, sizes, nothing, cancelled;
    };
    /// Hands one step's sample to the GUI (called there, for the latest sweep only).
    using Deliver = std::function<void()>;
    /// Measures one step on the engine thread (its engine at hand), stopping soon after `keepGoing`
    /// turns false.
    using Measure = std::function<engine::Result<Deliver>(EngineBackend& backend, int step, const std::function<bool()>& keepGoing)>;
    /// A step in words ("Longformer, n = 512"); none: Words::size with the step.
    using Describe = std::function<QString(int step)>;

    MeasureSweepJob(EngineRunner* runner, Words words, QObject* parent);
    /// Starts measuring `steps` (cancelling a sweep in flight); an empty list finishes at once.
    void startSweep(const QVector<int>& steps, Measure measure, Describe describe = {});

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
