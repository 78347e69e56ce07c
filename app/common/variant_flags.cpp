#include "common/variant_flags.h"

#include <attnscope/variant_catalog.h>

#include <algorithm>
#include <sstream>

namespace attnscope::app {
namespace {

std::string available() {
    std::string ids;
    for (const engine::VariantInfo& info : engine::variantCatalog())
        if (!info.modelOnly) ids += (ids.empty() ? "" : ", ") + info.id;
    return ids;
}

// The variant `id` names, or an error naming the flag.
const engine::VariantInfo* variantNamed(const std::string& flag, const std::string& id, std::string& error) {
    const engine::VariantInfo* info = engine::findVariantInfo(id);
    if (!info || info->modelOnly) error = flag + " '" + id + "': unknown variant (available: " + available() + ")";
    return error.empty() ? info : nullptr;
}

// Each NAME=VALUE of `flag` a parameter of `info`, its value of its type and in its range.
std::string checkParams(const std::string& flag, const engine::VariantInfo& info, const std::vector<std::string>& params) {
    for (const std::string& text : params) {
        const auto eq = text.find('=');
        const engine::ParamSpec* spec = eq == std::string::npos || eq == 0 ? nullptr : info.findParam(text.substr(0, eq));
        if (!spec) return flag + " '" + text + "': not NAME=VALUE of a parameter of " + info.id;
        if (auto value = engine::parseParamValue(*spec, text.substr(eq + 1)); !value) return flag + " '" + text + "': " + value.error().message;
    }
    return {};
}

}  // namespace

std::string checkVariantFlags(const VariantFlags& flags) {
    std::string error;
    const engine::VariantInfo* main =
        flags.variant.empty() ? engine::findVariantInfo(flags.fallback) : variantNamed("--variant", flags.variant, error);
    if (!error.empty()) return error;
    if (main) {
        if (std::string bad = checkParams("--param", *main, flags.params); !bad.empty()) return bad;
    }
    if (flags.compare.empty()) {
        if (!flags.compareParams.empty()) return "--compare-param needs --compare";
        return {};
    }
    std::stringstream list(flags.compare);
    std::string id;
    std::vector<const engine::VariantInfo*> compared;
    while (std::getline(list, id, ',')) {
        const engine::VariantInfo* info = variantNamed("--compare", id, error);
        if (id.empty()) return "--compare '" + flags.compare + "': an empty entry";
        if (!info) return error;
        compared.push_back(info);
    }
    if (flags.compare.back() == ',') return "--compare '" + flags.compare + "': an empty entry after the last comma";
    for (const std::string& text : flags.compareParams) {
        const CompareParam param = splitCompareParam(text, compared.front()->id);
        const auto it = std::find_if(compared.begin(), compared.end(), [&](const auto* info) { return info->id == param.id; });
        if (it == compared.end()) return "--compare-param '" + text + "': '" + param.id + "' is not one of --compare " + flags.compare;
        if (std::string bad = checkParams("--compare-param", **it, {param.assignment}); !bad.empty()) return bad;
    }
    return {};
}

CompareParam splitCompareParam(const std::string& text, const std::string& firstId) {
    const auto colon = text.find(':'), eq = text.find('=');
    if (colon == std::string::npos || (eq != std::string::npos && eq < colon)) return {firstId, text};
    return {text.substr(0, colon), text.substr(colon + 1)};
}

}  // namespace attnscope::app
