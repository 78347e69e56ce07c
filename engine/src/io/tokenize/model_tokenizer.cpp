// Finding and loading the tokenizer files of a model folder (FORMATS.md §1.1, §1.7).

#include <attnscope/model_tokenizer.h>

#include "io/families/family.h"

#include "io/tokenize/byte_tokenizer.h"
#include "io/tokenize/sentencepiece_tokenizer.h"

#include "base/api/strict_json.h"
#include "io/tokenize/byte_level_bpe.h"
#include "io/tokenize/tokenizer_common.h"
#include "io/tokenize/wordpiece.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <utility>

namespace attnscope::engine {

namespace {

/// Real tokenizer files are at most a few tens of MB (the largest tokenizer.json files ~20 MB).
constexpr std::uint64_t kMaxTokenizerFileBytes = std::uint64_t{64} << 20;
constexpr std::uint64_t kMaxConfigFileBytes = std::uint64_t{1} << 20;

using Json = nlohmann::json;

bool isFile(const std::filesystem::path& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec);
}

/// The first of `names` that exists in `folder`, or "".
std::string firstExisting(const std::filesystem::path& folder, std::initializer_list<const char*> names) {
    for (const char* name : names)
        if (isFile(folder / name)) return (folder / name).string();
    return {};
}

Error invalid(std::string message) { return makeError(ErrorCode::InvalidInput, std::move(message)); }

/// A special-token entry of tokenizer_config.json: "[UNK]" or {"content": "[UNK]", …}.
std::optional<Error> readTokenName(const Json& config, const char* key, const std::string& source, std::string& out) {
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return std::nullopt;
    const Json* value = &*it;
    if (value->is_object()) {
        const auto content = value->find("content");
        if (content == value->end()) return invalid(source + ": " + key + " has no \"content\"");
        value = &*content;
    }
    if (!value->is_string() || value->get<std::string>().empty())
        return invalid(source + ": " + key + " must be a non-empty string");
    out = value->get<std::string>();
    return std::nullopt;
}

std::optional<Error> readBool(const Json& config, const char* key, const std::string& source, bool& out) {
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) return invalid(source + ": " + key + " must be true or false");
    out = it->get<bool>();
    return std::nullopt;
}

/// tokenizer_config.json, when present: an object (otherwise an error); null when absent.
Result<Json> readTokenizerConfig(const std::filesystem::path& folder) {
    const std::filesystem::path path = folder / "tokenizer_config.json";
    if (!isFile(path)) return Json(nullptr);
    auto text = readWholeFile(path.string(), kMaxConfigFileBytes);
    if (!text) return text.error();
    auto json = parseStrictJson(text.value(), path.string());
    if (!json) return json.error();
    if (!json.value().is_object()) return invalid(path.string() + ": must be a JSON object");
    return std::move(json).value();
}

Result<std::shared_ptr<const ModelTokenizer>> loadWordPiece(const std::filesystem::path& folder,
                                                            const std::string& vocabPath) {
    auto config = readTokenizerConfig(folder);
    if (!config) return config.error();
    WordPieceOptions options;
    options.source = vocabPath;
    if (config.value().is_object()) {
        const Json& c = config.value();
        const std::string source = (folder / "tokenizer_config.json").string();
        if (auto e = readBool(c, "do_lower_case", source, options.lowercase)) return *e;
        if (auto e = readBool(c, "tokenize_chinese_chars", source, options.handleChineseChars)) return *e;
        bool strip = false;
        const auto it = c.find("strip_accents");
        if (it != c.end() && !it->is_null()) {
            if (auto e = readBool(c, "strip_accents", source, strip)) return *e;
            options.stripAccents = strip;
        }
        std::string cls = "[CLS]";
        std::string sep = "[SEP]";
        std::string pad = "[PAD]";
        std::string mask = "[MASK]";
        if (auto e = readTokenName(c, "unk_token", source, options.unkToken)) return *e;
        if (auto e = readTokenName(c, "cls_token", source, cls)) return *e;
        if (auto e = readTokenName(c, "sep_token", source, sep)) return *e;
        if (auto e = readTokenName(c, "pad_token", source, pad)) return *e;
        if (auto e = readTokenName(c, "mask_token", source, mask)) return *e;
        options.neverSplit = {pad, options.unkToken, cls, sep, mask};
        options.singleTemplate = templateWithSpecials(cls, sep);
    }
    auto text = readWholeFile(vocabPath, kMaxTokenizerFileBytes);
    if (!text) return text.error();
    return makeWordPieceTokenizer(text.value(), options);
}

