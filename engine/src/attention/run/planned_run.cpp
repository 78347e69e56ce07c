#include "attention/run/planned_run.h"

#include "attention/run/plan_variants.h"

#include "attention/run/request_checks.h"
#include "attention/catalog/result_weights.h"

#include <attnscope/result_roles.h>
#include <attnscope/variant_info.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace attnscope::engine {

Error unknownVariant(const std::string& id, const std::string& available) {
    return makeError(ErrorCode::NotFound, "unknown variant '" + id + "' (available: " + available + ")");
}

Result<void> planVariant(const Variant& variant, const ParamValues& given, RunPlan& plan, std::optional<std::uint64_t> seed) {
    auto params = resolveParams(variant.info(), given);
    if (!params) return params.error();
    plan.variants.push_back(&variant);
    plan.resolved.push_back(std::move(params.value()));
    plan.seeds.push_back(seed);
    return {};
}

Result<void> planExplicitInput(const RunRequest& request, RunPlan& plan) {
    plan.explicitInput = true;
    plan.variantScansValues = plan.variants[0]->checksQkvValues();
    if (const auto* shared = std::get_if<SharedQkv>(&request.source)) {
        plan.explicitQkv = *shared;
    } else {
        auto owned = shareExplicitQkv(std::get<QkvTensors>(request.source));
        if (!owned) return owned.error();
        plan.explicitQkv = std::move(owned.value());
    }
    auto checked = checkExplicitQkv(plan.explicitQkv, /*values=*/!plan.variantScansValues);
    if (!checked) return checked.error();
    plan.shape = *checked;
    return {};
}

Result<void> checkPlanShape(const RunRequest& request, RunPlan& plan) {
    if (!request.keyPadding.empty() && static_cast<std::int64_t>(request.keyPadding.size()) != plan.shape.m)
        return makeError(ErrorCode::InvalidArgument, "key padding has " + std::to_string(request.keyPadding.size()) +
                                                         " entries, expected " + std::to_string(plan.shape.m) + " (one per key)");
    if (request.denseLimit < 0) return makeError(ErrorCode::InvalidArgument, "dense limit must be >= 0");
    plan.shape.denseLimit = request.denseLimit;
    return {};
}

Result<void> checkPlanBudget(const RunRequest& request, const RunPlan& plan, std::uint64_t defaultBudget) {
    const std::uint64_t budget = request.memoryBudgetBytes > 0 ? request.memoryBudgetBytes : defaultBudget;
    const ProblemShape& shape = plan.shape;
    std::uint64_t total =
        plan.explicitInput || request.model() ? 0 : static_cast<std::uint64_t>(3 * shape.heads * shape.n * shape.d) * 4;
    std::string names;
    for (std::size_t i = 0; i < plan.variants.size(); ++i) {
        total += plan.variants[i]->runBytes(shape, plan.resolved[i]);
        names += (names.empty() ? "" : ", ") + plan.variants[i]->info().id;
    }
    const std::string what = plan.variants.size() == 1 ? "variant '" + names + "'" : "variants " + names;
    return checkBudget(what, total, budget, shape);
}

// The kernels' rate per thread, measured (2026-12-08): `full` on 20,000 tokens, 8 heads of 64,
// 3.4 s of attention on 2 threads (4 · 8 · 20000² · 64 floating-point operations), about 1.2 · 10^11
// a thread; the pattern kernels about half of that (`sparse_strided` on a million tokens). The
// estimate takes the lower rate: high by about 2 for `full`, near for the sparse runs. (It was
// 2 · 10^10, the rate of the kernel before the fused one: it announced runs of half a minute as
// two minutes.)
constexpr double kFlopsPerThreadSecond = 6e10;
// Runs expected to take longer than this are announced before they start.
constexpr double kLongRunSeconds = 30.0;

