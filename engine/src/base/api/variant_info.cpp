#include <attnscope/variant_info.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace attnscope::engine {
namespace {

std::string formatNumber(double v) {
    std::ostringstream s;
    s.precision(10);
    s << v;
    return s.str();
}

std::string rangeText(const ParamSpec& spec) {
    switch (spec.type) {
    case ParamType::Bool: return "true or false";
    case ParamType::Choice: {
        std::string out;
        for (const auto& c : spec.choices) out += (out.empty() ? "" : ", ") + c;
        return "one of: " + out;
    }
    case ParamType::Int:
    case ParamType::IntList:
        return "integers in [" + formatNumber(spec.minValue) + ", " + formatNumber(spec.maxValue) + "]";
    case ParamType::Float:
    case ParamType::FloatList:
        return "numbers in [" + formatNumber(spec.minValue) + ", " + formatNumber(spec.maxValue) + "]";
    }
    return {};
}

Error rangeError(const ParamSpec& spec, const std::string& text) {
    return makeError(ErrorCode::InvalidArgument,
                     "parameter '" + spec.name + "': '" + text + "' is not allowed (" + rangeText(spec) + ")");
}

bool parseInt(const std::string& text, std::int64_t& out) {
    if (text.empty()) return false;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end != text.c_str() + text.size()) return false;
    out = v;
    return true;
}

bool parseDouble(const std::string& text, double& out) {
    if (text.empty()) return false;
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return false;
    out = v;
    return true;
}

std::vector<std::string> splitList(const std::string& text) {
    std::vector<std::string> parts;
    std::string cur;
    for (char c : text) {
        if (c == ',') {
            parts.push_back(cur);
            cur.clear();
        } else if (c != ' ') {
            cur += c;
        }
    }
    parts.push_back(cur);
    return parts;
}

bool inRange(const ParamSpec& spec, double v) { return v >= spec.minValue && v <= spec.maxValue; }

// Checks a typed value against the schema (used for values that did not come from text).
Result<ParamValue> checkValue(const ParamSpec& spec, const ParamValue& value) {
    const std::string text = formatParamValue(value);
    switch (spec.type) {
    case ParamType::Bool:
        if (!std::holds_alternative<bool>(value)) return rangeError(spec, text);
        return value;
    case ParamType::Int:
        if (std::holds_alternative<std::int64_t>(value)) {
            if (!inRange(spec, static_cast<double>(std::get<std::int64_t>(value)))) return rangeError(spec, text);
            return value;
        }
        return rangeError(spec, text);
    case ParamType::Float:
        if (std::holds_alternative<std::int64_t>(value))
            return checkValue(spec, ParamValue{static_cast<double>(std::get<std::int64_t>(value))});
        if (!std::holds_alternative<double>(value) || !inRange(spec, std::get<double>(value)))
            return rangeError(spec, text);
        return value;
    case ParamType::Choice:
        if (!std::holds_alternative<std::string>(value)) return rangeError(spec, text);
        for (const auto& c : spec.choices)
            if (c == std::get<std::string>(value)) return value;
        return rangeError(spec, text);
    case ParamType::IntList: {
        if (std::holds_alternative<std::int64_t>(value))
            return checkValue(spec, ParamValue{std::vector<std::int64_t>{std::get<std::int64_t>(value)}});
        if (!std::holds_alternative<std::vector<std::int64_t>>(value)) return rangeError(spec, text);
        for (auto v : std::get<std::vector<std::int64_t>>(value))
            if (!inRange(spec, static_cast<double>(v))) return rangeError(spec, text);
        return value;
    }
    case ParamType::FloatList: {
        if (std::holds_alternative<double>(value))
            return checkValue(spec, ParamValue{std::vector<double>{std::get<double>(value)}});
        if (std::holds_alternative<std::int64_t>(value))
            return checkValue(spec, ParamValue{std::vector<double>{static_cast<double>(std::get<std::int64_t>(value))}});
        if (!std::holds_alternative<std::vector<double>>(value)) return rangeError(spec, text);
        for (auto v : std::get<std::vector<double>>(value))
            if (!std::isfinite(v) || !inRange(spec, v)) return rangeError(spec, text);
        return value;
    }
    }
    return rangeError(spec, text);
}

}  // namespace

const char* paramTypeName(ParamType type) {
    switch (type) {
    case ParamType::Bool: return "bool";
    case ParamType::Int: return "int";
    case ParamType::Float: return "float";
    case ParamType::Choice: return "choice";
    case ParamType::IntList: return "int_list";
    case ParamType::FloatList: return "float_list";
    }
    return "?";
}

