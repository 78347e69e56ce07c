#include "variants/variant.h"

namespace attnscope::engine {

std::unique_ptr<Variant> makeFullAttention();

bool paramBool(const ParamValues& params, const std::string& name) { return std::get<bool>(params.at(name)); }
std::int64_t paramInt(const ParamValues& params, const std::string& name) {
    return std::get<std::int64_t>(params.at(name));
}
double paramFloat(const ParamValues& params, const std::string& name) { return std::get<double>(params.at(name)); }
const std::string& paramChoice(const ParamValues& params, const std::string& name) {
    return std::get<std::string>(params.at(name));
}

std::vector<std::unique_ptr<Variant>> makeAllVariants() {
    std::vector<std::unique_ptr<Variant>> all;
    all.push_back(makeFullAttention());
    return all;
}

}  // namespace attnscope::engine
