#include "cli/qkv_file.h"

#include <attnscope/safetensors.h>

namespace attnscope::cli {

using namespace attnscope::engine;

Result<QkvFile> readQkvFile(const std::string& path) {
    auto file = SafetensorsFile::open(path);
    if (!file) return file.error();
    QkvFile out;
    const struct {
        const char* name;
        PlainTensor* target;
    } parts[] = {{"q", &out.qkv.q}, {"k", &out.qkv.k}, {"v", &out.qkv.v}};
    for (const auto& p : parts) {
        const StTensorInfo* info = (*file)->find(p.name);
        if (!info) return makeError(ErrorCode::InvalidInput, path + ": tensor '" + p.name + "' is missing (need q, k, v)");
        if (info->dtype != StDType::F32)
            return makeError(ErrorCode::InvalidInput, path + ": tensor '" + p.name + "' must be F32, got " +
                                                          stDTypeName(info->dtype));
        auto t = (*file)->read(p.name);
        if (!t) return t.error();
        *p.target = std::move(t.value());
    }
    if ((*file)->find("key_padding")) {
        auto pad = (*file)->read("key_padding");
        if (!pad) return pad.error();
        if (pad->dtype != DType::U8 || pad->shape.size() != 1)
            return makeError(ErrorCode::InvalidInput, path + ": tensor 'key_padding' must be U8 or BOOL of shape [m]");
        out.keyPadding = pad->u8;
    }
    return out;
}

}  // namespace attnscope::cli
