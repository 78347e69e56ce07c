// The engine's public API: the one place where exceptions become Error values.

#include "base/runtime/buffer_pool.h"
#include "io/families/roberta/roberta.h"
#include "io/families/star_transformer/star_transformer.h"
#include "io/families/transfo_xl/transfo_xl.h"
#include "torch/tensors/api_guard.h"
#include "attention/run/request_checks.h"
#include "base/kernels/blas_gemm.h"
#include "base/runtime/run_context.h"
#include "base/runtime/worker_threads.h"
#include "attention/run/plan_variants.h"
#include "attention/run/planned_run.h"
#include "torch/atlas/head_atlas.h"
#include "torch/model/model_pass_bytes.h"
#include "torch/model/model_session.h"
#include "torch/train/trainer.h"
#include "torch/train/star_trainer.h"
#include "torch/train/transfo_xl_trainer.h"
#include "io/image/image_tokens.h"
#include "torch/projections/image_states.h"
#include "torch/projections/random_projections.h"
#include "attention/variants/variant.h"
#include "attention/weights/kept_state.h"

#include <attnscope/result_roles.h>

#include <attnscope/engine.h>
#include <attnscope/tokenize.h>

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

namespace attnscope::engine {

struct Engine::Impl {
    EngineOptions options;
    int threads = 1;
    std::uint64_t budget = 0;
    std::vector<std::unique_ptr<Variant>> variants;
    BufferPool pool;
    /// The result returned by the last run. Created non-const by the engine; handed out as
    /// shared_ptr<const>. When no caller holds it any more (use_count() == 1) the next run moves
    /// its vectors (diagnostics, statistics, row status) into the pool, so that the next run writes
    /// them into memory that is already mapped (no page faults). A held result is never touched.
    std::shared_ptr<RunResult> last;
    std::unique_ptr<ModelSession> model;

    Result<void> planVariants(const RunRequest& request, RunPlan& plan, RunResult& run);
    std::optional<GridShape> imageGridOf(const RunRequest& request) const;
    Result<void> planInput(const RunRequest& request, const ProgressFn& progress, RunPlan& plan, RunResult& run);
    Result<void> checkAtlasBudget(const ModelSession::Pass& pass, const std::vector<ResolvedSetting>& settings) const;

    void recycleLast() {
        if (!last) return;
        if (last.use_count() == 1) {
            for (auto& r : last->results) {
                // (the weights hold copies of what they read, or share Q and K: never pooled storage)
                r.weights.reset();
                r.extraPatterns.clear();
                for (auto& [name, t] : r.diagnostics) recycleTensor(t);
                for (auto& [name, t] : r.stats) recycleTensor(t);
                recycleTensor(r.rowStatus);
            }
        }
        last.reset();  // also drops the result's references to pooled output/weight buffers
    }
    /// Makes `folder` the open model, reusing it (and its cached pass) when it already is.
    Result<void> ensureModel(const std::string& folder) {
        if (model && model->info().folder == folder) return {};
        auto opened = ModelSession::open(folder, [this](const std::string& id) { return find(id); }, budget);
        if (!opened) return opened.error();
        model = std::move(opened.value());
        return {};
    }
    void recycleTensor(PlainTensor& t) {
        pool.give(std::move(t.f32));
        pool.give(std::move(t.i64));
        pool.give(std::move(t.i32));
        pool.give(std::move(t.u8));
    }

