// A checkpoint's 2-D weights as stored, rows in place in the mapping (StoredMatrix): what
// generation multiplies by one row at a time, so a quantized or BF16 model is never converted whole.

#include <attnscope/model_checkpoint.h>

#include "io/checkpoint/ggml_dequant.h"
#include "io/checkpoint/gguf_model.h"
#include "io/families/family.h"

namespace attnscope::engine {
namespace {

Error refuse(const std::string& where, const std::string& name, const std::string& why) {
    return Error{ErrorCode::InvalidArgument, where + ": tensor '" + name + "' " + why};
}

bool ggmlTypeOf(StDType dtype, std::uint32_t& type) {
    switch (dtype) {
        case StDType::F32: type = static_cast<std::uint32_t>(GgmlType::F32); return true;
        case StDType::F16: type = static_cast<std::uint32_t>(GgmlType::F16); return true;
        case StDType::BF16: type = static_cast<std::uint32_t>(GgmlType::BF16); return true;
        default: return false;
    }
}

}  // namespace

bool ModelCheckpoint::holds(const std::string& name) const {
    if (m_gguf) {
        if (m_ggufResolved.count(name)) return true;
        for (const GgufPlace& p : ggufPlacesFor(familyOf(m_config).gguf, name, m_config.numHeads, m_config.kvHeads))
            if (m_gguf->find(p.tensor)) return true;
        return false;
    }
    return m_resolved.count(name) || m_all.count(m_prefix + name) || m_all.count(name);
}

Result<StoredMatrix> ModelCheckpoint::storedMatrix(const std::string& name, std::int64_t index) const {
    StoredMatrix out;
    if (m_gguf) {
        const GgufLocated* located = findGguf(name);
        GgufLocated found;
        if (!located) {  // a tensor the analysis does not read (the LM head): its GGUF place
            for (const GgufPlace& p : ggufPlacesFor(familyOf(m_config).gguf, name, m_config.numHeads, m_config.kvHeads)) {
                if (const GgufTensor* t = m_gguf->find(p.tensor)) {
                    found = GgufLocated{t, p.slice, p.permuteHeads, p.addend, std::vector<std::int64_t>(t->shape.rbegin(), t->shape.rend()), 0, t->bytes};
                    located = &found;
                    break;
                }
            }
        }
        if (!located) return Error{ErrorCode::NotFound, m_folder + ": no tensor '" + name + "'"};
        if (located->addend != 0 || !ggmlTypeDequantizable(located->tensor->type))
            return refuse(m_folder, name, "cannot be multiplied as stored");
        std::vector<std::int64_t> shape = located->shape;
        std::uint64_t offset = located->offset;
        if (index >= 0) {  // a slice of a stacked tensor read whole (not resolved as a slice)
            if (shape.size() != 3 || index >= shape.front()) return refuse(m_folder, name, "has no slice " + std::to_string(index));
            offset += located->bytes / static_cast<std::uint64_t>(shape.front()) * static_cast<std::uint64_t>(index);
            shape.erase(shape.begin());
        }
        if (shape.size() != 2) return refuse(m_folder, name, "is not a matrix");
        std::int64_t blockElements = 1, blockBytes = 0;
        ggmlBlockLayout(located->tensor->type, blockElements, blockBytes);
        out = StoredMatrix{located->tensor->type, m_gguf->bytes(*located->tensor) + offset, shape[0], shape[1],
                           static_cast<std::uint64_t>(shape[1] / blockElements * blockBytes), located->permuteHeads};
        return out;
    }
    const Located* where = nullptr;
    if (const auto it = m_resolved.find(name); it != m_resolved.end()) where = &it->second;
    else if (const auto all = m_all.find(m_prefix + name); all != m_all.end()) where = &all->second;
    else if (const auto bare = m_all.find(name); bare != m_all.end()) where = &bare->second;
    if (!where) return Error{ErrorCode::NotFound, m_folder + ": no tensor '" + name + "'"};
    std::uint32_t type = 0;
    if (!ggmlTypeOf(where->info->dtype, type)) return refuse(m_folder, name, std::string("is stored as ") + stDTypeName(where->info->dtype) + ", not F32, F16 or BF16");
    std::vector<std::int64_t> shape(where->info->shape.begin(), where->info->shape.end());
    const std::uint64_t width = type == 0 ? 4 : 2;
    std::uint64_t offset = 0;
    if (index >= 0) {
        if (shape.size() != 3 || index >= shape.front()) return refuse(m_folder, name, "has no slice " + std::to_string(index));
        offset = static_cast<std::uint64_t>(index) * static_cast<std::uint64_t>(shape[1] * shape[2]) * width;
        shape.erase(shape.begin());
    }
    if (shape.size() != 2) return refuse(m_folder, name, "is not a matrix");
    out = StoredMatrix{type, where->file->bytes(*where->info) + offset, shape[0], shape[1], static_cast<std::uint64_t>(shape[1]) * width, 0};
    return out;
}

}  // namespace attnscope::engine
