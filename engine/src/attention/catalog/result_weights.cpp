#include "attention/catalog/result_weights.h"

#include "attention/catalog/variant_entry.h"

#include <stdexcept>

namespace attnscope::engine {
namespace {

KeptState keptStateOf(const AttentionResult& r, const SharedFloats& q, const SharedFloats& k,
                      const std::vector<std::uint8_t>& keyPadding) {
    KeptState state;
    state.variantId = r.variantId;
    state.params = r.params;
    state.heads = r.heads;
    state.n = r.n;
    state.m = r.m;
    state.d = r.d;
    state.q = q;
    state.k = k;
    state.keyPadding = keyPadding;
    state.stats = &r.stats;
    state.diagnostics = &r.diagnostics;
    return state;
}

}  // namespace

Result<std::shared_ptr<const AttentionWeights>> makeResultWeights(const AttentionResult& r, const SharedFloats& q,
                                                                  const SharedFloats& k,
                                                                  const std::vector<std::uint8_t>& keyPadding) {
    return makeAttentionWeights(keptStateOf(r, q, k, keyPadding));
}

Result<void> attachWeights(AttentionResult& r, const SharedFloats& q, const SharedFloats& k,
                           const std::vector<std::uint8_t>& keyPadding) {
    const KeptState state = keptStateOf(r, q, k, keyPadding);
    auto weights = makeAttentionWeights(state);
    if (!weights) return weights.error();
    r.weights = std::move(weights.value());
    try {
        r.extraPatterns = makeExtraPatterns(state);
    } catch (const EngineError& e) {
        return makeError(e.code, e.what());
    } catch (const std::exception& e) {
        return makeError(ErrorCode::InvalidInput, e.what());
    }
    return {};
}

std::map<std::string, std::shared_ptr<const AttentionWeights>> makeExtraPatterns(const KeptState& state) {
    const VariantEntry* entry = findVariantEntry(state.variantId);
    if (!entry || !entry->extraPatterns) return {};
    return entry->extraPatterns(state);
}

Result<std::shared_ptr<const AttentionWeights>> makeAttentionWeights(const KeptState& state) {
    const VariantEntry* entry = findVariantEntry(state.variantId);
    if (!entry || !entry->weights)
        return makeError(ErrorCode::NotFound, "no weights are known for variant '" + state.variantId + "'");

    if (state.q.shape != std::vector<std::int64_t>{state.heads, state.n, state.d} || state.k.shape.size() != 3 ||
        state.k.shape[0] != state.heads || state.k.shape[2] != state.d || !state.q.data || !state.k.data)
        return makeError(ErrorCode::InvalidInput, state.variantId + ": q and k must be F32 [heads, n, d] and [heads, m, d]");
    try {
        return entry->weights(state);
    } catch (const EngineError& e) {
        return makeError(e.code, e.what());
    } catch (const std::invalid_argument& e) {
        return makeError(ErrorCode::InvalidInput, state.variantId + ": " + e.what());
    }
}

}  // namespace attnscope::engine
