// A GGUF file opened as a model (FORMATS.md, GGUF): its metadata through the family's config
// reader, every tensor the forward needs found, typed and shaped as the config implies, and read
// as float32 a tensor (or an expert's slice, or an embedding's rows) at a time.

#include <attnscope/model_checkpoint.h>

#include "io/checkpoint/ggml_dequant.h"
#include "io/checkpoint/gguf_model.h"
#include "io/families/family.h"
#include "base/kernels/finite_scan.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace attnscope::engine {
namespace {

Error invalid(std::string message) { return Error{ErrorCode::InvalidInput, std::move(message)}; }

std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
}

std::vector<std::int64_t> withoutOnes(const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> out;
    for (auto d : shape)
        if (d != 1) out.push_back(d);
    return out;
}

/// Bytes of `elements` values of `type` (a whole number of blocks).
std::uint64_t storedBytes(std::uint32_t type, std::int64_t elements) {
    std::int64_t blockElements = 1, blockBytes = 0;
    ggmlBlockLayout(type, blockElements, blockBytes);
    return static_cast<std::uint64_t>(elements / blockElements * blockBytes);
}

// Undoes llama.cpp's q/k row order: its row (h, i, half) of a head of d rows holds Hugging Face's
// row (h, half, i), i < d / 2 (convert_hf_to_gguf.py's permute).
void unpermuteRows(float* values, std::int64_t heads, std::int64_t rows, std::int64_t cols) {
    const std::int64_t d = rows / heads, halfD = d / 2;
    std::vector<float> stored(values, values + rows * cols);
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t half = 0; half < 2; ++half)
            for (std::int64_t i = 0; i < halfD; ++i)
                std::memcpy(values + (h * d + half * halfD + i) * cols, stored.data() + (h * d + 2 * i + half) * cols,
                            static_cast<std::size_t>(cols) * sizeof(float));
}

}  // namespace

Result<std::unique_ptr<ModelCheckpoint>> ModelCheckpoint::openGguf(const std::string& path) {
    auto file = GgufFile::open(path);
    if (!file) return file.error();
    std::unique_ptr<ModelCheckpoint> ckpt(new ModelCheckpoint());
    ckpt->m_folder = path;
    ckpt->m_gguf = std::move(file.value());
    auto described = ggufConfigJson(*ckpt->m_gguf);
    if (!described) return described.error();
    auto config = parseModelConfig(described.value().config.dump(), path + " (GGUF metadata read as config.json)");
    if (!config) return config.error();
    ckpt->m_config = std::move(config.value());
    for (const auto& n : ckpt->m_config.notices) ckpt->m_warnings.push_back(n);
    if (auto resolved = ckpt->resolveGguf(); !resolved) return resolved.error();
    if (auto layers = ckpt->checkGgufLayers(); !layers) return layers.error();
    return ckpt;
}

// Every tensor the config implies: at one of its GGUF places, of a type with a kernel, of the
// shape the config gives (GGUF lists dimensions fastest first: reversed; an expert's slice drops
// the stacked dimension; a [1, h] gate may be stored as [h]).
Result<void> ModelCheckpoint::resolveGguf() {
    const std::string& path = m_folder;
    const ModelConfig& c = m_config;
    std::vector<ExpectedTensor> expected = expectedTensors(c);
    for (const ExpectedTensor& e : expected) {
        if (e.read != WeightRead::Whole)
            return Error{ErrorCode::Unsupported, path + ": tensor '" + e.name + "' is read packed, which GGUF files do not hold"};
        const std::vector<GgufPlace> places = ggufPlacesFor(familyOf(c).gguf, e.name, c.numHeads, c.kvHeads);
        const GgufPlace* place = nullptr;
        const GgufTensor* tensor = nullptr;
        for (const GgufPlace& p : places) {
            if ((tensor = m_gguf->find(p.tensor))) {
                place = &p;
                break;
            }
        }
        if (!tensor)
            return invalid(path + ": missing tensor '" + (places.empty() ? e.name : places.front().tensor) + "' (the model's " +
                           e.name + ") required by its metadata");
        if (!ggmlTypeDequantizable(tensor->type))
            return Error{ErrorCode::Unsupported, path + ": tensor '" + tensor->name + "' is stored as " + ggmlTypeName(tensor->type) +
                                                     ", which is not read (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, "
                                                     "Q3_K, Q4_K, Q5_K and Q6_K are)"};
        std::vector<std::int64_t> shape(tensor->shape.rbegin(), tensor->shape.rend());
        GgufLocated located{tensor, place->slice, place->permuteHeads, place->addend, e.shape, 0, tensor->bytes};
        if (place->slice >= 0) {
            if (shape.size() < 2 || place->slice >= shape.front())
                return invalid(path + ": tensor '" + tensor->name + "' has shape " + shapeText(shape) + ", which holds no expert " +
                               std::to_string(place->slice));
            shape.erase(shape.begin());
            located.bytes = tensor->bytes / static_cast<std::uint64_t>(tensor->shape.back());
            located.offset = located.bytes * static_cast<std::uint64_t>(place->slice);
        }
        if (withoutOnes(shape) != withoutOnes(e.shape))
            return invalid(path + ": tensor '" + tensor->name + "' has shape " + shapeText(shape) + " (GGUF lists it reversed), expected " +
                           shapeText(e.shape) + " from its metadata");
        if (place->permuteHeads > 0 && (e.shape.front() % (2 * place->permuteHeads) != 0))
            return invalid(path + ": tensor '" + tensor->name + "' has " + std::to_string(e.shape.front()) +
                           " rows, not an even number per head");
        m_ggufResolved[e.name] = std::move(located);
    }
    std::string types;
    for (const auto& [type, count] : storageTypes()) types += (types.empty() ? "" : ", ") + type + " × " + std::to_string(count);
    m_warnings.push_back("GGUF weights (" + types + ") are dequantized to F32 for analysis, a layer at a time");
    return {};
}

