#include "app/fake_backend.h"

#include <attnscope/coverage_settings.h>

#include <algorithm>
#include <chrono>

namespace attnscope::testing {

void FakeBackend::Control::release(std::uint64_t tag) {
    std::lock_guard<std::mutex> lock(mutex);
    released.insert(tag);
    changed.notify_all();
}

void FakeBackend::Control::releaseEverything() {
    std::lock_guard<std::mutex> lock(mutex);
    releaseAll = true;
    changed.notify_all();
}

bool FakeBackend::Control::hasStarted(std::uint64_t tag) {
    std::lock_guard<std::mutex> lock(mutex);
    return std::find(started.begin(), started.end(), tag) != started.end();
}

bool FakeBackend::Control::sawCancel(std::uint64_t tag) {
    std::lock_guard<std::mutex> lock(mutex);
    return cancelSeen.count(tag) > 0;
}

std::vector<std::uint64_t> FakeBackend::Control::startedTags() {
    std::lock_guard<std::mutex> lock(mutex);
    return started;
}

engine::Result<std::shared_ptr<const engine::RunResult>> FakeBackend::run(const engine::RunRequest& request,
                                                                          const engine::ProgressFn& progress) {
    const std::uint64_t tag = request.projection.seed;
    std::unique_lock<std::mutex> lock(m_control->mutex);
    m_control->started.push_back(tag);
    m_control->requests.push_back(request);
    m_control->changed.notify_all();
    std::int64_t step = 0;
    while (!m_control->releaseAll && m_control->released.count(tag) == 0) {
        // Poll the progress callback like the engine does between units of work.
        lock.unlock();
        const bool goOn = progress ? progress(engine::Progress{"fake", step++ % 100, 100}) : true;
        lock.lock();
        if (!goOn) {
            m_control->cancelSeen.insert(tag);
            if (!m_control->ignoreCancel)
                return engine::makeError(engine::ErrorCode::Cancelled, "cancelled by the progress callback");
        }
        m_control->changed.wait_for(lock, std::chrono::milliseconds(2));
    }
    if (const auto failure = m_control->failures.find(tag); failure != m_control->failures.end()) {
        const engine::Error error = failure->second;
        m_control->failures.erase(failure);  // once: a retry of the same tag succeeds
        return engine::makeError(error.code, error.message);
    }
    auto result = std::make_shared<engine::RunResult>();
    result->n = static_cast<std::int64_t>(tag);  // lets the test tell results apart
    for (const engine::VariantRequest& variant : request.variants) {
        result->results.emplace_back();
        result->results.back().variantId = variant.id;
    }
    return std::shared_ptr<const engine::RunResult>(std::move(result));
}

std::vector<engine::VariantInfo> FakeBackend::variants() {
    engine::VariantInfo info;
    info.id = "fake";
    info.name = "Fake";
    return {info};
}

engine::Result<engine::ModelInfo> FakeBackend::openModel(const std::string& folder) {
    std::lock_guard<std::mutex> lock(m_control->mutex);
    m_control->openCalls.push_back(folder);
    if (m_control->refusedFolders.count(folder)) {
        // As the engine: the current model is dropped before the new folder is read.
        m_control->openFolder.clear();
        return engine::makeError(engine::ErrorCode::InvalidInput,
                                 folder + "/pytorch_model.bin: a pickle; convert the checkpoint to safetensors");
    }
    m_control->openFolder = folder;
    engine::ModelInfo info;
    info.folder = folder;
    info.arch = "bert";
    info.layers = 2;
    info.heads = 3;
    info.headDim = 4;
    info.maxTokens = 16;
    return info;
}

engine::Result<std::shared_ptr<const engine::HeadAtlas>> FakeBackend::analyzeModel(const engine::AtlasRequest& request,
                                                                                   const engine::ProgressFn& progress) {
    std::unique_lock<std::mutex> lock(m_control->mutex);
    if (m_control->openFolder.empty())
        return engine::makeError(engine::ErrorCode::InvalidArgument, "no model is open (open a model folder first)");
    m_control->started.push_back(kAnalysisTag);
    m_control->changed.notify_all();
    std::int64_t step = 0;
    while (!m_control->releaseAll && m_control->released.count(kAnalysisTag) == 0) {
        lock.unlock();
        const bool goOn = progress ? progress(engine::Progress{"heads", step++ % 100, 100}) : true;
        lock.lock();
        if (!goOn) {
            m_control->cancelSeen.insert(kAnalysisTag);
            return engine::makeError(engine::ErrorCode::Cancelled, "cancelled");
        }
        m_control->changed.wait_for(lock, std::chrono::milliseconds(2));
    }
    auto atlas = std::make_shared<engine::HeadAtlas>();
    atlas->model.folder = m_control->openFolder;
    atlas->layers = 2;
    atlas->heads = 3;
    atlas->n = static_cast<std::int64_t>(request.text.size());
    // As the engine: the request's settings, or the catalog's fitted to n.
    atlas->settings = request.settings.empty() ? engine::coverageSettingsFor(atlas->n) : request.settings;
    atlas->settingNotes.assign(atlas->settings.size(), std::string());
    for (int l = 0; l < 2; ++l) {
        for (int h = 0; h < 3; ++h) {
            engine::HeadMetrics m;
            m.layer = l;
            m.head = h;
            m.entropy = l * 10 + h;
            atlas->metrics.push_back(m);
        }
    }
    return std::shared_ptr<const engine::HeadAtlas>(std::move(atlas));
}

}  // namespace attnscope::testing
