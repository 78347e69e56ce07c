#include "attention/weights/kept_state.h"

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

}  // namespace

const PlainTensor& KeptState::stat(const std::string& name, DType dtype, const std::vector<std::int64_t>& shape) const {
    return requireTensor(stats, "stats", variantId, name, dtype, shape);
}

const PlainTensor& KeptState::draw(const std::string& name, DType dtype, const std::vector<std::int64_t>& shape) const {
    return requireTensor(diagnostics, "diagnostic", variantId, name, dtype, shape);
}

}  // namespace attnscope::engine
