#pragma once
// Generate (Ctrl+G) beside Run: the open model continues the input text — greedy or seeded
// sampling, at most N new tokens, Esc stops it — its tokens appearing as they are written; then
// the window runs on the prompt and the written tokens together, every view shows the model's
// attention of the whole sequence, the written tokens marked, and the row the newest was written
// from (the token before it) selected: what the model looked at when it wrote it. While it writes,
// the shown layer's attention of the sequence so far follows the newest token (liveRun).

#include "gui/engine/metatypes.h"

#include <attnscope/generation.h>

#include <QObject>
#include <QVector>

#include <atomic>
#include <memory>

class QAction;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTimer;

namespace attnscope::engine {
struct ModelInfo;
}

namespace attnscope::app {

class EngineRunner;
class ModelController;
class RunSettingsPanel;

class GenerateController : public QObject {
    Q_OBJECT
public:
    GenerateController(EngineRunner* runner, RunSettingsPanel* inputs, ModelController* models, QObject* parent);

    /// The box under the model source: settings, Generate, and the text being written.
    QGroupBox* box() const { return m_box; }
    QAction* action() const { return m_action; }
    QPushButton* button() const { return m_button; }
    bool isGenerating() const { return m_cancel != nullptr; }
    /// Stops a generation (Esc): the tokens written so far are kept and shown.
    void cancel();
    /// The model that is open now (or none): Generate is offered for models that generate.
    void modelChanged(const engine::ModelInfo* info);
    /// After the run on the generated sequence is shown: the written tokens' indices (to mark)
    /// and the newest one (to select); empty when that run was not the generation's.
    QVector<int> takeWrittenTokens();

    /// Starts generating after the input text.
    void start();

Q_SIGNALS:
    void report(const QString& message);
    /// The written sequence is ready to run on (the window starts the run).
    void runRequested();
    void busyChanged();
    /// While writing, at most a few times a second: the shown layer's own attention of the sequence
    /// up to the position the newest token was written from, and the written tokens' positions in it.
    void liveRun(std::shared_ptr<const attnscope::engine::RunResult> run, const QVector<int>& written);

private:
    void buildBox();
    void uiAppend(quint64 job, const QString& text, const QString& looked, std::shared_ptr<const engine::RunResult> soFar);
    void emitLiveRun();
    void uiFinished(quint64 job, const engine::GenerateResult& result);
    void uiFailed(quint64 job, const QString& message, bool cancelled);
    void updateEnabled();

    EngineRunner* m_runner;
    RunSettingsPanel* m_inputs;
    ModelController* m_models;
    QGroupBox* m_box = nullptr;
    QSpinBox* m_maxTokens = nullptr;
    QDoubleSpinBox* m_temperature = nullptr;
    QSpinBox* m_topK = nullptr;
    QSpinBox* m_seed = nullptr;
    QPushButton* m_button = nullptr;
    QPlainTextEdit* m_written = nullptr;
    QLabel* m_note = nullptr;
    QLabel* m_looked = nullptr;  // what the newest token looked at
    QAction* m_action = nullptr;
    bool m_modelGenerates = false;
    quint64 m_job = 0;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QVector<int> m_writtenTokens;  // to mark once the run on the sequence is shown
    std::shared_ptr<const engine::RunResult> m_pendingLive;  // the newest token's run, not shown yet
    std::int64_t m_promptLength = 0;  // of the generation under way: its first token's run's length
    QTimer* m_liveTimer = nullptr;    // paces liveRun so that drawing never holds the writing back
};

}  // namespace attnscope::app
