#pragma once
// Shorthands for the parameter schemas of the catalog entries.

#include <attnscope/variant_info.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

/// `spec`, marked as a number of tokens (ParamSpec::countsTokens).
ParamSpec tokenCount(ParamSpec spec);
/// `spec`, taking `from` when the input is an image and the request leaves it out.
ParamSpec fromImage(ParamSpec spec, ImageDefault from);
ParamSpec boolParam(const std::string& name, bool value, const std::string& help);
ParamSpec intParam(const std::string& name, std::int64_t value, double minValue, double maxValue, const std::string& help);
ParamSpec choiceParam(const std::string& name, const std::string& value, std::vector<std::string> choices,
                      const std::string& help);
ParamSpec intListParam(const std::string& name, std::vector<std::int64_t> value, double minValue, double maxValue,
                       const std::string& help);
/// A diagnostic of the entry: name, dtype, shape in words, when it is written, what it means.
DiagnosticSpec diagnostic(const std::string& name, DType dtype, const std::string& shape, DiagnosticWhen when,
                          const std::string& meaning);

}  // namespace attnscope::engine
