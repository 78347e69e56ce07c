#pragma once
// The Cost tab's Transformer-XL evaluation-speed run: one attention length per step of an
// EngineTask on the engine thread (measureTransfoXlEvalSpeed, in a scratch engine so the open
// model stays), so the user's own runs go between lengths and Cancel stops within a window.

#include "views/eval_speed_panel.h"

#include <QObject>
#include <QString>
#include <QVector>

#include <memory>

namespace attnscope::app {

class EngineRunner;

class EvalSpeedJob : public QObject {
    Q_OBJECT
public:
    explicit EvalSpeedJob(EngineRunner* runner, QObject* parent = nullptr);
    ~EvalSpeedJob() override;

    /// Starts measuring `lengths` (cancelling a run in flight); empty lengths finish at once.
    void start(const QVector<int>& lengths);
    void cancel();
    bool isRunning() const { return m_running; }

Q_SIGNALS:
    void started(int total);
    void sampleMeasured(const attnscope::views::EvalSpeedSample& sample);
    void progressChanged(int done, int total, const QString& text);
    void finished(const QString& message, bool cancelled);

private:
    struct State;
    void uiSample(quint64 id, const views::EvalSpeedSample& sample, int done, int total);
    void uiFinished(quint64 id, const QString& message, bool cancelled);

    EngineRunner* m_runner = nullptr;
    std::shared_ptr<State> m_state;
    quint64 m_nextId = 0;
    bool m_running = false;
};

}  // namespace attnscope::app
