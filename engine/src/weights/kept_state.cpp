#include "weights/kept_state.h"

#include "catalog/variant_entry.h"

#include <stdexcept>

namespace attnscope::engine {
namespace {

std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + (shape[i] < 0 ? std::string("*") : std::to_string(shape[i]));
    return out + "]";
}

const PlainTensor& requireTensor(const std::map<std::string, PlainTensor>* tensors, const char* kind,
                                 const std::string& variant, const std::string& name, DType dtype,
                                 const std::vector<std::int64_t>& shape) {
    const std::string label = variant + ": " + kind + "." + name;
    if (!tensors || !tensors->count(name))
        throw EngineError(ErrorCode::InvalidInput, label + " is missing (needed to recompute the weights)");
    const PlainTensor& t = tensors->at(name);
    bool ok = t.dtype == dtype && t.shape.size() == shape.size();
    for (std::size_t i = 0; ok && i < shape.size(); ++i) ok = shape[i] < 0 || t.shape[i] == shape[i];
    if (!ok)
        throw EngineError(ErrorCode::InvalidInput, label + " must be " + dtypeName(dtype) + " " + shapeText(shape) +
                                                       ", got " + dtypeName(t.dtype) + " " + shapeText(t.shape));
    return t;
}

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

const PlainTensor& KeptState::stat(const std::string& name, DType dtype, const std::vector<std::int64_t>& shape) const {
    return requireTensor(stats, "stats", variantId, name, dtype, shape);
}

const PlainTensor& KeptState::draw(const std::string& name, DType dtype, const std::vector<std::int64_t>& shape) const {
    return requireTensor(diagnostics, "diagnostic", variantId, name, dtype, shape);
}

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
