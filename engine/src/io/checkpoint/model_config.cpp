// config.json read as data (FORMATS.md §1.5, §1.6): the family its model_type names reads only the
// fields its forward pass needs (io/families/<id>/), each type- and range-checked before anything is
// allocated from it; the trainer's record is read here for every family.

#include <attnscope/model_checkpoint.h>

#include "base/api/config_fields.h"
#include "io/families/family.h"
#include "base/api/strict_json.h"

#include <cmath>
#include <optional>

namespace attnscope::engine {
namespace {

using Json = nlohmann::json;
using namespace config_fields;

/// How far the training went, when recorded; a field of the wrong type is refused.
template <class Bad>
Result<void> readTrainingRecord(const Json& node, const Bad& bad, ModelConfig& c) {
    TrainingRecord record;
    bool any = false;
    const auto number = [&](const char* name, std::optional<double>& out) -> std::optional<Error> {
        const auto it = node.find(name);
        if (it == node.end()) return std::nullopt;
        if (!it->is_number() || !std::isfinite(it->get<double>())) return bad(std::string("'") + name + "' must be a finite number");
        out = it->get<double>();
        any = true;
        return std::nullopt;
    };
    for (const auto& [name, out] : {std::pair<const char*, std::optional<double>*>{"final_loss", &record.finalLoss},
                                    {"final_accuracy", &record.finalAccuracy},
                                    {"chance_accuracy", &record.chanceAccuracy}})
        if (auto error = number(name, *out)) return *error;
    if (const auto steps = node.find("steps"); steps != node.end()) {
        if (!steps->is_number_unsigned()) return bad("'steps' must be a non-negative integer");
        record.steps = steps->get<std::int64_t>();
        any = true;
    }
    if (const auto task = node.find("task"); task != node.end() && task->is_string()) record.task = task->get<std::string>();
    if (any) c.training = record;
    return {};
}

/// The attention a model of the built-in trainer was trained with: ids and parameter values are
/// strings here; the engine checks them against the variant's schema when the model is opened.
Result<void> readTrainedAttention(const Json& node, const std::string& source, ModelConfig& c) {
    const auto bad = [&](const std::string& rule) {
        return Error{ErrorCode::InvalidInput, source + ": field 'attnscope' " + rule};
    };
    if (!node.is_object()) return bad("must be an object");
    const auto variant = node.find("variant");
    if (variant == node.end() || !variant->is_string() || variant->get<std::string>().empty())
        return bad("needs a 'variant' string");
    c.attentionVariant = variant->get<std::string>();
    if (const auto params = node.find("params"); params != node.end()) {
        if (!params->is_object()) return bad("'params' must be an object of strings");
        for (const auto& [name, value] : params->items()) {
            if (!value.is_string()) return bad("'params." + name + "' must be a string");
            c.attentionParams[name] = value.get<std::string>();
        }
    }
    if (const auto seed = node.find("seed"); seed != node.end()) {
        if (!seed->is_number_unsigned()) return bad("'seed' must be a non-negative integer");
        c.attentionSeed = seed->get<std::uint64_t>();
    }
    return readTrainingRecord(node, bad, c);
}

}  // namespace

Result<ModelConfig> parseModelConfig(const std::string& jsonText, const std::string& source) {
    auto parsed = parseStrictJson(jsonText, source);
    if (!parsed) return parsed.error();
    const Json& root = parsed.value();
    if (!root.is_object()) return Error{ErrorCode::InvalidInput, source + ": must be a JSON object"};
    FieldReader fields(root, source);

    ModelConfig config;
    ATTNSCOPE_TRY_ASSIGN(config.modelType, fields.text("model_type", ""));
    const FamilyEntry* family = findFamily(config.modelType);
    if (!family)
        return Error{ErrorCode::Unsupported, source + (config.modelType.empty() ? ": no model_type"
                                                                                : ": model_type '" + config.modelType + "' is not supported") +
                                                 "; supported architectures: " + supportedModelTypes()};
    config.family = family->id;

    for (const auto& [key, value] : root.items()) {
        if (key == "auto_map" || key == "trust_remote_code" || (!key.empty() && key.front() == '_' && key != "_name_or_path"))
            config.notices.push_back(source + ": field '" + key + "' ignored (code references are never followed)");
    }
    if (auto status = family->readConfig(fields, root, config); !status) return status.error();
    if (const auto it = root.find("attnscope"); it != root.end()) {
        auto trained = readTrainedAttention(*it, source, config);
        if (!trained) return trained.error();
    }
    return config;
}

std::vector<ExpectedTensor> expectedTensors(const ModelConfig& c) {
    const FamilyEntry& family = familyOf(c);
    return family.tensors ? family.tensors(c) : std::vector<ExpectedTensor>{};
}

}  // namespace attnscope::engine
