#pragma once
// Typed access to resolved parameters (resolveParams guarantees presence and type).

#include <attnscope/variant_info.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

inline bool paramBool(const ParamValues& params, const std::string& name) { return std::get<bool>(params.at(name)); }
inline std::int64_t paramInt(const ParamValues& params, const std::string& name) {
    return std::get<std::int64_t>(params.at(name));
}
inline double paramFloat(const ParamValues& params, const std::string& name) { return std::get<double>(params.at(name)); }
inline const std::string& paramChoice(const ParamValues& params, const std::string& name) {
    return std::get<std::string>(params.at(name));
}
inline const std::vector<std::int64_t>& paramIntList(const ParamValues& params, const std::string& name) {
    return std::get<std::vector<std::int64_t>>(params.at(name));
}
inline const std::vector<double>& paramFloatList(const ParamValues& params, const std::string& name) {
    return std::get<std::vector<double>>(params.at(name));
}

}  // namespace attnscope::engine
