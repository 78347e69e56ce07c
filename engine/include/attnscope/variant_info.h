#pragma once
// Variant metadata and the parameter schema that the CLI and the GUI build their forms from.

#include <attnscope/result.h>

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace attnscope::engine {

enum class ParamType { Bool, Int, Float, Choice, IntList, FloatList };

/// Name of a ParamType as it appears in `attnscope-cli variants --json` ("bool", "int", ...).
const char* paramTypeName(ParamType type);

/// One parameter value. Choice values are held as std::string.
using ParamValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>,
                                std::vector<double>>;
using ParamValues = std::map<std::string, ParamValue>;

struct ParamSpec {
    std::string name;  ///< contract: exactly as the issues spell it (e.g. "causal", "window")
    ParamType type = ParamType::Int;
    ParamValue defaultValue;
    double minValue = 0;  ///< inclusive; for lists it bounds every element
    double maxValue = 0;  ///< inclusive
    std::vector<std::string> choices;  ///< for ParamType::Choice
    std::string help;
};

struct VariantInfo {
    std::string id;    ///< registry id, e.g. "full"
    std::string name;  ///< display name
    std::string paper; ///< citation, e.g. "Vaswani et al. 2017, arXiv 1706.03762"
    std::string summary;
    std::vector<ParamSpec> params;

    const ParamSpec* findParam(const std::string& param) const;
};

/// Text form of a value ("true", "64", "0.5", "union", "1,2,3").
std::string formatParamValue(const ParamValue& value);

/// Parses "NAME=VALUE" text for one parameter and checks its type and range.
/// Errors name the parameter and its allowed range (ErrorCode::InvalidArgument).
Result<ParamValue> parseParamValue(const ParamSpec& spec, const std::string& text);

/// Checks a complete set of values against the schema and fills in defaults.
/// Unknown names, wrong types and out-of-range values are InvalidArgument errors.
Result<ParamValues> resolveParams(const VariantInfo& info, const ParamValues& given);

}  // namespace attnscope::engine
