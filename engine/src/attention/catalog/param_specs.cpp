#include "attention/catalog/param_specs.h"

namespace attnscope::engine {

ParamSpec tokenCount(ParamSpec spec) {
    spec.countsTokens = true;
    return spec;
}

ParamSpec fromImage(ParamSpec spec, ImageDefault from) {
    spec.imageDefault = from;
    return spec;
}

ParamSpec boolParam(const std::string& name, bool value, const std::string& help) {
    ParamSpec p;
    p.name = name;
    p.type = ParamType::Bool;
    p.defaultValue = value;
    p.minValue = 0;
    p.maxValue = 1;
    p.help = help;
    return p;
}

ParamSpec intParam(const std::string& name, std::int64_t value, double minValue, double maxValue, const std::string& help) {
    ParamSpec p;
    p.name = name;
    p.type = ParamType::Int;
    p.defaultValue = value;
    p.minValue = minValue;
    p.maxValue = maxValue;
    p.help = help;
    return p;
}

ParamSpec choiceParam(const std::string& name, const std::string& value, std::vector<std::string> choices,
                      const std::string& help) {
    ParamSpec p;
    p.name = name;
    p.type = ParamType::Choice;
    p.defaultValue = value;
    p.choices = std::move(choices);
    p.help = help;
    return p;
}

ParamSpec intListParam(const std::string& name, std::vector<std::int64_t> value, double minValue, double maxValue,
                       const std::string& help) {
    ParamSpec p;
    p.name = name;
    p.type = ParamType::IntList;
    p.defaultValue = std::move(value);
    p.minValue = minValue;
    p.maxValue = maxValue;
    p.help = help;
    return p;
}

DiagnosticSpec diagnostic(const std::string& name, DType dtype, const std::string& shape, DiagnosticWhen when,
                          const std::string& meaning) {
    DiagnosticSpec d;
    d.name = name;
    d.dtype = dtype;
    d.shape = shape;
    d.when = when;
    d.meaning = meaning;
    return d;
}

}  // namespace attnscope::engine
