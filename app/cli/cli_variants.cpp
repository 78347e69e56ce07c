#include "cli/cli_commands.h"

#include <attnscope/engine.h>

#include <nlohmann/json.hpp>

#include <iostream>

namespace attnscope::cli {

using namespace attnscope::engine;

int variantsCommand(const VariantsOptions& options) {
    EngineOptions engineOptions;
    engineOptions.threads = 1;
    auto engine = Engine::create(engineOptions);
    if (!engine) {
        printError(engine.error().message);
        return kExitFailure;
    }
    const auto variants = (*engine)->variants();
    if (options.json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& v : variants) {
            nlohmann::json params = nlohmann::json::array();
            for (const auto& p : v.params) {
                nlohmann::json pj = {{"name", p.name}, {"type", paramTypeName(p.type)},
                                     {"default", formatParamValue(p.defaultValue)}, {"help", p.help}};
                if (p.type == ParamType::Choice) pj["choices"] = p.choices;
                else if (p.type != ParamType::Bool) pj["range"] = {p.minValue, p.maxValue};
                params.push_back(pj);
            }
            out.push_back({{"id", v.id}, {"name", v.name}, {"paper", v.paper}, {"summary", v.summary},
                           {"params", params}});
        }
        std::cout << out.dump(2) << std::endl;
        return 0;
    }
    for (const auto& v : variants) {
        std::cout << v.id << "  " << v.name << "\n    " << v.paper << "\n";
        for (const auto& p : v.params) {
            std::cout << "    --param " << p.name << "=<" << paramTypeName(p.type) << ">  default "
                      << formatParamValue(p.defaultValue);
            if (p.type == ParamType::Choice) {
                std::cout << "  (";
                for (std::size_t i = 0; i < p.choices.size(); ++i) std::cout << (i ? " | " : "") << p.choices[i];
                std::cout << ")";
            } else if (p.type != ParamType::Bool) {
                std::cout << "  range [" << p.minValue << ", " << p.maxValue << "]";
            }
            std::cout << "  " << p.help << "\n";
        }
    }
    return 0;
}

}  // namespace attnscope::cli
