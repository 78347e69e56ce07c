#include "common/run_plan.h"

#include <attnscope/diagnostics.h>

#include <attnscope/variant_catalog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

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

std::vector<const engine::CoverageSetting*> bestCoverageSettings(const engine::HeadAtlas& atlas, int layer, int head,
                                                                 int count) {
    std::vector<const engine::CoverageSetting*> chosen;
    if (layer < 0 || head < 0 || layer >= atlas.layers || head >= atlas.heads) return chosen;
    const auto at = static_cast<std::size_t>(layer * atlas.heads + head);
    if (at >= atlas.metrics.size()) return chosen;
    const std::vector<double>& errors = atlas.metrics[at].outputError;
    const auto error = [&](std::size_t s) {
        const double e = s < errors.size() ? errors[s] : std::nan("");
        return std::isfinite(e) ? e : std::numeric_limits<double>::infinity();
    };
    std::vector<std::size_t> order(atlas.settings.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return error(a) < error(b); });
    for (std::size_t s : order) {
        if (static_cast<int>(chosen.size()) >= count || !std::isfinite(error(s))) break;
        chosen.push_back(&atlas.settings[s]);
    }
    return chosen;
}

void ComparePlan::clear() {
    m_panes = 0;
    m_exactAdded = false;
}

void ComparePlan::addTo(std::vector<VariantRequest>& variants, std::vector<VariantRequest> compared, bool modelReference) {
    for (VariantRequest& v : compared) variants.push_back(std::move(v));
    m_panes = static_cast<int>(variants.size());
    m_exactAdded = false;
    if (modelReference) {  // the own attention is results[0]: one pane more, and the reference
        ++m_panes;
        m_exactNote.clear();
        m_skipExact = false;
        return;
    }
    const bool hasExact = hasExactReference(variants);
    if (hasExact) m_exactNote.clear();
    if (!hasExact && !m_skipExact) {
        // Exact softmax on the same Q, K, V for the error summary, causal when the first variant is.
        m_exactAdded = addExactReference(variants);
        m_exactNote.clear();
    }
    m_skipExact = false;
}

bool ComparePlan::dropExactAfter(engine::ErrorCode code, const std::string& message) {
    if (!m_exactAdded || code != engine::ErrorCode::OutOfBudget) return false;
    // The budget is checked per variant before anything is allocated, so running the compared
    // variants alone costs no work that was done.
    m_skipExact = true;
    m_exactNote = "Exact softmax (" + engine::exactReference().id +
                  ") was not run for the error summary: it does not fit the memory budget (" + message + ").";
    return true;
}

}  // namespace attnscope::app
