#include "cli/cli_commands.h"

#include <attnscope/variant_catalog.h>

#include <nlohmann/json.hpp>

#include <iostream>

namespace attnscope::cli {

using namespace attnscope::engine;

int variantsCommand(const VariantsOptions& options) {
    const auto& variants = variantCatalog();
    if (options.json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& v : variants) {
            nlohmann::json params = nlohmann::json::array();
            for (const auto& p : v.params) {
                nlohmann::json pj = {{"name", p.name}, {"type", paramTypeName(p.type)},
                                     {"default", formatParamValue(p.defaultValue)}, {"help", p.help}};
                if (!p.defaultFrom.empty()) pj["default_from"] = p.defaultFrom;
                if (p.type == ParamType::Choice) pj["choices"] = p.choices;
                else if (p.type != ParamType::Bool) pj["range"] = {p.minValue, p.maxValue};
                params.push_back(pj);
            }
            nlohmann::json diagnostics = nlohmann::json::array(), inputs = nlohmann::json::array();
            for (const auto& d : v.diagnostics)
                diagnostics.push_back({{"name", d.name}, {"dtype", dtypeName(d.dtype)}, {"shape", d.shape},
                                       {"when", diagnosticWhenName(d.when)}, {"meaning", d.meaning}});
            for (const auto& d : v.inputs)
                inputs.push_back({{"name", d.name}, {"dtype", dtypeName(d.dtype)}, {"shape", d.shape}, {"meaning", d.meaning}});
            nlohmann::json reasons = nlohmann::json::array();
            for (PatternReason r : v.reasons) reasons.push_back(patternReasonName(r));
            out.push_back({{"id", v.id}, {"name", v.name}, {"paper", v.paper}, {"summary", v.summary},
                           {"params", params}, {"exact", v.exact}, {"approximates_softmax", v.approximatesSoftmax},
                           {"reasons", reasons}, {"diagnostics", diagnostics}, {"inputs", inputs},
                           {"model_only", v.modelOnly}});
        }
        std::cout << out.dump(2) << std::endl;
        return 0;
    }
    for (const auto& v : variants) {
        std::cout << v.id << "  " << v.name << "\n    " << v.paper << "\n";
        if (v.modelOnly)
            std::cout << "    (a model layer's own attention: `run --model DIR --layer L` without --variant chooses it with "
                         "the layer's settings)\n";
        for (const auto& p : v.params) {
            std::cout << "    --param " << p.name << "=<" << paramTypeName(p.type) << ">  default "
                      << formatParamValue(p.defaultValue);
            if (p.type == ParamType::Choice) {
                std::cout << "  (";
                for (std::size_t i = 0; i < p.choices.size(); ++i) std::cout << (i ? " | " : "") << p.choices[i];
                std::cout << ")";
            } else if (p.type != ParamType::Bool) {
                std::cout << "  range [" << formatParamValue(p.minValue) << ", " << formatParamValue(p.maxValue) << "]";
            }
            std::cout << "  " << p.help << "\n";
        }
        for (const auto& input : v.inputs)
            std::cout << "    --qkv tensor " << input.name << " " << dtypeName(input.dtype) << " " << input.shape
                      << " (optional)  " << input.meaning << "\n";
    }
    return 0;
}

}  // namespace attnscope::cli
