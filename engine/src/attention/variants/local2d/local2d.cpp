// `local2d`: attention within a k × k neighbourhood of the query's cell on an image grid.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is local2d_kernel.cpp.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"
#include "attention/variants/local2d/local2d_pattern.h"
#include "attention/weights/pattern_weights.h"

namespace attnscope::engine {

namespace variants::local2d {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "local2d";
    info.name = "Local 2-D window (images)";
    info.paper = "Parmar et al. 2018, Image Transformer (local 2-D attention), arXiv 1802.05751";
    info.summary = "Each pixel or patch attends the k × k neighbourhood around it on the image grid; tokens "
                   "before the grid (CLS) attend and are attended by all.";
    info.params.push_back(intParam("window", 5, 1, 255, "k: the side of the neighbourhood, odd (k = 5: two cells each way)."));
    info.params.push_back(fromImage(intParam("width", 0, 0, 1 << 24,
                                             "The grid's columns: an image's own width by default; 0 on other inputs lays "
                                             "their tokens out as a square, ceil(sqrt(n)) a row."),
                                    ImageDefault::GridWidth));
    info.params.push_back(fromImage(intParam("prefix", 0, 0, 1 << 24,
                                             "Tokens before the grid (an image's CLS token) that attend every key and that every "
                                             "query attends."),
                                    ImageDefault::GridPrefix));
    info.params.push_back(boolParam("causal", false, "Only keys j <= i in raster order (image generation)."));
    info.reasons = {PatternReason::Local, PatternReason::Global};
    info.training = Training::Pattern;
    return info;
}

std::shared_ptr<const AttentionWeights> weights(const KeptState& state) {
    return makePatternWeights(local2dPattern(state.params, state.heads, state.n), state, state.n, state.keyPadding);
}

}  // namespace

VariantEntry entry() { return {info(), &weights}; }

}  // namespace variants::local2d
}  // namespace attnscope::engine