void warnIfLong(const RunPlan& plan, int threads, const LogFn& log) {
    const ProblemShape& s = plan.shape;
    double flops = 0;
    for (std::size_t i = 0; i < plan.variants.size(); ++i)
        flops += 4.0 * static_cast<double>(s.heads) * static_cast<double>(s.n) * static_cast<double>(s.d) *
                 plan.variants[i]->scoredKeysPerQuery(s, plan.resolved[i]);
    const double seconds = flops / (kFlopsPerThreadSecond * static_cast<double>(std::max(threads, 1)));
    if (seconds < kLongRunSeconds || !log) return;
    log(LogLevel::Warning, "this run of " + std::to_string(s.n) + " tokens is estimated to take about " +
                               formatDuration(seconds) + " on " + std::to_string(threads) +
                               (threads == 1 ? " thread" : " threads") + "; a sparse variant or a shorter input is faster (cancel with Ctrl-C or Esc)");
}

void runPlanned(const RunRequest& request, const ProgressFn& progress, RunPlan& plan, const Qkv& qkv, BufferPool& pool,
                RunResult& run, bool attach) {
    for (std::size_t i = 0; i < plan.variants.size(); ++i) {
        const Variant& variant = *plan.variants[i];
        RunContext ctx(pool, progress);
        ctx.seed = plan.seeds[i].value_or(request.projection.seed);
        ctx.inputs = request.variantInputs.empty() ? &plan.modelInputs : &request.variantInputs;
        ctx.denseDiagnostics = plan.shape.n <= request.denseLimit && plan.shape.m <= request.denseLimit;
        if (i == 0 && plan.variantScansValues) ctx.uncheckedQkv = &plan.explicitQkv;
        ctx.input = &qkv;
        AttentionResult r = variant.run(qkv, plan.resolved[i], ctx);
        ctx.checkQkvValuesNow();  // (a no-op unless the variant left them unscanned)
        for (const auto& w : ctx.warnings()) run.warnings.push_back(variant.info().id + ": " + w);
        if (r.emptyRowCount > 0)
            run.warnings.push_back(variant.info().id + ": " + std::to_string(r.emptyRowCount) + " of the " +
                                   std::to_string(r.heads * r.n) + " (head, query) rows over all " + std::to_string(r.heads) +
                                   " heads have no admissible key; their weights and output are zero");
        if (attach) {
            if (auto attached = attachWeights(r, run.q, run.k, run.keyPadding); !attached)
                throw EngineError(ErrorCode::Internal, attached.error().message);
        }
        const AttentionResult& first = run.results.empty() ? r : run.results.front();
        if (run.exactReference < 0 && variant.info().exact && comparableShapes(r, first))
            run.exactReference = static_cast<int>(run.results.size());
        run.results.push_back(std::move(r));
    }
    run.ownAttention = plan.ownAttention;
}

namespace {

// Every row of x [heads, rows, d] at Euclidean norm `norm` (a zero row stays zero).
SharedFloats rowsAtNorm(const SharedFloats& x, double norm) {
    const std::int64_t d = x.shape.back(), rows = x.numel() / std::max<std::int64_t>(d, 1);
    std::shared_ptr<float> out(new float[static_cast<std::size_t>(x.numel())], std::default_delete<float[]>());
    const float* in = x.data.get();
    for (std::int64_t r = 0; r < rows; ++r) {
        double sq = 0;
        for (std::int64_t c = 0; c < d; ++c) sq += static_cast<double>(in[r * d + c]) * in[r * d + c];
        const double factor = sq > 0 ? norm / std::sqrt(sq) : 0.0;
        for (std::int64_t c = 0; c < d; ++c) out.get()[r * d + c] = static_cast<float>(in[r * d + c] * factor);
    }
    return SharedFloats{x.shape, std::move(out)};
}

}  // namespace

