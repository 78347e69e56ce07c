#include "gui/engine/model_source.h"

#include "gui/engine/engine_runner.h"
#include "gui/engine/to_gui.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include <algorithm>

namespace attnscope::app {

/// What the engine thread knows: the folder its engine has open. Only tasks read or write it,
/// and tasks run one at a time on the engine thread.
struct ModelSource::EngineSide {
    std::string openFolder;
};

namespace {

constexpr qint64 kProgressIntervalMs = 50;  // as EngineWorker: the GUI queue is not flooded

}  // namespace

ModelSource::ModelSource(EngineRunner* runner, QObject* parent)
    : QObject(parent), m_runner(runner), m_engineSide(std::make_shared<EngineSide>()) {}

ModelSource::~ModelSource() {
    if (m_analysisCancel) m_analysisCancel->store(true);
}

quint64 ModelSource::open(const QString& folder) {
    Q_ASSERT(QThread::currentThread() == thread());
    const quint64 id = ++m_nextId;
    m_latestOpen = id;
    m_opening = true;
    m_runner->postTask([side = m_engineSide, self = QPointer<ModelSource>(this), id, folder](EngineBackend& backend) {
        const std::string path = folder.toStdString();
        auto opened = backend.openModel(path);
        if (opened) {
            side->openFolder = path;
            toGui([self, id, folder, info = opened.value()] {
                if (self) self->uiOpened(id, folder, info);
            });
        } else {
            // The engine drops its model before reading the new folder: open the previous one
            // again, so runs and analyses of the model still shown keep working.
            if (!side->openFolder.empty() && side->openFolder != path && !backend.openModel(side->openFolder))
                side->openFolder.clear();
            toGui([self, id, folder, message = QString::fromStdString(opened.error().message),
                   code = static_cast<int>(opened.error().code)] {
                if (self) self->uiOpenFailed(id, folder, message, code);
            });
        }
        return false;
    });
    return id;
}

quint64 ModelSource::analyze(engine::AtlasRequest request) {
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_analysisCancel) m_analysisCancel->store(true);
    const quint64 id = ++m_nextId;
    m_latestAnalysis = id;
    m_analyzing = true;
    m_analysisCancel = std::make_shared<std::atomic<bool>>(false);
    m_runner->postTask([side = m_engineSide, self = QPointer<ModelSource>(this), id, folder = m_folder.toStdString(),
                        cancelled = m_analysisCancel, request = std::move(request)](EngineBackend& backend) {
        const auto fail = [&](const QString& message, engine::ErrorCode code) {
            toGui([self, id, message, code = static_cast<int>(code)] {
                if (self) self->uiAtlasFailed(id, message, code);
            });
            return false;
        };
        if (cancelled->load()) return fail(tr("Cancelled"), engine::ErrorCode::Cancelled);
        if (folder.empty())
            return fail(tr("No model is open: open a model folder first."), engine::ErrorCode::InvalidArgument);
        // A model folder opened by a run (a ModelLayerSource) or a refused open may have replaced it.
        if (side->openFolder != folder) {
            auto reopened = backend.openModel(folder);
            if (!reopened) return fail(QString::fromStdString(reopened.error().message), reopened.error().code);
            side->openFolder = folder;
        }
        QElapsedTimer clock;
        clock.start();
        qint64 lastMs = -kProgressIntervalMs;
        std::string lastStage;
        const engine::ProgressFn progress = [&](const engine::Progress& p) {
            if (cancelled->load(std::memory_order_relaxed)) return false;
            const qint64 now = clock.elapsed();
            if (lastStage != p.stage || now - lastMs >= kProgressIntervalMs) {
                lastStage = p.stage;
                lastMs = now;
                const int permille =
                    p.total > 0 ? static_cast<int>(std::clamp<std::int64_t>(p.done * 1000 / p.total, 0, 1000)) : 0;
                toGui([self, id, permille, stage = QString::fromUtf8(p.stage)] {
                    if (self) self->uiProgress(id, permille, stage);
                });
            }
            return true;
        };
        auto atlas = backend.analyzeModel(request, progress);
        if (!atlas) return fail(QString::fromStdString(atlas.error().message), atlas.error().code);
        toGui([self, id, atlas = atlas.value()] {
            if (self) self->uiAtlas(id, atlas);
        });
        return false;
    });
    return id;
}

