// The head atlas's coverage settings: the catalog's defaults, fitted to short inputs, and their
// text form (docs/ATLAS.md, "Coverage settings").

#include <attnscope/coverage_settings.h>
#include <attnscope/variant_catalog.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <variant>

namespace attnscope::engine {
namespace {

std::string trimmed(const std::string& s) {
    const auto begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos) return {};
    return s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1);
}

CoverageSetting setting(const std::string& id, ParamValues params) {
    CoverageSetting s;
    s.variantId = id;
    s.params = std::move(params);
    return s;
}

/// A token count written for kCoverageReferenceLength tokens, shrunk in proportion to n.
std::int64_t fittedCount(const ParamSpec& spec, std::int64_t written, std::int64_t n) {
    const double scaled = std::round(static_cast<double>(written) * static_cast<double>(n) /
                                     static_cast<double>(kCoverageReferenceLength));
    const auto floor = static_cast<std::int64_t>(std::max(1.0, spec.minValue));
    return std::max(floor, std::min(written, static_cast<std::int64_t>(scaled)));
}

}  // namespace

std::vector<CoverageSetting> defaultCoverageSettings() {
    std::vector<CoverageSetting> out;
    for (const VariantInfo& info : variantCatalog())
        for (const ParamValues& params : info.atlasCoverage) out.push_back(setting(info.id, params));
    return out;
}

std::vector<CoverageSetting> coverageSettingsFor(std::int64_t n) {
    std::vector<CoverageSetting> out;
    for (CoverageSetting s : defaultCoverageSettings()) {
        if (n < kCoverageReferenceLength) {
            const VariantInfo* info = findVariantInfo(s.variantId);
            for (auto& [name, value] : s.params) {
                const ParamSpec* spec = info ? info->findParam(name) : nullptr;
                if (spec && spec->countsTokens && std::holds_alternative<std::int64_t>(value))
                    value = fittedCount(*spec, std::get<std::int64_t>(value), n);
            }
        }
        const bool seen = std::any_of(out.begin(), out.end(), [&](const CoverageSetting& kept) {
            return kept.variantId == s.variantId && kept.params == s.params;
        });
        if (!seen) out.push_back(std::move(s));
    }
    return out;
}

Result<CoverageSetting> parseCoverageSetting(const std::string& text) {
    const std::string spec = trimmed(text);
    const auto colon = spec.find(':');
    CoverageSetting s;
    s.variantId = trimmed(spec.substr(0, colon));
    if (s.variantId.empty()) return makeError(ErrorCode::InvalidArgument, "'" + spec + "': no variant before ':'");
    const VariantInfo* info = findVariantInfo(s.variantId);
    if (!info) return makeError(ErrorCode::InvalidArgument, "'" + spec + "': unknown variant '" + s.variantId + "'");
    if (colon == std::string::npos) return s;
    if (spec.back() == ',') return makeError(ErrorCode::InvalidArgument, "'" + spec + "': an empty entry after the last comma");
    std::stringstream rest(spec.substr(colon + 1));
    std::string item;
    while (std::getline(rest, item, ',')) {
        item = trimmed(item);
        const auto eq = item.find('=');
        const ParamSpec* p = eq == std::string::npos ? nullptr : info->findParam(trimmed(item.substr(0, eq)));
        if (!p)
            return makeError(ErrorCode::InvalidArgument,
                             "'" + spec + "': '" + item + "' is not NAME=VALUE of a parameter of " + s.variantId);
        auto value = parseParamValue(*p, trimmed(item.substr(eq + 1)));
        if (!value) return makeError(ErrorCode::InvalidArgument, "'" + spec + "': " + value.error().message);
        s.params[p->name] = value.value();
    }
    return s;
}

std::string coverageSettingText(const CoverageSetting& setting) {
    std::string text = setting.variantId;
    char separator = ':';
    for (const auto& [name, value] : setting.params) {
        text += separator + name + "=" + formatParamValue(value);
        separator = ',';
    }
    return text;
}

}  // namespace attnscope::engine
