#include "cli/qkv_file.h"

#include <attnscope/safetensors.h>
#include <attnscope/variant_catalog.h>

#include <cstring>
#include <memory>

namespace attnscope::cli {

using namespace attnscope::engine;

Result<QkvFile> readQkvFile(const std::string& path) {
    auto opened = SafetensorsFile::open(path);
    if (!opened) return opened.error();
    // Shared with the run's results: q and k are kept by them (weights are recomputed from them).
    std::shared_ptr<const SafetensorsFile> file(std::move(opened.value()));
    QkvFile out;
    const struct {
        const char* name;
        SharedFloats* target;
    } parts[] = {{"q", &out.qkv.q}, {"k", &out.qkv.k}, {"v", &out.qkv.v}};
    for (const auto& p : parts) {
        const StTensorInfo* info = file->find(p.name);
        if (!info) return makeError(ErrorCode::InvalidInput, path + ": tensor '" + p.name + "' is missing (need q, k, v)");
        if (info->dtype != StDType::F32)
            return makeError(ErrorCode::InvalidInput, path + ": tensor '" + p.name + "' must be F32, got " +
                                                          stDTypeName(info->dtype));
        for (auto s : info->shape) p.target->shape.push_back(static_cast<std::int64_t>(s));
        const std::uint8_t* bytes = file->bytes(*info);
        if (reinterpret_cast<std::uintptr_t>(bytes) % alignof(float) == 0) {
            p.target->data = std::shared_ptr<const float>(file, reinterpret_cast<const float*>(bytes));
            p.target->mappedFile = true;  // (the run lets a head's pages go when done with them)
        } else {
            auto copy = std::make_shared<std::vector<float>>(static_cast<std::size_t>(p.target->numel()));
            std::memcpy(copy->data(), bytes, copy->size() * sizeof(float));
            p.target->data = std::shared_ptr<const float>(copy, copy->data());
        }
    }
    if (file->find("key_padding")) {
        auto pad = file->read("key_padding");
        if (!pad) return pad.error();
        if (pad->dtype != DType::U8 || pad->shape.size() != 1)
            return makeError(ErrorCode::InvalidInput, path + ": tensor 'key_padding' must be U8 or BOOL of shape [m]");
        out.keyPadding = pad->u8;
    }
    // Tensors a variant reads when given (VariantInfo::inputs); the variant checks their shapes.
    for (const auto& variant : variantCatalog()) {
        for (const auto& input : variant.inputs) {
            if (!file->find(input.name) || out.variantInputs.count(input.name)) continue;
            auto tensor = file->read(input.name);
            if (!tensor) return tensor.error();
            if (tensor->dtype != DType::F32)
                return makeError(ErrorCode::InvalidInput, path + ": tensor '" + input.name + "' (read by " + variant.id +
                                                              ") must be F32 " + input.shape);
            out.variantInputs[input.name] = std::move(tensor.value());
        }
    }
    return out;
}

}  // namespace attnscope::cli