Result<std::shared_ptr<const ModelTokenizer>> loadByteLevelBpe(const std::filesystem::path& folder,
                                                               const std::string& vocabPath,
                                                               const std::string& mergesPath, bool roberta) {
    auto config = readTokenizerConfig(folder);
    if (!config) return config.error();
    ByteLevelBpeOptions options;
    options.vocabSource = vocabPath;
    options.mergesSource = mergesPath;
    std::string bos = roberta ? "<s>" : "";
    std::string eos = roberta ? "</s>" : "";
    if (config.value().is_object()) {
        const std::string source = (folder / "tokenizer_config.json").string();
        const Json& c = config.value();
        if (auto e = readBool(c, "add_prefix_space", source, options.addPrefixSpace)) return *e;
        if (roberta) {
            if (auto e = readTokenName(c, "bos_token", source, bos)) return *e;
            if (auto e = readTokenName(c, "eos_token", source, eos)) return *e;
        }
    }
    options.singleTemplate = roberta ? templateWithSpecials(bos, eos) : std::vector<TemplateItem>{};
    options.specialTokens = roberta ? std::vector<std::string>{"<s>", "<pad>", "</s>", "<unk>", "<mask>"}
                                    : std::vector<std::string>{"<|endoftext|>"};
    auto vocabText = readWholeFile(vocabPath, kMaxTokenizerFileBytes);
    if (!vocabText) return vocabText.error();
    auto mergesText = readWholeFile(mergesPath, kMaxTokenizerFileBytes);
    if (!mergesText) return mergesText.error();
    return makeByteLevelBpeTokenizer(vocabText.value(), mergesText.value(), options);
}

}  // namespace

Result<std::shared_ptr<const ModelTokenizer>> loadModelTokenizer(const std::string& folder, TokenizerFiles files,
                                                                 const std::string& modelType, std::int64_t bosId,
                                                                 std::int64_t eosId) {
    const std::filesystem::path dir(folder);
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        return makeError(ErrorCode::NotFound, folder + ": not a folder");
    if (files == TokenizerFiles::None)
        return makeError(ErrorCode::Unsupported, folder + ": a " + modelType + " model reads no text");

    // T5's tokenizer.json is a Unigram model; its spiece.model holds the same and more exactly.
    const bool t5 = files == TokenizerFiles::T5SentencePiece;
    if (t5 && isFile(dir / "spiece.model")) return loadSentencePieceTokenizer((dir / "spiece.model").string(), -1, eosId);
    // Llama 2, Mistral and TinyLlama ship tokenizer.model (the SentencePiece model) and usually
    // tokenizer.json too: the JSON is read first, as transformers' fast tokenizers do; the
    // SentencePiece model serves when the JSON is missing or of a shape not read here.
    const bool sentencePieceModel = files == TokenizerFiles::JsonOrSentencePiece && isFile(dir / "tokenizer.model");
    const std::filesystem::path tokenizerJson = dir / "tokenizer.json";
    if (isFile(tokenizerJson)) {
        auto text = readWholeFile(tokenizerJson.string(), kMaxTokenizerFileBytes);
        if (!text) return text.error();
        auto fromJson = makeTokenizerFromJson(text.value(), tokenizerJson.string());
        if (fromJson || !sentencePieceModel || fromJson.error().code != ErrorCode::Unsupported) return fromJson;
    }
    if (sentencePieceModel) return loadSentencePieceTokenizer((dir / "tokenizer.model").string(), bosId, -1);

    // Byte-level models (the built-in trainer's Transformer-XL) need no tokenizer file.
    if (files == TokenizerFiles::JsonOrBytes) return makeByteTokenizer();
    if (t5) return makeError(ErrorCode::NotFound, folder + ": no spiece.model (a " + modelType + " model's SentencePiece tokenizer)");
    if (files == TokenizerFiles::JsonOnly || files == TokenizerFiles::JsonOrSentencePiece)
        return makeError(ErrorCode::Unsupported, folder + ": no tokenizer.json, and model type '" + modelType +
                                                     "' has no vocabulary-file tokenizer (bert, roberta, gpt2)");
    if (files == TokenizerFiles::WordPiece) {
        const std::string vocab = firstExisting(dir, {"vocab.txt"});
        if (vocab.empty())
            return makeError(ErrorCode::NotFound, folder + ": no tokenizer.json or vocab.txt (a " + modelType + " model needs one)");
        return loadWordPiece(dir, vocab);
    }
    const std::string vocab = firstExisting(dir, {"vocab.json", "encoder.json"});
    const std::string merges = firstExisting(dir, {"merges.txt", "vocab.bpe"});
    if (vocab.empty() || merges.empty())
        return makeError(ErrorCode::NotFound,
                         folder + ": no tokenizer.json, and " +
                             (vocab.empty() ? std::string("no vocab.json or encoder.json") : std::string()) +
                             (vocab.empty() && merges.empty() ? " and " : "") +
                             (merges.empty() ? std::string("no merges.txt or vocab.bpe") : std::string()) + " (a " +
                             modelType + " model needs them)");
    return loadByteLevelBpe(dir, vocab, merges, files == TokenizerFiles::RobertaBpe);
}

Result<std::shared_ptr<const ModelTokenizer>> loadModelTokenizer(const std::string& folder, const std::string& modelType,
                                                                 std::int64_t bosId, std::int64_t eosId) {
    const FamilyEntry* family = findFamily(modelType);
    if (!family)
        for (const FamilyEntry& entry : familyEntries())
            if (std::find(entry.tokenizerAlso.begin(), entry.tokenizerAlso.end(), modelType) != entry.tokenizerAlso.end()) family = &entry;
    if (!family)
        return makeError(ErrorCode::Unsupported, folder + ": no tokenizer is known for model type '" + modelType +
                                                     "' (supported: " + supportedModelTypes() + ")");
    return loadModelTokenizer(folder, family->tokenizer, modelType, bosId, eosId);
}

}  // namespace attnscope::engine
