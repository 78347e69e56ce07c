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

/// The variant the compare view shows beside the first one by default (VariantInfo::compareDefault;
/// else the first that is not exact).
std::string defaultComparedVariant();

/// The error curve's runs: `variantId` with `base` and each of `values` for its sweep parameter,
/// then the exact reference (causal as `base`). Empty when the variant has no error curve.
std::vector<engine::VariantRequest> errorCurveVariants(const std::string& variantId, const engine::ParamValues& base,
                                                       const std::vector<double>& values);

/// The Compare tab's requests: the compared variants after the first one, and exact softmax on
/// the same Q, K, V for the error summary unless a compared variant is exact. When a request with
/// the added reference is over the memory budget because of it, the next one leaves it out and
/// the note says why.
class ComparePlan {
public:
    /// Appends `compared` to `variants` (whose first is the main variant) and the exact
    /// reference when it is wanted. With `modelReference` the request asks for the model layer's
    /// own attention, which the engine puts first: it is the first pane and the reference.
    void addTo(std::vector<engine::VariantRequest>& variants, std::vector<engine::VariantRequest> compared,
               bool modelReference = false);
    /// The latest request compared nothing (another tab's).
    void clear();
    /// Variants of the latest compare request shown as panes.
    int panes() const { return m_panes; }
    /// True when the latest compare request holds the added exact reference.
    bool exactAdded() const { return m_exactAdded; }
    /// Why the shown comparison has no exact reference ("" when it has one or none was wanted).
    const std::string& exactNote() const { return m_exactNote; }
    /// The latest compare request failed with `code`: true when it was over budget with the added
    /// reference, so the next request leaves it out (and exactNote() says so, with `message`).
    bool dropExactAfter(engine::ErrorCode code, const std::string& message);

private:
    int m_panes = 0;
    bool m_exactAdded = false;
    bool m_skipExact = false;
    std::string m_exactNote;
};

/// The atlas's coverage settings that replace head (layer, head) best: lowest output error first,
/// at most `count`; settings with no finite error there (not applicable at the atlas's length)
/// are left out; an out-of-range head has none.
std::vector<const engine::CoverageSetting*> bestCoverageSettings(const engine::HeadAtlas& atlas, int layer, int head,
                                                                 int count);

}  // namespace attnscope::app