const ParamSpec* VariantInfo::findParam(const std::string& param) const {
    for (const auto& p : params)
        if (p.name == param) return &p;
    return nullptr;
}

const char* diagnosticWhenName(DiagnosticWhen when) {
    switch (when) {
    case DiagnosticWhen::Always: return "always";
    case DiagnosticWhen::WithinDenseLimit: return "within dense limit";
    case DiagnosticWhen::OnRequest: return "on request";
    }
    return "always";
}

const DiagnosticSpec* VariantInfo::findDiagnostic(const std::string& name) const {
    for (const auto& d : diagnostics)
        if (d.name == name) return &d;
    return nullptr;
}

const DiagnosticSpec* VariantInfo::findInput(const std::string& name) const {
    for (const auto& d : inputs)
        if (d.name == name) return &d;
    return nullptr;
}

std::string formatParamValue(const ParamValue& value) {
    struct Visitor {
        std::string operator()(bool v) const { return v ? "true" : "false"; }
        std::string operator()(std::int64_t v) const { return std::to_string(v); }
        std::string operator()(double v) const { return formatNumber(v); }
        std::string operator()(const std::string& v) const { return v; }
        std::string operator()(const std::vector<std::int64_t>& v) const {
            std::string out;
            for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
            return out;
        }
        std::string operator()(const std::vector<double>& v) const {
            std::string out;
            for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + formatNumber(v[i]);
            return out;
        }
    };
    return std::visit(Visitor{}, value);
}

Result<ParamValue> parseParamValue(const ParamSpec& spec, const std::string& text) {
    switch (spec.type) {
    case ParamType::Bool:
        if (text == "true" || text == "1" || text == "yes" || text == "on") return ParamValue{true};
        if (text == "false" || text == "0" || text == "no" || text == "off") return ParamValue{false};
        return rangeError(spec, text);
    case ParamType::Int: {
        std::int64_t v = 0;
        if (!parseInt(text, v)) return rangeError(spec, text);
        return checkValue(spec, ParamValue{v});
    }
    case ParamType::Float: {
        double v = 0;
        if (!parseDouble(text, v)) return rangeError(spec, text);
        return checkValue(spec, ParamValue{v});
    }
    case ParamType::Choice: return checkValue(spec, ParamValue{text});
    case ParamType::IntList: {
        std::vector<std::int64_t> values;
        if (!text.empty()) {
            for (const auto& part : splitList(text)) {
                std::int64_t v = 0;
                if (!parseInt(part, v)) return rangeError(spec, text);
                values.push_back(v);
            }
        }
        return checkValue(spec, ParamValue{values});
    }
    case ParamType::FloatList: {
        std::vector<double> values;
        if (!text.empty()) {
            for (const auto& part : splitList(text)) {
                double v = 0;
                if (!parseDouble(part, v)) return rangeError(spec, text);
                values.push_back(v);
            }
        }
        return checkValue(spec, ParamValue{values});
    }
    }
    return rangeError(spec, text);
}

Result<ParamValues> resolveParams(const VariantInfo& info, const ParamValues& given) {
    ParamValues out;
    for (const auto& [name, value] : given) {
        const ParamSpec* spec = info.findParam(name);
        if (!spec) {
            std::string known;
            for (const auto& p : info.params) known += (known.empty() ? "" : ", ") + p.name;
            return makeError(ErrorCode::InvalidArgument,
                             "variant '" + info.id + "' has no parameter '" + name + "' (parameters: " +
                                 (known.empty() ? "none" : known) + ")");
        }
        auto checked = checkValue(*spec, value);
        if (!checked) return checked.error();
        out[name] = std::move(checked.value());
    }
    for (const auto& spec : info.params)
        if (!out.count(spec.name) && spec.defaultFrom.empty()) out[spec.name] = spec.defaultValue;
    for (const auto& spec : info.params) {
        if (out.count(spec.name)) continue;
        auto source = out.find(spec.defaultFrom);
        auto checked = source == out.end() ? Result<ParamValue>(spec.defaultValue) : checkValue(spec, source->second);
        if (!checked)
            return makeError(ErrorCode::InvalidArgument, "variant '" + info.id + "': " + spec.name + " follows " +
                                                             spec.defaultFrom + " when not given, but " +
                                                             checked.error().message);
        out[spec.name] = std::move(checked.value());
    }
    return out;
}

}  // namespace attnscope::engine
