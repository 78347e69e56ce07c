#pragma once
// Reading config.json fields as allow-listed data: each integer, number, string or flag type- and
// range-checked, an error naming the field and the rule. Shared by the architectures' readers.

#include <attnscope/model_checkpoint.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

namespace attnscope::engine::config_fields {

using Json = nlohmann::json;

constexpr std::int64_t kMaxHeads = 1024;
constexpr std::int64_t kMaxLayers = 1000;
constexpr std::int64_t kMaxHidden = 65536;
constexpr std::int64_t kMaxIntermediate = 1 << 20;
constexpr std::int64_t kMaxVocab = 10'000'000;
constexpr std::int64_t kMaxPositions = 1 << 20;
constexpr std::int64_t kMaxTypeVocab = 1024;

class FieldReader {
public:
    FieldReader(const Json& root, std::string source) : m_root(root), m_source(std::move(source)) {}

    /// An integer in [lo, hi]; `fallback` when the key is absent (or null, when allowed).
    Result<std::int64_t> integer(const char* key, std::int64_t fallback, std::int64_t lo, std::int64_t hi,
                                 bool nullMeansFallback = false) const {
        const auto it = m_root.find(key);
        if (it == m_root.end() || (nullMeansFallback && it->is_null())) return fallback;
        if (!it->is_number_integer())
            return fail(key, std::string("must be an integer, got ") + it->type_name() + " " + it->dump());
        const bool negative = it->is_number_integer() && !it->is_number_unsigned();
        const std::int64_t v = negative ? it->get<std::int64_t>() : static_cast<std::int64_t>(std::min<std::uint64_t>(
                                                                         it->get<std::uint64_t>(), std::uint64_t{1} << 62));
        if (v < lo || v > hi)
            return fail(key, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + it->dump());
        return v;
    }
    /// A number in [lo, hi]; `fallback` when the key is absent (or null, when allowed).
    Result<double> number(const char* key, double fallback, double lo, double hi, bool nullMeansFallback = false) const {
        const auto it = m_root.find(key);
        if (it == m_root.end() || (nullMeansFallback && it->is_null())) return fallback;
        if (!it->is_number()) return fail(key, std::string("must be a number, got ") + it->type_name());
        const double v = it->get<double>();
        if (!(v >= lo && v <= hi))
            return fail(key, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + it->dump());
        return v;
    }
    Result<std::string> text(const char* key, const std::string& fallback) const {
        const auto it = m_root.find(key);
        if (it == m_root.end() || it->is_null()) return fallback;
        if (!it->is_string()) return fail(key, std::string("must be a string, got ") + it->type_name());
        return it->get<std::string>();
    }
    Result<bool> flag(const char* key, bool fallback) const {
        const auto it = m_root.find(key);
        if (it == m_root.end()) return fallback;
        if (!it->is_boolean()) return fail(key, std::string("must be true or false, got ") + it->dump());
        return it->get<bool>();
    }
    Error fail(const char* key, const std::string& rule) const {
        return Error{ErrorCode::InvalidInput, m_source + ": field '" + key + "' " + rule};
    }
    const std::string& source() const { return m_source; }

private:
    const Json& m_root;
    std::string m_source;
};

#define ATTNSCOPE_TRY_ASSIGN(target, expr) \
    do {                                   \
        auto attnscopeValue = (expr);      \
        if (!attnscopeValue) return attnscopeValue.error(); \
        target = attnscopeValue.value();   \
    } while (false)

inline Result<Activation> parseActivation(const FieldReader& fields, const char* key, const std::string& fallback) {
    std::string name;
    ATTNSCOPE_TRY_ASSIGN(name, fields.text(key, fallback));
    if (name == "gelu") return Activation::GeluErf;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::GeluTanh;
    if (name == "relu") return Activation::Relu;
    if (name == "silu" || name == "swish") return Activation::Silu;
    return fields.fail(key, "names activation '" + name + "'; supported: gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, relu, silu");
}

}  // namespace attnscope::engine::config_fields