// Blocks past block_count mean the metadata and the tensors disagree.
Result<void> ModelCheckpoint::checkGgufLayers() {
    std::int64_t maxLayer = -1;
    std::size_t unused = 0;
    std::set<std::string> used;
    for (const auto& [name, t] : m_ggufResolved) used.insert(t.tensor->name);
    for (const GgufTensor& t : m_gguf->header().tensors) {
        if (!used.count(t.name)) ++unused;
        if (t.name.rfind("blk.", 0) != 0) continue;
        try {
            maxLayer = std::max<std::int64_t>(maxLayer, std::stoll(t.name.substr(4)));
        } catch (const std::exception&) {
        }
    }
    if (maxLayer + 1 != m_config.numLayers)
        return invalid(m_folder + ": the file holds " + std::to_string(maxLayer + 1) + " blocks, its metadata says " +
                       std::to_string(m_config.numLayers) + " (block_count)");
    if (unused > 0)
        m_warnings.push_back(std::to_string(unused) + (unused == 1 ? " tensor" : " tensors") + " not needed for attention analysis " +
                             (unused == 1 ? "was" : "were") + " ignored (the output head, rope frequencies)");
    return {};
}

const ModelCheckpoint::GgufLocated* ModelCheckpoint::findGguf(const std::string& name) const {
    const auto it = m_ggufResolved.find(name);
    return it == m_ggufResolved.end() ? nullptr : &it->second;
}

Result<bool> ModelCheckpoint::readGgufInto(const GgufLocated& t, const std::string& name, float* out, std::size_t count) const {
    std::int64_t elements = 1;
    for (auto d : t.shape) elements *= d;
    if (static_cast<std::size_t>(elements) != count)
        return Error{ErrorCode::InvalidArgument, m_folder + ": tensor '" + name + "' holds " + std::to_string(elements) +
                                                     " values, " + std::to_string(count) + " asked"};
    if (!dequantizeGgml(t.tensor->type, m_gguf->bytes(*t.tensor) + t.offset, elements, out))
        return Error{ErrorCode::Unsupported, m_folder + ": tensor '" + t.tensor->name + "' of type " + ggmlTypeName(t.tensor->type) + " is not read"};
    if (t.permuteHeads > 0) unpermuteRows(out, t.permuteHeads, t.shape.front(), elements / t.shape.front());
    if (t.addend != 0)
        for (std::int64_t i = 0; i < elements; ++i) out[i] += t.addend;
    return allFinite(out, count);
}

Result<PlainTensor> ModelCheckpoint::readGgufRows(const GgufLocated& t, const std::string& name, const std::vector<std::int64_t>& rows) const {
    if (t.shape.size() != 2 || t.permuteHeads > 0)
        return Error{ErrorCode::InvalidArgument, m_folder + ": tensor '" + name + "' is not read by rows"};
    const std::int64_t cols = t.shape[1];
    const std::uint64_t rowBytes = storedBytes(t.tensor->type, cols);
    PlainTensor out = PlainTensor::zeros(DType::F32, {static_cast<std::int64_t>(rows.size()), cols});
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (rows[r] < 0 || rows[r] >= t.shape[0])
            return Error{ErrorCode::InvalidArgument, m_folder + ": row " + std::to_string(rows[r]) + " of '" + name + "' is out of range"};
        float* row = out.f32.data() + static_cast<std::int64_t>(r) * cols;
        dequantizeGgml(t.tensor->type, m_gguf->bytes(*t.tensor) + t.offset + static_cast<std::uint64_t>(rows[r]) * rowBytes, cols, row);
        if (t.addend != 0)
            for (std::int64_t i = 0; i < cols; ++i) row[i] += t.addend;
    }
    return out;
}

std::uint64_t ModelCheckpoint::ggufResidentBytes(const std::string& layerStem) const {
    std::map<std::string, std::uint64_t> layers;
    std::uint64_t outside = 0;
    for (const auto& [name, t] : m_ggufResolved) {
        if (name == "embed_tokens.weight") continue;  // its text's rows only
        if (name.compare(0, layerStem.size(), layerStem) != 0) {
            outside += t.bytes;
            continue;
        }
        layers[name.substr(0, name.find('.', layerStem.size()))] += t.bytes;
    }
    std::uint64_t largest = 0;
    for (const auto& [layer, bytes] : layers) largest = std::max(largest, bytes);
    return outside + largest;
}

}  // namespace attnscope::engine