    const Variant* find(const std::string& id) const {
        for (const auto& v : variants)
            if (v->info().id == id) return v.get();
        return nullptr;
    }
    std::string variantList() const {
        std::string out;
        for (const auto& v : variants) out += (out.empty() ? "" : ", ") + v->info().id;
        return out;
    }
    void log(LogLevel level, const std::string& message) const {
        if (options.log) options.log(level, message);
    }
};

Engine::Engine() : m_impl(std::make_unique<Impl>()) {}
Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::create(const EngineOptions& options) {
    if (options.threads < 0 || options.threads > 1024)
        return makeError(ErrorCode::InvalidArgument, "threads must be in [0, 1024], got " + std::to_string(options.threads));
    try {
        std::unique_ptr<Engine> engine(new Engine());
        auto& impl = *engine->m_impl;
        impl.options = options;
        impl.threads = options.threads > 0 ? options.threads
                                           : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        // LibTorch's intra-op count defaults to 1 thread on this platform unless OMP_NUM_THREADS
        // says otherwise (the launchers set it). Set it only when it differs: at::set_num_threads
        // also starts caffe2's pthreadpool, threads nothing here uses (app/common/omp_wait_policy.h).
        if (at::get_num_threads() != impl.threads) at::set_num_threads(impl.threads);
        setKernelThreads(impl.threads);
        setBlasThreads(impl.threads);
        impl.budget = memoryBudgetOr(options.memoryBudgetBytes);
        impl.variants = makeAllVariants();
        impl.log(LogLevel::Info, "engine: " + std::to_string(impl.threads) + " threads, memory budget " +
                                     std::to_string(impl.budget) + " bytes, " +
                                     std::to_string(impl.variants.size()) + " variants");
        return engine;
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("engine start failed: ") + e.what());
    }
}

std::vector<VariantInfo> Engine::variants() const {
    std::vector<VariantInfo> out;
    for (const auto& v : m_impl->variants) out.push_back(v->info());
    return out;
}

const VariantInfo* Engine::findVariant(const std::string& id) const {
    const Variant* v = m_impl->find(id);
    return v ? &v->info() : nullptr;
}

std::uint64_t Engine::memoryBudgetBytes() const { return m_impl->budget; }
int Engine::threads() const { return m_impl->threads; }

Result<ModelInfo> Engine::openModel(const std::string& folder) {
    try {
        // Opening again re-reads the folder, so edits on disk are picked up.
        m_impl->model.reset();
        auto ok = m_impl->ensureModel(folder);
        if (!ok) return ok.error();
        return m_impl->model->info();
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("opening the model failed: ") + e.what());
    }
}

const ModelInfo* Engine::currentModel() const { return m_impl->model ? &m_impl->model->info() : nullptr; }

Result<std::shared_ptr<const ModelForward>> Engine::forwardModel(const ModelInput& input, const ProgressFn& progress) {
    if (!m_impl->model) return makeError(ErrorCode::InvalidArgument, "no model is open (open a model folder first)");
    return guarded("out of memory running the model: try a shorter input", [&]() -> Result<std::shared_ptr<const ModelForward>> {
        c10::InferenceMode inferenceGuard;
        return m_impl->model->forward(input, progress);
    });
}

Result<GenerateResult> Engine::generate(const GenerateRequest& request, const GeneratedTokenFn& onToken, const ProgressFn& progress) {
    if (!m_impl->model) return makeError(ErrorCode::InvalidArgument, "no model is open (open a model first)");
    return guarded("out of memory generating: try a shorter prompt or fewer tokens", [&]() -> Result<GenerateResult> {
        c10::InferenceMode inferenceGuard;
        return m_impl->model->generate(request, onToken, progress);
    });
}

