#pragma once
// Turning the window's or a recipe's choices into a request, in one Qt-free place: the exact
// reference beside compared or approximating variants, the error curve's sweep.

#include <attnscope/head_atlas.h>
#include <attnscope/types.h>

#include <string>
#include <vector>

namespace attnscope::app {

/// True when some variant of the request is exact softmax (VariantInfo::exact).
bool hasExactReference(const std::vector<engine::VariantRequest>& variants);

/// The exact reference with the `causal` of `like` (when it has one): what approximations and
/// compared patterns are measured against on the same Q, K, V.
engine::VariantRequest exactReferenceLike(const engine::VariantRequest& like);

/// Appends exactReferenceLike(variants[0]) unless the request has an exact variant already;
/// true when it appended one.
bool addExactReference(std::vector<engine::VariantRequest>& variants);

/// True when the variant approximates softmax: the window and recipes run the exact reference
/// beside it for its approximation page.
bool needsExactReference(const std::string& variantId);

/// The variant the compare view shows beside the first one by default (VariantInfo::compareDefault;
/// else the first that is not exact).
std::string defaultComparedVariant();

/// The error curve's runs: `variantId` with `base` and each of `values` for its sweep parameter,
/// then the exact reference (causal as `base`). Empty when the variant has no error curve.
std::vector<engine::VariantRequest> errorCurveVariants(const std::string& variantId, const engine::ParamValues& base,
                                                       const std::vector<double>& values);

/// The atlas's coverage settings that replace head (layer, head) best: lowest output error first,
/// at most `count`; settings with no finite error there (not applicable at the atlas's length)
/// are left out; an out-of-range head has none.
std::vector<const engine::CoverageSetting*> bestCoverageSettings(const engine::HeadAtlas& atlas, int layer, int head,
                                                                 int count);

}  // namespace attnscope::app
