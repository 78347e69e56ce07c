#include "attention/run/plan_variants.h"

#include "io/image/image_defaults.h"

#include <attnscope/result.h>

namespace attnscope::engine {

namespace {

// The layer's own attention (ModelInfo::layerAttention) as the plan's first variant.
Result<void> planOwnAttention(const ModelInfo& info, int layer, const VariantLookup& lookup, const std::string& available,
                              RunPlan& plan, RunResult& run) {
    if (info.layerAttention.empty())
        return makeError(ErrorCode::InvalidArgument, info.folder + ": the file's attention is the model's own (its weights); "
                                                                   "variants run on its q, k, v");
    if (layer < 0 || layer >= info.layers)
        return makeError(ErrorCode::InvalidArgument, "layer " + std::to_string(layer) + " is outside [0, " +
                                                         std::to_string(info.layers - 1) + "] for this model");
    const LayerAttentionInfo& own = info.layerAttention[static_cast<std::size_t>(layer)];
    const Variant* v = lookup(own.variant);
    if (!v) return unknownVariant(own.variant, available);
    plan.ownAttention = static_cast<int>(plan.variants.size());
    run.ownAttentionSummary = own.summary;
    return planVariant(*v, own.params, plan, own.seed);
}

// A causal model makes the variant causal, and its defaults (a window, a bias) fill what the
// request left unset; each said in a notice.
void takeModelSettings(const ModelInfo& info, const Variant& v, ParamValues& given, std::vector<std::string>& notices) {
    const std::string& id = v.info().id;
    if (info.causal && !given.count("causal") && v.info().findParam("causal")) {
        given["causal"] = true;
        notices.push_back(id + ": causal = true, as the model is causal");
    }
    const auto defaults = info.variantDefaults.find(id);
    if (defaults == info.variantDefaults.end()) return;
    std::string taken;
    for (const auto& [name, value] : defaults->second) {
        if (given.count(name)) continue;
        given[name] = value;
        taken += (taken.empty() ? "" : ", ") + name + " = " + formatParamValue(value);
    }
    if (!taken.empty()) notices.push_back(id + ": " + taken + ", as the model has them");
}

}  // namespace

Result<void> planVariants(const RunRequest& request, const VariantLookup& lookup, const std::string& available,
                          const PlanSource& source, RunPlan& plan, RunResult& run) {
    if (const ModelLayerSource* layer = request.model(); layer && source.model && layer->ownAttention)
        if (auto own = planOwnAttention(*source.model, layer->layer, lookup, available, plan, run); !own) return own;
    if (request.variants.empty() && plan.variants.empty()) return makeError(ErrorCode::InvalidArgument, "no variant requested");
    for (const auto& vr : request.variants) {
        const Variant* v = lookup(vr.id);
        if (!v) return unknownVariant(vr.id, available);
        ParamValues given = vr.params;
        if (source.model) takeModelSettings(*source.model, *v, given, run.warnings);
        if (source.imageGrid) applyImageDefaults(v->info(), *source.imageGrid, given, run.warnings);
        if (auto ok = planVariant(*v, given, plan, vr.seed); !ok) return ok.error();
    }
    return {};
}

}  // namespace attnscope::engine
