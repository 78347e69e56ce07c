#pragma once
// Each variant's weights from its kept state (kept_state.h); makeAttentionWeights picks one by
// the variant id. Each throws EngineError(InvalidInput) naming a missing or mis-shaped tensor.

#include "weights/kept_state.h"

#include <map>
#include <memory>
#include <string>

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeFullWeights(const KeptState& state);
/// sparse_strided, sparse_fixed, longformer, bigbird, star.
std::shared_ptr<const AttentionWeights> makePatternVariantWeights(const KeptState& state);
std::shared_ptr<const AttentionWeights> makeTopKWeights(const KeptState& state);
std::shared_ptr<const AttentionWeights> makeEntmaxWeights(const KeptState& state);
/// linear and performer.
std::shared_ptr<const AttentionWeights> makeFeatureWeights(const KeptState& state);
std::shared_ptr<const AttentionWeights> makeLinformerWeights(const KeptState& state);
std::shared_ptr<const AttentionWeights> makeReformerWeights(const KeptState& state);
std::shared_ptr<const AttentionWeights> makeRoutingWeights(const KeptState& state);

/// BigBird's element graph (the paper's element-level pattern, reasons only).
std::shared_ptr<const AttentionWeights> makeBigBirdElementGraph(const KeptState& state);

}  // namespace attnscope::engine
