// Opening a model folder (FORMATS.md §1.1–§1.3, §1.5): config, then weights (single file or a
// sharded index whose file names are untrusted), then every expected tensor checked against the
// config so the forward pass never meets a surprise shape.

#include <attnscope/model_checkpoint.h>

#include "io/checkpoint/gguf_file.h"
#include "io/checkpoint/mxfp4.h"
#include "io/families/family.h"
#include "base/api/strict_json.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

namespace attnscope::engine {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Error invalid(std::string message) { return Error{ErrorCode::InvalidInput, std::move(message)}; }

std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
}

bool isFloatDType(StDType t) {
    return t == StDType::F32 || t == StDType::F16 || t == StDType::BF16 || t == StDType::F64;
}

/// weight_map values must be bare file names in the same folder (FORMATS.md §1.3).
bool isBareFileName(const std::string& name) {
    if (name.empty() || name == "." || name == "..") return false;
    return name.find_first_of(std::string("/\\\0", 3)) == std::string::npos && name.find("..") == std::string::npos;
}

/// Names users' weights might have when model.safetensors is absent, for a specific message.
const char* const kOtherWeightNames[] = {"pytorch_model.bin", "model.bin", "model.pt", "model.pth",
                                         "pytorch_model.bin.index.json", "tf_model.h5", "model.onnx",
                                         "flax_model.msgpack", "model.ckpt.index"};

}  // namespace

ModelCheckpoint::~ModelCheckpoint() = default;

std::uint64_t ModelCheckpoint::mappedBytes() const {
    std::uint64_t total = 0;
    if (m_gguf) {
        for (const auto& t : m_gguf->header().tensors) total += t.bytes;
        return total;
    }
    for (const auto& f : m_files) {
        for (const auto& t : f->header().tensors) total += t.end - t.begin;
    }
    return total;
}

std::uint64_t ModelCheckpoint::residentBytes(const std::string& layerStem) const {
    if (m_gguf) return ggufResidentBytes(layerStem);
    const std::vector<ExpectedTensor> expected = expectedTensors(m_config);
    std::map<std::string, std::uint64_t> layers;
    std::uint64_t outside = 0;
    for (const auto& [name, where] : m_resolved) {
        const std::uint64_t bytes = where.info->end - where.info->begin;
        if (!expected.empty() && name == expected.front().name) continue;  // the embedding: its text's rows only
        if (name.compare(0, layerStem.size(), layerStem) != 0) {
            outside += bytes;
            continue;
        }
        layers[name.substr(0, name.find('.', layerStem.size()))] += bytes;
    }
    std::uint64_t largest = 0;
    for (const auto& [layer, bytes] : layers) largest = std::max(largest, bytes);
    return outside + largest;
}

