#include "common/run_plan.h"

#include <attnscope/variant_catalog.h>

#include <algorithm>

namespace attnscope::app {

using engine::VariantRequest;

bool hasExactReference(const std::vector<VariantRequest>& variants) {
    return std::any_of(variants.begin(), variants.end(), [](const VariantRequest& v) {
        const engine::VariantInfo* info = engine::findVariantInfo(v.id);
        return info && info->exact;
    });
}

VariantRequest exactReferenceLike(const VariantRequest& like) {
    VariantRequest exact{engine::exactReference().id, {}};
    if (const auto causal = like.params.find("causal"); causal != like.params.end() && engine::exactReference().findParam("causal"))
        exact.params["causal"] = causal->second;
    return exact;
}

bool addExactReference(std::vector<VariantRequest>& variants) {
    if (variants.empty() || hasExactReference(variants)) return false;
    variants.push_back(exactReferenceLike(variants.front()));
    return true;
}

bool needsExactReference(const std::string& variantId) {
    const engine::VariantInfo* info = engine::findVariantInfo(variantId);
    return info && info->approximatesSoftmax;
}

std::string defaultComparedVariant() {
    for (const engine::VariantInfo& info : engine::variantCatalog())
        if (info.compareDefault) return info.id;
    for (const engine::VariantInfo& info : engine::variantCatalog())
        if (!info.exact) return info.id;
    return engine::exactReference().id;
}

std::vector<VariantRequest> errorCurveVariants(const std::string& variantId, const engine::ParamValues& base,
                                               const std::vector<double>& values) {
    const engine::VariantInfo* info = engine::findVariantInfo(variantId);
    if (!info || info->errorSweepParam.empty()) return {};
    std::vector<VariantRequest> out;
    for (double value : values) {
        VariantRequest run{variantId, base};
        run.params[info->errorSweepParam] = static_cast<std::int64_t>(value);
        out.push_back(std::move(run));
    }
    out.push_back(exactReferenceLike(VariantRequest{variantId, base}));
    return out;
}

}  // namespace attnscope::app