quint64 ModelSource::requestAttentionBands(const QString& folder, const QString& text) {
    Q_ASSERT(QThread::currentThread() == thread());
    const quint64 id = ++m_nextId;
    m_latestBands = id;
    m_runner->postTask([side = m_engineSide, self = QPointer<ModelSource>(this), id, folder = folder.toStdString(),
                        text = text.toStdString()](EngineBackend& backend) {
        const auto answer = [&](engine::Result<std::shared_ptr<const engine::ModelAttentionBands>> bands) {
            toGui([self, id, bands = std::move(bands)] {
                if (!self || id != self->m_latestBands) return;
                if (bands) Q_EMIT self->bandsReady(bands.value());
                else Q_EMIT self->bandsFailed(QString::fromStdString(bands.error().message));
            });
            return false;
        };
        if (side->openFolder != folder) {
            auto reopened = backend.openModel(folder);
            if (!reopened) return answer(reopened.error());
            side->openFolder = folder;
        }
        return answer(backend.modelAttentionBands(text, {}));
    });
    return id;
}

void ModelSource::postWithModel(ModelWork work) {
    Q_ASSERT(QThread::currentThread() == thread());
    m_runner->postTask([side = m_engineSide, folder = m_folder.toStdString(), work = std::move(work)](EngineBackend& backend) {
        if (folder.empty()) {
            const engine::Error none = engine::makeError(engine::ErrorCode::InvalidArgument, "no model is open: open a model first");
            work(nullptr, &none);
            return false;
        }
        if (side->openFolder != folder) {
            auto reopened = backend.openModel(folder);
            if (!reopened) {
                work(nullptr, &reopened.error());
                return false;
            }
            side->openFolder = folder;
        }
        work(&backend, nullptr);
        return false;
    });
}

void ModelSource::cancelAnalysis() {
    if (m_analyzing && m_analysisCancel) m_analysisCancel->store(true);
}

void ModelSource::uiOpened(quint64 id, const QString& folder, const engine::ModelInfo& info) {
    if (id != m_latestOpen) return;  // a newer open is on its way
    m_opening = false;
    m_model = info;
    m_folder = folder;
    m_atlas.reset();  // it described the previous model
    Q_EMIT modelOpened(info);
}

void ModelSource::uiOpenFailed(quint64 id, const QString& folder, const QString& message, int code) {
    if (id != m_latestOpen) return;
    m_opening = false;
    Q_EMIT modelOpenFailed(folder, message, code);
}

void ModelSource::uiProgress(quint64 id, int permille, const QString& stage) {
    if (id != m_latestAnalysis || !m_analyzing || m_analysisCancel->load()) return;
    Q_EMIT analysisProgress(permille, stage);
}

void ModelSource::uiAtlas(quint64 id, const std::shared_ptr<const engine::HeadAtlas>& atlas) {
    if (id != m_latestAnalysis) return;
    m_analyzing = false;
    // The user cancelled after the last unit of work: they asked for no result.
    if (m_analysisCancel->load()) {
        Q_EMIT analysisFailed(tr("Cancelled"), static_cast<int>(engine::ErrorCode::Cancelled));
        return;
    }
    m_atlas = atlas;
    Q_EMIT atlasReady(atlas);
}

void ModelSource::uiAtlasFailed(quint64 id, const QString& message, int code) {
    if (id != m_latestAnalysis) return;
    m_analyzing = false;
    if (m_analysisCancel->load()) code = static_cast<int>(engine::ErrorCode::Cancelled);
    Q_EMIT analysisFailed(message, code);
}

}  // namespace attnscope::app