Result<std::shared_ptr<const HeadAtlas>> Engine::analyzeModel(const AtlasRequest& request, const ProgressFn& progress) {
    auto& impl = *m_impl;
    if (!impl.model) return makeError(ErrorCode::InvalidArgument, "no model is open (open a model folder first)");
    return guarded("out of memory analysing the model: try a shorter input", [&]() -> Result<std::shared_ptr<const HeadAtlas>> {
        c10::InferenceMode inferenceGuard;
        const auto started = std::chrono::steady_clock::now();
        auto atlas = std::make_shared<HeadAtlas>();
        atlas->model = impl.model->info();
        // The user's settings are checked before the model runs; the defaults are fitted to the
        // input's length, known only after the pass.
        std::vector<ResolvedSetting> resolved;
        auto resolve = [&]() -> Result<void> {
            resolved.clear();
            for (auto& setting : atlas->settings) {
                const Variant* v = impl.find(setting.variantId);
                if (!v)
                    return makeError(ErrorCode::NotFound, "unknown variant '" + setting.variantId +
                                                              "' in a coverage setting (available: " + impl.variantList() + ")");
                ParamValues given = setting.params;
                // Coverage compares like with like: a bidirectional head against the bidirectional
                // form of the pattern, a causal (GPT-2) head against the causal form.
                if (v->info().findParam("causal") && !given.count("causal")) given["causal"] = atlas->model.causal;
                auto params = resolveParams(v->info(), given);
                if (!params) return params.error();
                if (setting.label.empty()) {
                    setting.label = setting.variantId;
                    for (const auto& [name, value] : setting.params) setting.label += " " + name + "=" + formatParamValue(value);
                }
                resolved.push_back(ResolvedSetting{v, std::move(params.value())});
            }
            return {};
        };
        atlas->settings = request.settings;
        if (auto ok = resolve(); !ok) return ok.error();
        ModelInput input;
        input.text = request.text;
        input.ids = request.ids;
        input.image = request.image;
        input.keepAttention = true;
        const ModelSession::Pass& pass = impl.model->run(input, progress);
        atlas->input = pass.tokens;
        atlas->notices = pass.notices;
        if (request.settings.empty()) {
            atlas->settings = coverageSettingsFor(static_cast<std::int64_t>(pass.tokens.tokens.size()));
            if (auto ok = resolve(); !ok) return ok.error();
        }
        if (auto ok = impl.checkAtlasBudget(pass, resolved); !ok) return ok.error();
        computeHeadAtlas(pass, resolved, request.rollout, impl.pool, progress, *atlas);
        if (pass.tokens.image) {
            const ImageGrid& grid = *pass.tokens.image;
            atlas->image = imageAttentionViews(impl.model->lastPassAttention(), grid.prefix, grid.cells(), request.imageOptions,
                                               [&](std::int64_t done, std::int64_t total) {
                                                   return !progress || progress(Progress{"flow", done, total});
                                               });
            if (!atlas->image->flow.empty())
                atlas->notices.push_back("image: the attention flow from every patch to token 0 is computed (image.flow)");
        }
        for (std::size_t s = 0; s < atlas->settingNotes.size(); ++s) {
            if (!atlas->settingNotes[s].empty())
                atlas->notices.push_back(atlas->settings[s].label + ": not applicable: " + atlas->settingNotes[s]);
        }
        atlas->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return std::shared_ptr<const HeadAtlas>(std::move(atlas));
    });
}

Result<TrainReport> Engine::train(const TrainOptions& options, const std::function<void(const TrainLogEntry&)>& onLog,
                                  const ProgressFn& progress) {
    auto& impl = *m_impl;
    return guarded("out of memory training: try a smaller model, batch or length", [&]() -> Result<TrainReport> {
        if (options.arch == families::transfo_xl::kModelType) return trainTransfoXl(options, onLog, progress, impl.budget);
        if (options.arch == families::star_transformer::kModelType) return trainStarTransformer(options, onLog, progress, impl.budget);
        if (options.arch != families::roberta::kModelType && options.arch != "switch")
            return makeError(ErrorCode::InvalidArgument,
                             "unknown --arch '" + options.arch + "' (roberta, switch, transfo-xl or star-transformer)");
        const Variant* v = impl.find(options.variant);
        if (!v) return makeError(ErrorCode::InvalidArgument, "unknown variant '" + options.variant + "' (available: " + impl.variantList() + ")");
        const auto trainable = trainableVariants();
        if (std::find(trainable.begin(), trainable.end(), options.variant) == trainable.end()) {
            std::string list;
            for (const auto& id : trainable) list += (list.empty() ? "" : ", ") + id;
            return makeError(ErrorCode::Unsupported, "variant '" + options.variant +
                                                         "' cannot be trained yet (no differentiable path); trainable: " + list);
        }
        auto params = resolveParams(v->info(), options.params);
        if (!params) return params.error();
        return trainModel(options, *v, params.value(), impl.pool, onLog, progress, impl.budget);
    });
}

Result<TokenizedInput> Engine::tokenize(const InputSpec& input, const ProgressFn& progress) const {
    return attnscope::engine::tokenize(input, progress);
}


// The most the Image tab's model views may keep of a run (every layer's attention).
constexpr std::uint64_t kMaxModelLayerAttentionBytes = 256ull << 20;

