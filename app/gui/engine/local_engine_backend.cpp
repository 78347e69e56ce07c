#include "gui/engine/local_engine_backend.h"

#include <QLoggingCategory>
#include <QString>

namespace attnscope::app {

Q_LOGGING_CATEGORY(lcEngine, "attnscope.engine")

LocalEngineBackend::LocalEngineBackend(engine::EngineOptions options) : m_options(std::move(options)) {
    if (!m_options.log) {
        // QLoggingCategory is thread-safe, so the engine thread may log through it directly.
        m_options.log = [](engine::LogLevel level, const std::string& message) {
            const QString text = QString::fromStdString(message);
            switch (level) {
                case engine::LogLevel::Debug:
                    qCDebug(lcEngine).noquote() << text;
                    break;
                case engine::LogLevel::Info:
                    qCInfo(lcEngine).noquote() << text;
                    break;
                case engine::LogLevel::Warning:
                    qCWarning(lcEngine).noquote() << text;
                    break;
                case engine::LogLevel::Error:
                    qCCritical(lcEngine).noquote() << text;
                    break;
            }
        };
    }
}

LocalEngineBackend::~LocalEngineBackend() = default;

engine::Result<engine::Engine*> LocalEngineBackend::etEngine() {
    if (m_engine) return m_engine.get();
    if (m_createError) return *m_createError;
    auto created = engine::Engine::create(m_options);
    if (!created) {
        m_createError = created.error();
        return created.error();
    }
    m_engine = std::move(created.value());
    return m_engine.get();
}

engine::Result<std::shared_ptr<const engine::RunResult>> LocalEngineBackend::run(const engine::RunRequest& request,
                                                                                 const engine::ProgressFn& progress) {
    auto eng = etEngine();
    if (!eng) return eng.error();
    return eng.value()->run(request, progress);
}

std::vector<engine::VariantInfo> LocalEngineBackend::variants() {
    auto eng = etEngine();
    if (!eng) return {};
    return eng.value()->variants();
}

engine::Result<engine::ModelInfo> LocalEngineBackend::openModel(const std::string& folder) {
    auto eng = etEngine();
    if (!eng) return eng.error();
    return eng.value()->openModel(folder);
}

engine::Result<engine::GenerateResult> LocalEngineBackend::generate(const engine::GenerateRequest& request,
                                                                   const engine::GeneratedTokenFn& onToken,
                                                                   const engine::ProgressFn& progress) {
    auto eng = etEngine();
    if (!eng) return eng.error();
    return eng.value()->generate(request, onToken, progress);
}

engine::Result<std::shared_ptr<const engine::ModelForward>> LocalEngineBackend::forwardModel(const engine::ModelInput& input,
                                                                                           const engine::ProgressFn& progress) {
    auto eng = etEngine();
    if (!eng) return eng.error();
    return eng.value()->forwardModel(input, progress);
}

engine::Result<std::shared_ptr<const engine::HeadAtlas>> LocalEngineBackend::analyzeModel(
    const engine::AtlasRequest& request, const engine::ProgressFn& progress) {
    auto eng = etEngine();
    if (!eng) return eng.error();
    return eng.value()->analyzeModel(request, progress);
}

engine::Result<std::shared_ptr<const engine::ModelAttentionBands>> LocalEngineBackend::modelAttentionBands(
    const std::string& text, const engine::ProgressFn& progress) {
    auto eng = etEngine();
    if (!eng) return eng.error();
    return eng.value()->modelAttentionBands(text, progress);
}

engine::Result<std::shared_ptr<const engine::StarPass>> LocalEngineBackend::runStar(const engine::StarRequest& request,
                                                                                   const engine::ProgressFn& progress) {
    auto eng = etEngine();
    if (!eng) return eng.error();
    return eng.value()->runStar(request, progress);
}

}  // namespace attnscope::app
