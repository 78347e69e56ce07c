#pragma once
// The production backend: one attnscope::engine::Engine, created lazily on the engine thread so
// LibTorch's thread settings and state belong to that thread (CONVENTIONS.md §3).

#include "gui/engine/engine_backend.h"

#include <attnscope/engine.h>

#include <optional>

namespace attnscope::app {

class LocalEngineBackend final : public EngineBackend {
public:
    explicit LocalEngineBackend(engine::EngineOptions options = {});
    ~LocalEngineBackend() override;

    engine::Result<std::shared_ptr<const engine::RunResult>> run(const engine::RunRequest& request,
                                                                 const engine::ProgressFn& progress) override;
    std::vector<engine::VariantInfo> variants() override;
    engine::Result<engine::ModelInfo> openModel(const std::string& folder) override;
    engine::Result<std::shared_ptr<const engine::HeadAtlas>> analyzeModel(const engine::AtlasRequest& request,
                                                                           const engine::ProgressFn& progress) override;
    engine::Result<std::shared_ptr<const engine::ModelForward>> forwardModel(const engine::ModelInput& input,
                                                                           const engine::ProgressFn& progress) override;
    engine::Result<std::shared_ptr<const engine::ModelAttentionBands>> modelAttentionBands(
        const std::string& text, const engine::ProgressFn& progress) override;
    engine::Result<engine::GenerateResult> generate(const engine::GenerateRequest& request, const engine::GeneratedTokenFn& onToken,
                                                    const engine::ProgressFn& progress) override;
    engine::Result<std::shared_ptr<const engine::StarPass>> runStar(const engine::StarRequest& request,
                                                                   const engine::ProgressFn& progress) override;

private:
    /// Creates the engine on first use; the creation error is kept and returned on every call.
    engine::Result<engine::Engine*> etEngine();

    engine::EngineOptions m_options;
    std::unique_ptr<engine::Engine> m_engine;
    std::optional<engine::Error> m_createError;
};

}  // namespace attnscope::app