// The token grid of the request's picture: the model's patch grid for a vision model, else the
// one the image spec plans; nullopt for a text model (which refuses the picture later).
std::optional<GridShape> Engine::Impl::imageGridOf(const RunRequest& request) const {
    if (!request.model()) return plannedGrid(*request.input()->image);
    const ModelInfo& info = model->info();
    if (info.imageSize <= 0) return std::nullopt;
    GridShape grid;
    grid.mode = ImageTokenMode::Patches;
    grid.rows = grid.cols = info.imageSize / info.patchSize;
    grid.prefix = info.prefixTokens;
    return grid;
}

// The request's variants planned (attention/run/plan_variants.h) against the model giving Q, K, V, opened
// first (its family recorded in the run), and the picture's token grid.
Result<void> Engine::Impl::planVariants(const RunRequest& request, RunPlan& plan, RunResult& run) {
    PlanSource source;
    if (const ModelLayerSource* layer = request.model()) {
        if (auto session = ensureModel(layer->folder); !session) return session.error();
        source.model = &model->info();
        run.modelFamily = model->info().arch;
        run.modelFamilyName = model->info().familyName;
        run.modelWeightFormat = model->info().weightFormat;
        run.modelWeightTypes = model->info().weightTypes;
    }
    if (const InputSpec* input = request.input(); input && input->image) source.imageGrid = imageGridOf(request);
    return engine::planVariants(request, [this](const std::string& id) { return find(id); }, variantList(), source, plan, run);
}

// The input's shape, before anything large is allocated: a model layer's Q, K, V, or the picture's
// or the text's tokens (explicit tensors go through runExplicitPlan, as in the launcher).
Result<void> Engine::Impl::planInput(const RunRequest& request, const ProgressFn& progress, RunPlan& plan, RunResult& run) {
    ProblemShape& shape = plan.shape;
    if (const ModelLayerSource* source = request.model()) {
        std::vector<std::string> notices;
        ModelInput input;
        input.text = source->input.text;
        input.image = source->input.image;
        input.ids = source->ids;
        plan.modelQkv = model->layerQkv(input, source->layer, progress, run.input, notices, &plan.modelInputs, &run.modelRouting);
        if (input.image) {
            // Every layer's attention for the Image tab's model views: small for a ViT at 224 pixels
            // (12 × 12 × 197² floats, 22 MiB); a large model at a high resolution goes without them.
            const std::uint64_t bytes = static_cast<std::uint64_t>(model->info().layers) * static_cast<std::uint64_t>(model->info().heads) *
                                        static_cast<std::uint64_t>(run.input.tokens.size() * run.input.tokens.size()) * sizeof(float);
            if (bytes <= kMaxModelLayerAttentionBytes)
                run.modelLayerAttention = model->lastPassAttention();
            else
                run.warnings.push_back("the model's attention in every layer would take " + formatBytes(bytes) +
                                       ": the Image tab's layer, rollout, flow and DINO views are off for this run "
                                       "(attnscope-cli analyze --image computes them)");
        }
        for (auto& note : notices) run.warnings.push_back(std::move(note));
        run.modelFolder = source->folder;
        run.modelLayer = source->layer;
        if (const std::int64_t kv = model->info().kvHeads; kv > 0 && kv < model->info().heads) run.modelKvHeads = kv;
        if (const auto& windows = model->info().layerWindows; static_cast<std::size_t>(run.modelLayer) < windows.size())
            run.modelWindow = windows[static_cast<std::size_t>(run.modelLayer)];
        std::vector<std::string> profileNotices;
        run.rotaryProfile = model->rotaryProfile(run.modelLayer, profileNotices);
        run.latentProfile = model->latentProfile(run.modelLayer, profileNotices);
        for (auto& note : profileNotices) run.warnings.push_back(std::move(note));
        shape.heads = plan.modelQkv.heads();
        shape.n = plan.modelQkv.n();
        shape.m = plan.modelQkv.m();
        shape.d = plan.modelQkv.d();
    } else if (const InputSpec& text = std::get<InputSpec>(request.source); text.image) {
        auto projectionOk = checkProjectionSpec(request.projection);
        if (!projectionOk) return projectionOk.error();
        auto tokens = imageTokens(*text.image);
        if (!tokens) return tokens.error();
        plan.image = std::move(tokens.value());
        run.input = plan.image->input;
        for (const auto& note : run.input.image->notes) run.warnings.push_back("image: " + note);
        shape.heads = request.projection.heads;
        shape.n = shape.m = static_cast<std::int64_t>(run.input.tokens.size());
        shape.d = request.projection.headDim;
    } else {
        auto projectionOk = checkProjectionSpec(request.projection);
        if (!projectionOk) return projectionOk.error();
        auto tokens = attnscope::engine::tokenize(std::get<InputSpec>(request.source), progress);
        if (!tokens) return tokens.error();
        run.input = std::move(tokens.value());
        if (run.input.tokens.empty()) return makeError(ErrorCode::InvalidInput, "the text has no tokens: type or paste some text");
        shape.heads = request.projection.heads;
        shape.n = shape.m = static_cast<std::int64_t>(run.input.tokens.size());
        shape.d = request.projection.headDim;
    }
    return checkPlanShape(request, plan);
}

