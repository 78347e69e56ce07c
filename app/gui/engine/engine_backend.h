#pragma once
// What EngineRunner needs from an engine. Production wraps attnscope::engine::Engine
// (LocalEngineBackend); tests use a fake that blocks on a latch, so supersede and cancel are
// tested without LibTorch (CONVENTIONS.md §2).

#include <attnscope/generation.h>
#include <attnscope/head_atlas.h>
#include <attnscope/model.h>
#include <attnscope/progress.h>
#include <attnscope/receptive_field.h>
#include <attnscope/star_transformer.h>
#include <attnscope/result.h>
#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnscope::app {

/// Every method is called on the engine thread only, one call at a time. The backend is created
/// on the GUI thread but must not touch engine state before its first call.
class EngineBackend {
public:
    virtual ~EngineBackend() = default;

    /// Runs a request; stops with ErrorCode::Cancelled soon after `progress` returns false.
    virtual engine::Result<std::shared_ptr<const engine::RunResult>> run(const engine::RunRequest& request,
                                                                         const engine::ProgressFn& progress) = 0;
    /// The registered variants with their parameter schemas; empty when the engine failed to start.
    virtual std::vector<engine::VariantInfo> variants() = 0;

    /// Opens a model folder and makes it the current model (Engine::openModel). Backends without
    /// checkpoints (test fakes of runs only) keep this default, which refuses.
    virtual engine::Result<engine::ModelInfo> openModel(const std::string& folder) {
        return engine::makeError(engine::ErrorCode::Unsupported, "this backend cannot open models (" + folder + ")");
    }
    /// The head atlas of the current model (Engine::analyzeModel); cancellable like run().
    virtual engine::Result<std::shared_ptr<const engine::HeadAtlas>> analyzeModel(const engine::AtlasRequest& request,
                                                                                   const engine::ProgressFn& progress) {
        (void)request;
        (void)progress;
        return engine::makeError(engine::ErrorCode::Unsupported, "this backend cannot analyse models");
    }
    /// One forward pass of the current model (Engine::forwardModel): the context search's index
    /// and the vectors it searches with.
    virtual engine::Result<std::shared_ptr<const engine::ModelForward>> forwardModel(const engine::ModelInput& input,
                                                                                   const engine::ProgressFn& progress) {
        (void)input;
        (void)progress;
        return engine::makeError(engine::ErrorCode::Unsupported, "this backend cannot run models");
    }
    /// Every layer's attention of the current Transformer-XL model on `text`
    /// (Engine::modelAttentionBands).
    virtual engine::Result<std::shared_ptr<const engine::ModelAttentionBands>> modelAttentionBands(
        const std::string& text, const engine::ProgressFn& progress) {
        (void)text;
        (void)progress;
        return engine::makeError(engine::ErrorCode::Unsupported, "this backend cannot run models");
    }
    /// Text from the current model after a prompt (Engine::generate).
    virtual engine::Result<engine::GenerateResult> generate(const engine::GenerateRequest& request, const engine::GeneratedTokenFn& onToken,
                                                            const engine::ProgressFn& progress) {
        (void)request;
        (void)onToken;
        (void)progress;
        return engine::makeError(engine::ErrorCode::Unsupported, "this backend cannot generate");
    }
    /// The Star-Transformer's cycles (Engine::runStar).
    virtual engine::Result<std::shared_ptr<const engine::StarPass>> runStar(const engine::StarRequest& request,
                                                                           const engine::ProgressFn& progress) {
        (void)request;
        (void)progress;
        return engine::makeError(engine::ErrorCode::Unsupported, "this backend cannot run the Star-Transformer");
    }
};

/// A unit of background work other than a run (the scaling sweep): called on the engine thread
/// with the backend; returns true to be called again, queued behind whatever was posted meanwhile,
/// so the user's runs go between its steps instead of waiting for the whole sweep.
using EngineTask = std::function<bool(EngineBackend& backend)>;

}  // namespace attnscope::app
