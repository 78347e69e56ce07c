// Keeping a context index beside the model (attnscope/context_search.h): a safetensors file with
// each layer's vectors and strongest keys, the token spans and the corpus, and in its metadata
// the model and corpus it was built from.

#include <attnscope/context_search.h>
#include <attnscope/safetensors.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace attnscope::engine {
namespace {

constexpr const char* kFormat = "attnscope-context-index";
constexpr const char* kVersion = "1";

std::string hex16(std::uint64_t value) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
}

std::string userCacheFolder() {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/attnscope/context";
    if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/attnscope/context";
    return {};
}

std::string layerName(std::int64_t layer, const char* what) { return "layer." + std::to_string(layer) + "." + what; }

Error damaged(const std::string& path, const std::string& why) {
    return makeError(ErrorCode::InvalidInput, "the kept context index " + path + " is damaged: " + why);
}

/// Reads tensor `name` as F32 or I32 with exactly `count` values.
template <class T>
Result<std::vector<T>> readValues(const SafetensorsFile& file, const std::string& name, std::size_t count) {
    auto tensor = file.read(name);
    if (!tensor) return damaged(file.path(), tensor.error().message);
    std::vector<T>* values = nullptr;
    if constexpr (std::is_same_v<T, float>) values = &tensor->f32;
    if constexpr (std::is_same_v<T, std::int32_t>) values = &tensor->i32;
    if constexpr (std::is_same_v<T, std::int64_t>) values = &tensor->i64;
    if constexpr (std::is_same_v<T, std::uint8_t>) values = &tensor->u8;
    if (values->size() != count) return damaged(file.path(), name + " has " + std::to_string(values->size()) + " values, not " + std::to_string(count));
    return std::move(*values);
}

}  // namespace

std::vector<std::string> contextIndexPaths(const std::string& modelFolder, const std::string& identity, std::uint64_t corpusHash,
                                           ContextSpace space) {
    const std::string name = "corpus-" + hex16(corpusHash) + "-" + contextSpaceName(space) + ".safetensors";
    std::error_code error;
    std::vector<std::string> paths;
    if (!modelFolder.empty()) {
        const bool isFolder = std::filesystem::is_directory(modelFolder, error);
        paths.push_back(isFolder ? modelFolder + "/attnscope-context/" + name : modelFolder + ".attnscope-context/" + name);
    }
    const std::string cache = userCacheFolder();
    if (!cache.empty()) {
        // (a model's folder by its absolute path, so that two relative spellings share one)
        const std::string absolute = modelFolder.empty() ? std::string() : std::filesystem::absolute(modelFolder, error).lexically_normal().string();
        paths.push_back(cache + "/" + hex16(contextCorpusHash(absolute + "|" + identity)) + "/" + name);
    }
    return paths;
}

Result<void> saveContextIndex(const ContextIndex& index, const std::string& path) {
    std::error_code error;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), error);
    if (error) return makeError(ErrorCode::Io, "cannot create the folder of " + path + ": " + error.message());

    const auto n = index.size();
    std::vector<std::int64_t> spans;
    nlohmann::json texts = nlohmann::json::array();
    for (const auto& token : index.tokens) {
        spans.push_back(token.begin);
        spans.push_back(token.end);
        texts.push_back(token.text);
    }
    std::vector<std::vector<std::int32_t>> keys(static_cast<std::size_t>(index.layers));
    std::vector<std::vector<float>> weights(static_cast<std::size_t>(index.layers));
    std::vector<StWriteItem> items;
    for (std::int64_t layer = 0; layer < index.layers; ++layer) {
        for (const ContextPeek& peek : index.peeks[static_cast<std::size_t>(layer)]) {
            keys[static_cast<std::size_t>(layer)].push_back(peek.key);
            weights[static_cast<std::size_t>(layer)].push_back(peek.weight);
        }
        items.push_back(StWriteItem::view(layerName(layer, "vectors"), DType::F32, {n, index.width},
                                          index.vectors[static_cast<std::size_t>(layer)].data()));
        items.push_back(StWriteItem::view(layerName(layer, "peek_key"), DType::I32, {n, index.heads}, keys[static_cast<std::size_t>(layer)].data()));
        items.push_back(StWriteItem::view(layerName(layer, "peek_weight"), DType::F32, {n, index.heads},
                                          weights[static_cast<std::size_t>(layer)].data()));
    }
    items.push_back(StWriteItem::view("token_spans", DType::I64, {n, 2}, spans.data()));
    items.push_back(StWriteItem::view("corpus", DType::U8, {static_cast<std::int64_t>(index.corpus.size())}, index.corpus.data()));
    const std::map<std::string, std::string> metadata = {
        {"format", kFormat},
        {"version", kVersion},
        {"model", index.modelIdentity},
        {"corpus_hash", hex16(index.corpusHash)},
        {"space", contextSpaceName(index.space)},
        {"shape", nlohmann::json{index.layers, index.heads, index.headDim, index.width}.dump()},
        {"indexed_bytes", std::to_string(index.indexedBytes)},
        {"tokens", texts.dump()},
        {"notices", nlohmann::json(index.notices).dump()},
    };
    return writeSafetensors(path, items, metadata);
}

