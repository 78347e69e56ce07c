#pragma once
// The Cost tab's Switch-versus-dense measurement: one token count per step of an EngineTask on
// the engine thread (measureSwitchFfnCost), so the user's own runs go between counts and Cancel
// stops within a pass.

#include <attnscope/switch_ffn_cost.h>

#include <QObject>
#include <QString>
#include <QVector>

#include <memory>

namespace attnscope::app {

class EngineRunner;

class SwitchFfnJob : public QObject {
    Q_OBJECT
public:
    explicit SwitchFfnJob(EngineRunner* runner, QObject* parent = nullptr);
    ~SwitchFfnJob() override;

    /// Starts measuring `tokens` (cancelling a run in flight); empty counts finish at once.
    void start(const QVector<int>& tokens, int experts, double capacityFactor);
    void cancel();
    bool isRunning() const { return m_running; }

Q_SIGNALS:
    void started(int total);
    void pointMeasured(const attnscope::engine::SwitchFfnCostPoint& point);
    void progressChanged(int done, int total, const QString& text);
    void finished(const QString& message, bool cancelled);

private:
    struct State;
    void uiPoint(quint64 id, const engine::SwitchFfnCostPoint& point, int done, int total);
    void uiFinished(quint64 id, const QString& message, bool cancelled);

    EngineRunner* m_runner = nullptr;
    std::shared_ptr<State> m_state;
    quint64 m_nextId = 0;
    bool m_running = false;
};

}  // namespace attnscope::app
