#pragma once
// A backend that blocks each run on a latch until the test releases it, so supersede, cancel and
// stale-result handling are tested deterministically without LibTorch. Runs are identified by
// their request's projection seed ("tag").

#include "gui/engine/engine_backend.h"

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace attnscope::testing {

class FakeBackend final : public app::EngineBackend {
public:
    /// Shared between the test (GUI thread) and the backend (engine thread).
    struct Control {
        std::mutex mutex;
        std::condition_variable changed;
        std::vector<std::uint64_t> started;  ///< tags, in the order their runs started
        std::set<std::uint64_t> released;
        std::set<std::uint64_t> cancelSeen;  ///< tags whose progress callback returned false
        bool releaseAll = false;
        /// When true a run keeps waiting after a cancel and then returns a result, like an engine
        /// that finishes its last unit of work: the runner must drop or convert that result.
        bool ignoreCancel = false;
        /// openModel refuses these folders (as the engine refuses a pickle) and opens any other.
        std::set<std::string> refusedFolders;
        std::vector<std::string> openCalls;  ///< every openModel folder, in call order
        std::string openFolder;              ///< the backend's current model, "" for none
        /// Every run's request, in the order they started.
        std::vector<engine::RunRequest> requests;
        /// The next released run with this tag returns the error instead of a result.
        std::map<std::uint64_t, engine::Error> failures;

        void release(std::uint64_t tag);
        void releaseEverything();
        bool hasStarted(std::uint64_t tag);
        bool sawCancel(std::uint64_t tag);
        std::vector<std::uint64_t> startedTags();
    };

    explicit FakeBackend(std::shared_ptr<Control> control) : m_control(std::move(control)) {}

    engine::Result<std::shared_ptr<const engine::RunResult>> run(const engine::RunRequest& request,
                                                                 const engine::ProgressFn& progress) override;
    std::vector<engine::VariantInfo> variants() override;
    /// The result holds one entry per requested variant, its variantId set, n = the tag.
    /// A 2-layer, 3-head "bert" unless the folder is refused.
    engine::Result<engine::ModelInfo> openModel(const std::string& folder) override;
    /// Blocks like run() on the tag kAnalysisTag; the atlas's entropy of (layer, head) is
    /// layer * 10 + head.
    engine::Result<std::shared_ptr<const engine::HeadAtlas>> analyzeModel(const engine::AtlasRequest& request,
                                                                           const engine::ProgressFn& progress) override;
    static constexpr std::uint64_t kAnalysisTag = 9999;

private:
    std::shared_ptr<Control> m_control;
};

}  // namespace attnscope::testing
