// A GGUF file's metadata as the config.json of its architecture's family (llama.cpp's key names,
// LLM_KV in its llama-arch.cpp, on the left; Hugging Face's on the right), so the family's reader
// checks every value as it checks a folder's. Only what the file states is written: the family's
// defaults stay the reference's.

#include "io/checkpoint/gguf_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

namespace attnscope::engine {
namespace {

using Json = nlohmann::json;

class Metadata {
public:
    Metadata(const GgufFile& file, std::string arch) : m_file(file), m_arch(std::move(arch)) {}

    const GgufValue* find(const std::string& key) const {
        const auto& m = m_file.header().metadata;
        const auto it = m.find(key);
        return it == m.end() ? nullptr : &it->second;
    }
    /// `<arch>.<key>`
    const GgufValue* own(const std::string& key) const { return find(m_arch + "." + key); }

    Result<std::optional<std::int64_t>> integer(const std::string& key) const {
        const GgufValue* v = own(key);
        if (!v) return std::optional<std::int64_t>{};
        if (const auto* u = std::get_if<std::uint64_t>(&v->value)) {
            if (*u > (1ull << 40)) return refuse(key, "is too large: " + std::to_string(*u));
            return std::optional<std::int64_t>{static_cast<std::int64_t>(*u)};
        }
        if (const auto* i = std::get_if<std::int64_t>(&v->value)) return std::optional<std::int64_t>{*i};
        return refuse(key, v->isArray() ? "is a list (a value per layer is not read); one integer expected" : "must be an integer");
    }
    Result<std::optional<double>> number(const std::string& key) const {
        const GgufValue* v = own(key);
        if (!v) return std::optional<double>{};
        if (const auto* d = std::get_if<double>(&v->value)) return std::optional<double>{*d};
        if (const auto* u = std::get_if<std::uint64_t>(&v->value)) return std::optional<double>{static_cast<double>(*u)};
        if (const auto* i = std::get_if<std::int64_t>(&v->value)) return std::optional<double>{static_cast<double>(*i)};
        return refuse(key, "must be a number");
    }
    Result<std::optional<std::string>> text(const std::string& key) const {
        const GgufValue* v = own(key);
        if (!v) return std::optional<std::string>{};
        if (const auto* s = std::get_if<std::string>(&v->value)) return std::optional<std::string>{*s};
        return refuse(key, "must be a string");
    }
    Error refuse(const std::string& key, const std::string& rule) const {
        return Error{ErrorCode::InvalidInput, m_file.path() + ": GGUF key '" + m_arch + "." + key + "' " + rule};
    }
    const std::string& arch() const { return m_arch; }

private:
    const GgufFile& m_file;
    std::string m_arch;
};

// Copies `<arch>.<key>` into config[field] when the file has it.
Result<void> copyInteger(const Metadata& m, Json& config, const char* key, const char* field) {
    auto v = m.integer(key);
    if (!v) return v.error();
    if (v.value()) config[field] = *v.value();
    return {};
}
Result<void> copyNumber(const Metadata& m, Json& config, const char* key, const char* field) {
    auto v = m.number(key);
    if (!v) return v.error();
    if (v.value()) config[field] = *v.value();
    return {};
}

// rope.scaling.* as rope_scaling; llama.cpp's "none" is no scaling.
Result<void> readRopeScaling(const Metadata& m, Json& config) {
    auto type = m.text("rope.scaling.type");
    if (!type) return type.error();
    if (!type.value() || *type.value() == "none") return {};
    const std::string& t = *type.value();
    if (t != "linear" && t != "yarn") return m.refuse("rope.scaling.type", "'" + t + "' is not computed (none, linear and yarn are)");
    Json scaling{{"rope_type", t}};
    auto factor = m.number("rope.scaling.factor");
    if (!factor) return factor.error();
    if (factor.value()) scaling["factor"] = *factor.value();
    auto original = m.integer("rope.scaling.original_context_length");
    if (!original) return original.error();
    if (original.value()) scaling["original_max_position_embeddings"] = *original.value();
    for (const auto& [key, field] : {std::pair<const char*, const char*>{"rope.scaling.attn_factor", "attention_factor"},
                                     {"rope.scaling.yarn_beta_fast", "beta_fast"},
                                     {"rope.scaling.yarn_beta_slow", "beta_slow"}}) {
        auto v = m.number(key);
        if (!v) return v.error();
        if (v.value() && t == "yarn") scaling[field] = *v.value();
    }
    config["rope_scaling"] = scaling;
    return {};
}

// Llama 3's rope scaling is stored as one divisor per frequency (the rope_freqs tensor, F32): the
// same numbers LongRoPE's factor lists hold, so it is read as those, with no attention factor.
Result<void> readRopeFrequencyFactors(const GgufFile& file, Json& config) {
    const GgufTensor* t = file.find("rope_freqs.weight");
    if (!t) return {};
    if (t->type != static_cast<std::uint32_t>(GgmlType::F32) || t->shape.size() != 1)
        return Error{ErrorCode::InvalidInput, file.path() + ": tensor 'rope_freqs.weight' must be one F32 row"};
    Json factors = Json::array();
    const std::uint8_t* bytes = file.bytes(*t);
    for (std::int64_t i = 0; i < t->shape[0]; ++i) {
        float v;
        std::memcpy(&v, bytes + 4 * i, 4);
        if (!std::isfinite(v) || v <= 0)
            return Error{ErrorCode::InvalidInput, file.path() + ": tensor 'rope_freqs.weight' entry " + std::to_string(i) +
                                                      " must be a positive number"};
        factors.push_back(v);
    }
    const std::int64_t context = config.value("max_position_embeddings", std::int64_t{2048});
    config["rope_scaling"] = Json{{"rope_type", "longrope"}, {"short_factor", factors}, {"long_factor", factors},
                                  {"original_max_position_embeddings", context}, {"attention_factor", 1.0}};
    return {};
}

// The common decoder fields.
Result<void> readDecoder(const Metadata& m, const GgufFile& file, Json& config) {
    const std::pair<const char*, const char*> integers[] = {
        {"context_length", "max_position_embeddings"},   {"embedding_length", "hidden_size"},
        {"block_count", "num_hidden_layers"},            {"feed_forward_length", "intermediate_size"},
        {"attention.head_count", "num_attention_heads"}, {"attention.head_count_kv", "num_key_value_heads"},
        {"attention.key_length", "head_dim"},            {"vocab_size", "vocab_size"},
        {"expert_count", "num_experts"},                 {"expert_used_count", "num_experts_per_tok"},
        {"expert_feed_forward_length", "moe_intermediate_size"},
        {"expert_shared_feed_forward_length", "shared_expert_intermediate_size"},
        {"attention.sliding_window", "sliding_window"},
    };
    for (const auto& [key, field] : integers)
        if (auto copied = copyInteger(m, config, key, field); !copied) return copied;
    if (auto eps = copyNumber(m, config, "attention.layer_norm_rms_epsilon", "rms_norm_eps"); !eps) return eps;
    if (auto theta = copyNumber(m, config, "rope.freq_base", "rope_theta"); !theta) return theta;
    if (auto cap = copyNumber(m, config, "attn_logit_softcapping", "attn_logit_softcapping"); !cap) return cap;
    if (auto cap = copyNumber(m, config, "final_logit_softcapping", "final_logit_softcapping"); !cap) return cap;
    if (!m.own("block_count") || !m.own("embedding_length") || !m.own("attention.head_count"))
        return m.refuse("block_count", "(with embedding_length and attention.head_count) is needed and missing");
    // the vocabulary: stated, else the tokenizer's length, else the embedding's rows
    if (!config.contains("vocab_size")) {
        if (const GgufValue* tokens = m.find("tokenizer.ggml.tokens"); tokens && tokens->isArray())
            config["vocab_size"] = std::get<GgufValue::Array>(tokens->value).size();
        else if (const GgufTensor* embedding = file.find("token_embd.weight"); embedding && embedding->shape.size() == 2)
            config["vocab_size"] = embedding->shape[1];
    }
    auto rotary = m.integer("rope.dimension_count");
    if (!rotary) return rotary.error();
    if (rotary.value()) {
        const std::int64_t heads = config["num_attention_heads"].get<std::int64_t>();
        const std::int64_t headDim = config.value("head_dim", config["hidden_size"].get<std::int64_t>() / std::max<std::int64_t>(1, heads));
        if (*rotary.value() != headDim) config["partial_rotary_factor"] = static_cast<double>(*rotary.value()) / static_cast<double>(headDim);
    }
    for (const auto& [key, field] : {std::pair<const char*, const char*>{"tokenizer.ggml.bos_token_id", "bos_token_id"},
                                     {"tokenizer.ggml.eos_token_id", "eos_token_id"}}) {
        const GgufValue* v = m.find(key);
        if (v && std::holds_alternative<std::uint64_t>(v->value)) config[field] = std::get<std::uint64_t>(v->value);
    }
    // generation stops at the end-of-text token and at an end-of-turn token llama.cpp names apart
    if (const GgufValue* eot = m.find("tokenizer.ggml.eot_token_id"); eot && std::holds_alternative<std::uint64_t>(eot->value)) {
        Json stops = Json::array();
        if (config.contains("eos_token_id")) stops.push_back(config["eos_token_id"]);
        if (stops.empty() || stops.front() != std::get<std::uint64_t>(eot->value)) stops.push_back(std::get<std::uint64_t>(eot->value));
        config["eos_token_id"] = stops;
    }
    if (auto scaling = readRopeScaling(m, config); !scaling) return scaling;
    return readRopeFrequencyFactors(file, config);
}

}  // namespace

Result<GgufModelConfig> ggufConfigJson(const GgufFile& file) {
    const auto& metadata = file.header().metadata;
    const auto archIt = metadata.find("general.architecture");
    if (archIt == metadata.end() || !std::holds_alternative<std::string>(archIt->second.value))
        return Error{ErrorCode::InvalidInput, file.path() + ": GGUF key 'general.architecture' is missing (it names the model's architecture)"};
    const std::string arch = std::get<std::string>(archIt->second.value);
    const FamilyEntry* family = findGgufFamily(arch, metadata.count(arch + ".expert_count") > 0);
    if (!family)
        return Error{ErrorCode::Unsupported, file.path() + ": GGUF architecture '" + arch + "' is not read (" +
                                                 supportedGgufArchitectures() + " are)"};
    const Metadata m(file, arch);
    Json config{{"model_type", family->id}};
    if (auto decoder = readDecoder(m, file, config); !decoder) return decoder.error();
    if (family->gguf.completeConfig)
        family->gguf.completeConfig(config, [&file](const std::string& name) { return file.find(name) != nullptr; });
    return GgufModelConfig{family, std::move(config)};
}

}  // namespace attnscope::engine
