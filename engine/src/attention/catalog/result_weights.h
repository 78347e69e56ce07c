#pragma once
// A result's weights made from what it keeps (attention/weights/kept_state.h), through its variant's catalog
// entry: the one path for a fresh run and a result file read back.

#include "attention/weights/kept_state.h"

namespace attnscope::engine {

/// Reason-only patterns beside the computed one (AttentionResult::extraPatterns): BigBird's
/// element graph; empty for the other variants. Throws as makeAttentionWeights' factories do.
std::map<std::string, std::shared_ptr<const AttentionWeights>> makeExtraPatterns(const KeptState& state);

/// The exact weights of a result from what it keeps (q, k: the Q and K it ran on), made anew:
/// for a result that came without them (TorchFreeRunOptions::weightsOnDemand). Errors as
/// makeAttentionWeights'.
Result<std::shared_ptr<const AttentionWeights>> makeResultWeights(const AttentionResult& result, const SharedFloats& q,
                                                                  const SharedFloats& k,
                                                                  const std::vector<std::uint8_t>& keyPadding);

/// Gives a variant's fresh result its weights and extra patterns from what it keeps, as a result
/// file restores them (the same code): q, k are the Q and K it ran on.
Result<void> attachWeights(AttentionResult& result, const SharedFloats& q, const SharedFloats& k,
                           const std::vector<std::uint8_t>& keyPadding);

/// The exact weights of the variant that left `state`. Errors: NotFound (unknown variant),
/// InvalidInput (a statistic or draw missing or of the wrong shape).
Result<std::shared_ptr<const AttentionWeights>> makeAttentionWeights(const KeptState& state);

}  // namespace attnscope::engine