void runOnQkv(const RunRequest& request, const ProgressFn& progress, RunPlan& plan, Qkv qkv, BufferPool& pool, RunResult& run,
              bool attach) {
    if (request.projection.qkNorm > 0) {
        qkv.q = rowsAtNorm(qkv.q, request.projection.qkNorm);
        qkv.k = rowsAtNorm(qkv.k, request.projection.qkNorm);
    }
    qkv.keyPadding = request.keyPadding;
    run.n = plan.shape.n;
    run.heads = plan.shape.heads;
    run.headDim = plan.shape.d;
    run.q = qkv.q;
    run.k = qkv.k;
    run.keyPadding = request.keyPadding;
    runPlanned(request, progress, plan, qkv, pool, run, attach);
    run.requestJson = requestJson(request, plan);
}

namespace {

// The request's source as the result file records it (the text's length, not the text).
nlohmann::json inputJson(const RunSource& source) {
    if (const auto* model = std::get_if<ModelLayerSource>(&source))
        return {{"source", "model"}, {"model", model->folder}, {"layer", model->layer},
                {"own_attention", model->ownAttention}, {"bytes", model->input.text.size()}};
    const auto* input = std::get_if<InputSpec>(&source);
    if (!input) return {{"source", "qkv"}};
    if (!input->image) return {{"source", "text"}, {"tokenizer", tokenizerName(input->tokenizer)}, {"bytes", input->text.size()}};
    const ImageSpec& image = *input->image;
    nlohmann::json j = {{"source", "image"}, {"name", image.name}, {"width", image.image.width}, {"height", image.image.height},
                        {"mode", imageTokenModeName(image.mode)}};
    if (image.mode == ImageTokenMode::Pixels)
        j.update({{"grid_rows", image.gridRows}, {"grid_cols", image.gridCols}});
    else
        j.update({{"patch", image.patch}, {"fit", patchFitName(image.fit)}, {"cls", image.cls}});
    return j;
}

}  // namespace

std::string requestJson(const RunRequest& request, const RunPlan& plan) {
    nlohmann::json j;
    j["input"] = inputJson(request.source);
    j["projection"] = {{"heads", request.projection.heads},
                       {"head_dim", request.projection.headDim},
                       {"model_dim", request.projection.modelDim},
                       {"seed", request.projection.seed}};
    if (request.projection.qkNorm > 0) j["projection"]["qk_norm"] = request.projection.qkNorm;
    j["n"] = plan.shape.n;
    j["dense_limit"] = request.denseLimit;
    j["key_padding"] = std::count(request.keyPadding.begin(), request.keyPadding.end(), std::uint8_t{1});
    nlohmann::json variants = nlohmann::json::array();
    for (std::size_t i = 0; i < plan.variants.size(); ++i) {
        nlohmann::json params = nlohmann::json::object();
        for (const auto& [name, value] : plan.resolved[i]) params[name] = formatParamValue(value);
        nlohmann::json variant = {{"id", plan.variants[i]->info().id}, {"params", params}};
        if (plan.seeds[i]) variant["seed"] = *plan.seeds[i];
        if (static_cast<int>(i) == plan.ownAttention) variant["own_attention"] = true;
        variants.push_back(std::move(variant));
    }
    j["variants"] = variants;
    return j.dump();
}

Result<std::shared_ptr<RunResult>> runExplicitPlan(const RunRequest& request, const ProgressFn& progress,
                                                   const VariantLookup& lookup, const std::string& available,
                                                   BufferPool& pool, std::uint64_t defaultBudget, int threads,
                                                   const LogFn& log, bool attach) {
    auto run = std::make_shared<RunResult>();
    run->projection = request.projection;
    RunPlan plan;
    if (auto ok = planVariants(request, lookup, available, PlanSource{}, plan, *run); !ok) return ok.error();
    if (auto ok = planExplicitInput(request, plan); !ok) return ok.error();
    if (auto ok = checkPlanShape(request, plan); !ok) return ok.error();
    if (auto ok = checkPlanBudget(request, plan, defaultBudget); !ok) return ok.error();
    warnIfLong(plan, threads, log);

    runOnQkv(request, progress, plan, qkvOf(plan.explicitQkv), pool, *run, attach);
    return run;
}

}  // namespace attnscope::engine