// The atlas runs its coverage settings one at a time on each layer's Q, K, V after the pass: the
// largest of them, with its output and the head's exact output beside it, on top of the pass.
Result<void> Engine::Impl::checkAtlasBudget(const ModelSession::Pass& pass, const std::vector<ResolvedSetting>& settings) const {
    const ModelCapture& capture = pass.capture;
    if (capture.q.empty()) return {};
    ProblemShape shape;
    shape.heads = capture.q.front().size(0);
    shape.n = shape.m = capture.q.front().size(1);
    shape.d = capture.q.front().size(2);
    const auto passBytes = model->passBytes(shape.n, true);
    std::uint64_t largest = 0;
    for (const auto& setting : settings) largest = std::max(largest, setting.variant->runBytes(shape, setting.params));
    const auto outputs = static_cast<std::uint64_t>(2 * shape.heads * shape.n * shape.d) * sizeof(float);
    return checkBudget("the head atlas's coverage settings", passBytes + largest + outputs, budget, shape);
}

Result<std::shared_ptr<const RunResult>> Engine::run(const RunRequest& request, const ProgressFn& progress) {
    auto& impl = *m_impl;
    return guarded("out of memory: try a sparse variant or a shorter input", [&]() -> Result<std::shared_ptr<const RunResult>> {
        impl.recycleLast();
        if (request.hasExplicitQkv()) {
            // (the launcher runs such requests without LibTorch through the same steps)
            c10::InferenceMode inferenceGuard;
            auto run = runExplicitPlan(request, progress, [&impl](const std::string& id) { return impl.find(id); },
                                       impl.variantList(), impl.pool, impl.budget, impl.threads, impl.options.log);
            if (!run) return run.error();
            impl.last = run.value();
            return std::shared_ptr<const RunResult>(std::move(run.value()));
        }
        auto run = std::make_shared<RunResult>();
        run->projection = request.projection;
        RunPlan plan;
        if (auto ok = impl.planVariants(request, plan, *run); !ok) return ok.error();
        c10::InferenceMode inferenceGuard;
        if (auto ok = impl.planInput(request, progress, plan, *run); !ok) return ok.error();
        if (auto ok = checkPlanBudget(request, plan, impl.budget); !ok) return ok.error();
        warnIfLong(plan, impl.threads, impl.options.log);

        Qkv qkv;
        if (request.model()) {
            qkv = std::move(plan.modelQkv);
        } else {
            if (progress && !progress(Progress{"qkv", 0, 1})) return makeError(ErrorCode::Cancelled, "cancelled");
            const ProjectionSpec& spec = request.projection;
            qkv = plan.image ? projectTokenStates(imageTokenStates(*plan.image, spec.modelDim > 0 ? spec.modelDim : spec.heads * spec.headDim, spec.seed), spec, progress)
                             : randomProjections(run->input, spec, progress);
        }
        runOnQkv(request, progress, plan, std::move(qkv), impl.pool, *run);
        impl.last = run;
        return std::shared_ptr<const RunResult>(std::move(run));
    });
}

}  // namespace attnscope::engine