Result<std::shared_ptr<const ContextIndex>> loadContextIndex(const std::string& path) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) return makeError(ErrorCode::NotFound, "no context index is kept at " + path);
    auto file = SafetensorsFile::open(path);
    if (!file) return damaged(path, file.error().message);
    const auto& meta = (*file)->header().metadata;
    auto field = [&](const char* key) -> std::string {
        const auto it = meta.find(key);
        return it == meta.end() ? std::string() : it->second;
    };
    if (field("format") != kFormat || field("version") != kVersion) return damaged(path, "not a context index of this version");
    auto index = std::make_shared<ContextIndex>();
    try {
        index->modelIdentity = field("model");
        index->corpusHash = std::stoull(field("corpus_hash"), nullptr, 16);
        const auto space = parseContextSpace(field("space"));
        if (!space) return damaged(path, "unknown space \"" + field("space") + "\"");
        index->space = *space;
        const auto shape = nlohmann::json::parse(field("shape"));
        index->layers = shape.at(0).get<std::int64_t>();
        index->heads = shape.at(1).get<std::int64_t>();
        index->headDim = shape.at(2).get<std::int64_t>();
        index->width = shape.at(3).get<std::int64_t>();
        index->indexedBytes = std::stoll(field("indexed_bytes"));
        index->notices = nlohmann::json::parse(field("notices")).get<std::vector<std::string>>();
        const auto texts = nlohmann::json::parse(field("tokens")).get<std::vector<std::string>>();
        if (index->layers <= 0 || index->heads <= 0 || index->width <= 0 || index->layers > 4096 || index->heads > 4096)
            return damaged(path, "its shape is out of range");
        const std::size_t n = texts.size();
        auto spans = readValues<std::int64_t>(**file, "token_spans", n * 2);
        if (!spans) return spans.error();
        const auto* corpusInfo = (*file)->find("corpus");
        if (!corpusInfo || corpusInfo->shape.size() != 1) return damaged(path, "it has no corpus");
        auto corpus = readValues<std::uint8_t>(**file, "corpus", corpusInfo->shape[0]);
        if (!corpus) return corpus.error();
        index->corpus.assign(corpus->begin(), corpus->end());
        for (std::size_t t = 0; t < n; ++t) {
            ContextToken token{texts[t], (*spans)[2 * t], (*spans)[2 * t + 1]};
            if (token.begin < 0 || token.end < token.begin || token.end > static_cast<std::int64_t>(index->corpus.size()))
                return damaged(path, "token " + std::to_string(t) + " lies outside the corpus");
            index->tokens.push_back(std::move(token));
        }
        for (std::int64_t layer = 0; layer < index->layers; ++layer) {
            auto vectors = readValues<float>(**file, layerName(layer, "vectors"), n * static_cast<std::size_t>(index->width));
            auto keys = readValues<std::int32_t>(**file, layerName(layer, "peek_key"), n * static_cast<std::size_t>(index->heads));
            auto weights = readValues<float>(**file, layerName(layer, "peek_weight"), n * static_cast<std::size_t>(index->heads));
            if (!vectors) return vectors.error();
            if (!keys) return keys.error();
            if (!weights) return weights.error();
            std::vector<ContextPeek> peeks(keys->size());
            for (std::size_t i = 0; i < peeks.size(); ++i) peeks[i] = {(*keys)[i] < static_cast<std::int64_t>(n) ? (*keys)[i] : -1, (*weights)[i]};
            index->vectors.push_back(std::move(*vectors));
            index->peeks.push_back(std::move(peeks));
        }
    } catch (const std::exception& e) {
        return damaged(path, e.what());
    }
    return std::shared_ptr<const ContextIndex>(std::move(index));
}

}  // namespace attnscope::engine