void ModelCheckpoint::dropMappedPages(const std::string& prefix) const {
    for (auto it = m_ggufResolved.lower_bound(prefix); it != m_ggufResolved.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
        m_gguf->dropPages(*it->second.tensor, it->second.offset, it->second.bytes);
    for (auto it = m_resolved.lower_bound(prefix); it != m_resolved.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
        it->second.file->dropPages(*it->second.info);
}

StorageTypes ModelCheckpoint::storageTypes() const {
    StorageTypes types;
    for (const auto& [name, t] : m_ggufResolved) ++types[ggmlTypeName(t.tensor->type)];
    for (const auto& [name, where] : m_resolved) ++types[stDTypeName(where.info->dtype)];
    return types;
}

Result<std::unique_ptr<ModelCheckpoint>> ModelCheckpoint::open(const std::string& folder) {
    std::error_code ec;
    if (fs::is_regular_file(folder, ec) && sniffFile(folder).kind == FileKind::Gguf) return openGguf(folder);
    if (!fs::is_directory(folder, ec))
        return Error{ErrorCode::NotFound, folder + ": not a folder (a model folder holds config.json, "
                                                   "model.safetensors and tokenizer files)"};
    std::unique_ptr<ModelCheckpoint> ckpt(new ModelCheckpoint());
    ckpt->m_folder = folder;
    if (auto read = ckpt->readConfig(); !read) return read.error();
    if (const FamilyEntry& family = familyOf(ckpt->m_config); !family.opensElsewhere.empty())
        return Error{ErrorCode::Unsupported, folder + ": " + family.opensElsewhere};
    auto all = ckpt->openWeights();
    if (!all) return all.error();
    if (auto resolved = ckpt->resolveExpected(all.value()); !resolved) return resolved.error();
    if (auto layers = ckpt->checkLayersAndUnused(all.value()); !layers) return layers.error();
    ckpt->m_all = std::move(all.value());
    return ckpt;
}

Result<void> ModelCheckpoint::readConfig() {
    const std::string configPath = (fs::path(m_folder) / "config.json").string();
    const SniffedFile configKind = sniffFile(configPath);
    if (configKind.kind == FileKind::Missing)
        return Error{ErrorCode::NotFound, m_folder + ": no config.json (a model folder holds config.json, "
                                                     "model.safetensors and tokenizer files)"};
    if (configKind.kind != FileKind::Json)
        return invalid(configPath + ": expected JSON, found " + fileKindName(configKind.kind));
    auto configText = readWholeFile(configPath, 4u << 20);
    if (!configText) return configText.error();
    auto config = parseModelConfig(configText.value(), configPath);
    if (!config) return config.error();
    m_config = std::move(config.value());
    for (const auto& n : m_config.notices) m_warnings.push_back(n);
    return {};
}

Result<const SafetensorsFile*> ModelCheckpoint::openShard(const std::string& name) {
    const std::string path = (fs::path(m_folder) / name).string();
    const SniffedFile sniffed = sniffFile(path);
    if (sniffed.kind != FileKind::Safetensors)
        return Error{sniffed.kind == FileKind::Missing ? ErrorCode::NotFound : ErrorCode::InvalidInput,
                     weightsFileProblem(path, sniffed)};
    auto file = SafetensorsFile::open(path);
    if (!file) return file.error();
    for (const auto& w : file.value()->header().warnings) m_warnings.push_back(path + ": " + w);
    m_files.push_back(std::move(file.value()));
    return m_files.back().get();
}

Result<ModelCheckpoint::TensorIndex> ModelCheckpoint::openWeights() {
    const fs::path dir(m_folder);
    const std::string indexPath = (dir / "model.safetensors.index.json").string();
    if (sniffFile(indexPath).kind != FileKind::Missing) return openShardedWeights(indexPath);
    if (sniffFile((dir / "model.safetensors").string()).kind == FileKind::Missing) {
        for (const char* other : kOtherWeightNames) {
            const std::string path = (dir / other).string();
            const SniffedFile sniffed = sniffFile(path);
            if (sniffed.kind == FileKind::Missing) continue;
            const std::string problem = weightsFileProblem(path, sniffed);
            return Error{ErrorCode::Unsupported, problem.empty() ? path + ": weights must be named model.safetensors" : problem};
        }
        return Error{ErrorCode::NotFound, m_folder + ": no model.safetensors or model.safetensors.index.json"};
    }
    auto opened = openShard("model.safetensors");
    if (!opened) return opened.error();
    TensorIndex all;
    for (const auto& info : opened.value()->header().tensors) all[info.name] = Located{opened.value(), &info};
    return all;
}

// The index's file names are untrusted: bare names only, and every tensor in exactly the shard
// the index names.
Result<ModelCheckpoint::TensorIndex> ModelCheckpoint::openShardedWeights(const std::string& indexPath) {
    const fs::path dir(m_folder);
    auto index = readStrictJsonFile(indexPath, 64u << 20);
    if (!index) return index.error();
    const Json& root = index.value();
    if (!root.is_object() || !root.contains("weight_map") || !root["weight_map"].is_object())
        return invalid(indexPath + ": must be an object with a 'weight_map' object");
    std::map<std::string, const SafetensorsFile*> shards;
    std::map<std::string, std::string> mapped;  // tensor -> shard
    for (const auto& [tensor, shardValue] : root["weight_map"].items()) {
        if (!shardValue.is_string()) return invalid(indexPath + ": weight_map['" + tensor + "'] must be a file name");
        const std::string shard = shardValue.get<std::string>();
        if (!isBareFileName(shard))
            return invalid(indexPath + ": weight_map['" + tensor + "'] names '" + shard +
                           "', which is not a plain file name in the model folder (refused)");
        mapped[tensor] = shard;
        if (!shards.count(shard)) {
            auto opened = openShard(shard);
            if (!opened) return opened.error();
            shards[shard] = opened.value();
        }
    }
    TensorIndex all;
    std::uint64_t totalBytes = 0;
    for (const auto& [shardName, file] : shards) {
        for (const auto& info : file->header().tensors) {
            const auto it = mapped.find(info.name);
            if (it == mapped.end())
                return invalid((dir / shardName).string() + ": tensor '" + info.name + "' is not listed in " + indexPath);
            if (all.count(info.name)) return invalid(indexPath + ": tensor '" + info.name + "' is stored in two shards");
            if (it->second != shardName)
                return invalid(indexPath + ": tensor '" + info.name + "' is listed for '" + it->second +
                               "' but stored in '" + shardName + "'");
            all[info.name] = Located{file, &info};
            totalBytes += info.end - info.begin;
        }
    }
    for (const auto& [tensor, shard] : mapped) {
        if (!all.count(tensor)) return invalid(indexPath + ": tensor '" + tensor + "' is not in its shard '" + shard + "'");
    }
    if (root.contains("metadata") && root["metadata"].is_object() && root["metadata"].contains("total_size") &&
        root["metadata"]["total_size"].is_number_unsigned() &&
        root["metadata"]["total_size"].get<std::uint64_t>() != totalBytes) {
        m_warnings.push_back(indexPath + ": metadata.total_size says " +
                             std::to_string(root["metadata"]["total_size"].get<std::uint64_t>()) +
                             " bytes, the shards hold " + std::to_string(totalBytes));
    }
    return all;
}

// Every tensor the config implies: found (under the architecture's prefix, LayerNorm gamma/beta
// accepted), of the expected shape and a floating dtype.
Result<void> ModelCheckpoint::resolveExpected(const TensorIndex& all) {
    const std::string& folder = m_folder;
    const ModelConfig& cfg = m_config;
    const FamilyEntry& family = familyOf(cfg);
    auto expected = expectedTensors(cfg);
    const std::vector<std::string>& prefixes = family.prefixes;
    bool prefixFound = false;
    for (const auto& p : prefixes) {
        if (all.count(p + expected.front().name)) {
            m_prefix = p;
            prefixFound = true;
            break;
        }
    }
    if (!prefixFound)
        return invalid(folder + ": no tensor '" + prefixes.front() + expected.front().name + "' (nor without the '" +
                       prefixes.front() + "' prefix): the weights do not belong to a " + cfg.modelType +
                       " model as config.json says");
    if (family.adaptToFile) {
        family.adaptToFile(m_config, [&](const std::string& name) { return all.count(m_prefix + name) > 0; }, m_warnings);
        expected = expectedTensors(cfg);
    }

    bool upcast = false;
    for (const auto& e : expected) {
        std::string full = m_prefix + e.name;
        if (!all.count(full)) {
            // Checkpoints converted from TensorFlow name LayerNorm parameters gamma/beta.
            std::string alt = full;
            const auto dot = alt.rfind('.');
            const std::string leaf = alt.substr(dot + 1);
            if (alt.find("LayerNorm") != std::string::npos && (leaf == "weight" || leaf == "bias"))
                alt = alt.substr(0, dot + 1) + (leaf == "weight" ? "gamma" : "beta");
            // Some exports store a tensor under another name (T5's tied embedding).
            if (const auto other = family.alternativeNames.find(e.name); other != family.alternativeNames.end())
                alt = m_prefix + other->second;
            if (!all.count(alt)) return invalid(folder + ": missing tensor '" + full + "' required by config.json");
            full = alt;
        }
        const auto& [file, info] = all.at(full);
        std::vector<std::int64_t> shape(info->shape.begin(), info->shape.end());
        if (shape != e.shape) {
            std::vector<std::int64_t> reversed(shape.rbegin(), shape.rend());
            return invalid(file->path() + ": tensor '" + full + "' has shape " + shapeText(shape) + ", expected " +
                           shapeText(e.shape) + " from config.json" +
                           (shape.size() == 2 && reversed == e.shape ? " (looks transposed)" : ""));
        }
        const bool packed = e.read == WeightRead::PackedBlocks || e.read == WeightRead::PackedScales;
        if (packed && info->dtype != StDType::U8)
            return invalid(file->path() + ": tensor '" + full + "' has dtype " + stDTypeName(info->dtype) +
                           ", expected U8 (MXFP4 blocks and scales)");
        if (!packed && !isFloatDType(info->dtype))
            return invalid(file->path() + ": tensor '" + full + "' has dtype " + stDTypeName(info->dtype) +
                           ", expected a floating-point type");
        upcast = upcast || (!packed && info->dtype != StDType::F32);
        m_resolved[e.name] = Located{file, info};
    }
    if (upcast) m_warnings.push_back("weights stored as F16/BF16/F64 are converted to F32 for analysis");
    return {};
}

// A layer group beyond num_hidden_layers means the config and the weights disagree; tensors the
// analysis does not use are counted in a warning.
Result<void> ModelCheckpoint::checkLayersAndUnused(const TensorIndex& all) {
    const std::string& folder = m_folder;
    const ModelConfig& cfg = m_config;
    std::set<std::string> used;
    for (const auto& [name, where] : m_resolved) used.insert(where.info->name);
    const std::string layerStem = m_prefix + familyOf(cfg).layerStem;
    std::int64_t maxLayer = -1;
    std::size_t unused = 0;
    for (const auto& [name, where] : all) {
        if (name.rfind(layerStem, 0) == 0) {
            const std::string rest = name.substr(layerStem.size());
            const auto dot = rest.find('.');
            try {
                maxLayer = std::max<std::int64_t>(maxLayer, std::stoll(rest.substr(0, dot)));
            } catch (const std::exception&) {
            }
        }
        if (!used.count(name)) ++unused;
        if (auto mismatch = expertsProblem(name.substr(std::min(name.size(), m_prefix.size())), layerStem.substr(m_prefix.size()));
            !mismatch.empty())
            return invalid(folder + ": tensor '" + name + "' " + mismatch);
    }
    if (maxLayer + 1 != cfg.numLayers)
        return invalid(folder + ": the weights hold " + std::to_string(maxLayer + 1) + " layers, config.json says " +
                       std::to_string(cfg.numLayers));
    if (unused > 0)
        m_warnings.push_back(std::to_string(unused) + (unused == 1 ? " tensor" : " tensors") +
                             " not needed for attention analysis " + (unused == 1 ? "was" : "were") + " ignored (heads, pooler, buffers)");
    return {};
}

// A router or expert the config has no place for: an expert index at or past num_experts, or a
// router in a layer the config makes dense.
std::string ModelCheckpoint::expertsProblem(const std::string& name, const std::string& layerStem) const {
    const ModelConfig& cfg = m_config;
    const bool router = name.find(".mlp.router.") != std::string::npos || name.find(".block_sparse_moe.gate.") != std::string::npos ||
                        name.find(".mlp.gate.") != std::string::npos || name.find(".mlp.shared_expert") != std::string::npos;
    std::string expertStem = ".mlp.experts.";
    for (const char* stem : {".block_sparse_moe.experts.", ".mlp.experts.expert_"})
        if (name.find(stem) != std::string::npos) expertStem = stem;
    const auto expertAt = name.find(expertStem);
    if (!router && expertAt == std::string::npos) return {};
    if (!cfg.moe.active()) return "belongs to a Switch layer, but config.json has no num_experts";
    // (GPT-OSS fuses every expert into one tensor: "mlp.experts.gate_up_proj", no index to check)
    const std::size_t indexAt = expertAt == std::string::npos ? name.size() : expertAt + expertStem.size();
    const bool fused = indexAt < name.size() && !std::isdigit(static_cast<unsigned char>(name[indexAt]));
    if (expertAt != std::string::npos && !fused) {
        const std::string rest = name.substr(expertAt + expertStem.size());
        std::int64_t index = -1;
        try {
            index = std::stoll(rest.substr(0, rest.find('.')));
        } catch (const std::exception&) {
        }
        if (index < 0 || index >= cfg.moe.experts)
            return "is an expert outside the " + std::to_string(cfg.moe.experts) + " experts (num_experts) config.json gives";
    }
    if (name.rfind(layerStem, 0) != 0) return {};
    std::int64_t layer = -1;
    try {
        layer = std::stoll(name.substr(layerStem.size()));
    } catch (const std::exception&) {
        return {};
    }
    if (!cfg.switchLayer(layer))
        return "puts experts in layer " + std::to_string(layer) + ", which config.json makes dense (" +
               (familyOf(cfg).expertLayersFrom ? familyOf(cfg).expertLayersFrom(cfg) : std::string("num_experts")) +
               ")";
    return {};
}

Result<PlainTensor> ModelCheckpoint::readF32(const std::string& name) const {
    if (const GgufLocated* g = findGguf(name)) {
        PlainTensor out = PlainTensor::zeros(DType::F32, g->shape);
        auto read = readGgufInto(*g, name, out.f32.data(), out.f32.size());
        if (!read) return read.error();
        return out;
    }
    const auto it = m_resolved.find(name);
    if (it == m_resolved.end()) return Error{ErrorCode::NotFound, m_folder + ": no tensor '" + name + "'"};
    auto t = it->second.file->read(it->second.info->name);
    if (!t) return t.error();
    return std::move(t.value());
}

Result<PlainTensor> ModelCheckpoint::readRowsF32(const std::string& name, const std::vector<std::int64_t>& rows) const {
    if (const GgufLocated* g = findGguf(name)) return readGgufRows(*g, name, rows);
    const auto it = m_resolved.find(name);
    if (it == m_resolved.end()) return Error{ErrorCode::NotFound, m_folder + ": no tensor '" + name + "'"};
    return it->second.file->readRowsF32(it->second.info->name, rows);
}

Result<bool> ModelCheckpoint::readF32Into(const std::string& name, float* out, std::size_t count) const {
    if (const GgufLocated* g = findGguf(name)) return readGgufInto(*g, name, out, count);
    const auto it = m_resolved.find(name);
    if (it == m_resolved.end()) return Error{ErrorCode::NotFound, m_folder + ": no tensor '" + name + "'"};
    return it->second.file->readF32Into(it->second.info->name, out, count);
}

Result<bool> ModelCheckpoint::readSliceF32Into(const std::string& name, std::int64_t index, float* out, std::size_t count) const {
    const auto it = m_resolved.find(name);
    if (it == m_resolved.end()) return Error{ErrorCode::NotFound, m_folder + ": no tensor '" + name + "'"};
    return it->second.file->readSliceF32Into(it->second.info->name, index, out, count);
}

Result<void> ModelCheckpoint::readMxfp4SliceInto(const std::string& base, std::int64_t index, float* out, std::size_t count) const {
    const auto blocks = m_resolved.find(base + "_blocks"), scales = m_resolved.find(base + "_scales");
    if (blocks == m_resolved.end() || scales == m_resolved.end())
        return Error{ErrorCode::NotFound, m_folder + ": no MXFP4 tensors '" + base + "_blocks' and '_scales'"};
    // (shapes were checked at open: blocks [E, rows, groups, 16], scales [E, rows, groups], U8)
    const std::vector<std::uint64_t>& shape = blocks->second.info->shape;
    const std::uint64_t rows = shape[1], groups = shape[2];
    if (index < 0 || static_cast<std::uint64_t>(index) >= shape[0] || rows * groups * 32 != count)
        return Error{ErrorCode::InvalidArgument, m_folder + ": MXFP4 slice " + std::to_string(index) + " of '" + base + "' does not fit"};
    const std::uint8_t* b = blocks->second.file->bytes(*blocks->second.info) + static_cast<std::uint64_t>(index) * rows * groups * 16;
    const std::uint8_t* s = scales->second.file->bytes(*scales->second.info) + static_cast<std::uint64_t>(index) * rows * groups;
    dequantizeMxfp4(b, s, static_cast<std::int64_t>(rows), static_cast<std::int64_t>(groups), out);
    return {};
}

std::vector<std::int64_t> ModelCheckpoint::shapeOf(const std::string& name) const {
    if (const GgufLocated* g = findGguf(name)) return g->shape;
    const auto it = m_resolved.find(name);
    if (it == m_resolved.end()) return {};
    return std::vector<std::int64_t>(it->second.info->shape.begin(), it->second.info->shape.end());
}

}  // namespace attnscope::engine
