#pragma once
// A trained checkpoint as the Q/K/V source: opening its folder and analysing its heads (the head
// atlas) run on the engine thread through EngineRunner::postTask, never on the GUI thread
// (CONVENTIONS.md §3). The last model that opened stays current: a folder the engine refuses
// leaves both this object and the engine's current model as they were.

#include <attnscope/head_atlas.h>
#include <attnscope/receptive_field.h>
#include <attnscope/model.h>

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace attnscope::app {

class EngineBackend;
class EngineRunner;

class ModelSource : public QObject {
    Q_OBJECT
public:
    /// `runner` must outlive this object.
    explicit ModelSource(EngineRunner* runner, QObject* parent = nullptr);
    /// Cancels an analysis in flight; answers still queued are dropped.
    ~ModelSource() override;

    /// Queues opening `folder` and returns the request id; answered once by modelOpened or
    /// modelOpenFailed. A newer open supersedes an older one's answer.
    quint64 open(const QString& folder);
    bool isOpening() const { return m_opening; }
    /// The model that opened last; nullopt before the first success.
    const std::optional<engine::ModelInfo>& model() const { return m_model; }
    /// Its folder, as given to open(); empty when no model is open.
    QString folder() const { return m_folder; }

    /// Queues the atlas of the current model and cancels one in flight. Answered once by
    /// atlasReady or analysisFailed (ErrorCode::Cancelled after cancelAnalysis()).
    quint64 analyze(engine::AtlasRequest request);
    void cancelAnalysis();
    bool isAnalyzing() const { return m_analyzing; }
    /// The last atlas computed for the current model; null before the first one.
    const std::shared_ptr<const engine::HeadAtlas>& atlas() const { return m_atlas; }

    /// Queues every layer's attention of the Transformer-XL model in `folder` on `text` (for the
    /// receptive field); answered by bandsReady or bandsFailed. A newer request supersedes.
    quint64 requestAttentionBands(const QString& folder, const QString& text);

    /// Work on the engine thread with this source's model open in the engine (opened again when a
    /// run or a refused open replaced it). `work` gets the backend, or the error opening gave
    /// (also when no model is open); it reports back itself (toGui).
    using ModelWork = std::function<void(EngineBackend* backend, const engine::Error* error)>;
    void postWithModel(ModelWork work);

Q_SIGNALS:
    void modelOpened(const attnscope::engine::ModelInfo& info);
    /// `code` is an attnscope::engine::ErrorCode; `message` names the file and the rule broken.
    void modelOpenFailed(const QString& folder, const QString& message, int code);
    void analysisProgress(int permille, const QString& stage);
    void atlasReady(const std::shared_ptr<const attnscope::engine::HeadAtlas>& atlas);
    void analysisFailed(const QString& message, int code);
    void bandsReady(const std::shared_ptr<const attnscope::engine::ModelAttentionBands>& bands);
    void bandsFailed(const QString& message);

private:
    struct EngineSide;
    void uiOpened(quint64 id, const QString& folder, const engine::ModelInfo& info);
    void uiOpenFailed(quint64 id, const QString& folder, const QString& message, int code);
    void uiProgress(quint64 id, int permille, const QString& stage);
    void uiAtlas(quint64 id, const std::shared_ptr<const engine::HeadAtlas>& atlas);
    void uiAtlasFailed(quint64 id, const QString& message, int code);

    EngineRunner* m_runner = nullptr;
    std::shared_ptr<EngineSide> m_engineSide;  // touched by tasks on the engine thread only
    quint64 m_nextId = 0;
    quint64 m_latestOpen = 0;
    quint64 m_latestAnalysis = 0;
    quint64 m_latestBands = 0;
    bool m_opening = false;
    bool m_analyzing = false;
    std::shared_ptr<std::atomic<bool>> m_analysisCancel;
    std::optional<engine::ModelInfo> m_model;
    QString m_folder;
    std::shared_ptr<const engine::HeadAtlas> m_atlas;
};

}  // namespace attnscope::app
