#include <attnscope/moe_routing_file.h>

#include <attnscope/atomic_file.h>
#include <attnscope/safetensors.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>

namespace attnscope::engine {
namespace {

// A quoted CSV field: quotes doubled; line breaks written as \n so a row stays one line.
std::string csvText(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"') out += "\"\"";
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else out += c;
    }
    return out + "\"";
}

// Nine significant digits: the float reads back as the same float.
std::string exact(float value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(value));
    return buffer;
}

}  // namespace

std::string routingSummaryJson(const Routing& r, const std::string& droppedAs) {
    const nlohmann::json j = {{"dropped_as", droppedAs},       {"tokens", r.n},          {"experts", r.experts},
                              {"k", r.k},                      {"groups", r.groups},     {"expert_capacity", r.capacity},
                              {"dropped", r.dropped},          {"aux_loss", r.auxLoss},  {"z_loss", r.zLoss},
                              {"expert_counts", r.expertCounts}, {"kept_counts", r.keptCounts}};
    return j.dump(2) + "\n";
}

Result<void> writeRoutingFile(const std::string& path, const Routing& r, const std::string& droppedAs) {
    const PlainTensor logits = PlainTensor::fromF32({r.n, r.experts}, r.logits);
    const PlainTensor probs = PlainTensor::fromF32({r.n, r.experts}, r.probs);
    const PlainTensor expert = PlainTensor::fromI64({r.n, r.k}, r.expert);
    const PlainTensor gate = PlainTensor::fromF32({r.n, r.k}, r.gate);
    const PlainTensor position = PlainTensor::fromI64({r.n, r.k}, r.position);
    const PlainTensor kept = PlainTensor::fromU8({r.n, r.k}, r.kept);
    const PlainTensor counts = PlainTensor::fromI64({r.experts}, r.expertCounts);
    const PlainTensor keptCounts = PlainTensor::fromI64({r.experts}, r.keptCounts);
    return writeSafetensors(path,
                            {{"moe.router_logits", &logits}, {"moe.router_probs", &probs}, {"moe.expert", &expert},
                             {"moe.gate", &gate}, {"moe.position", &position}, {"moe.kept", &kept},
                             {"moe.expert_counts", &counts}, {"moe.kept_counts", &keptCounts}},
                            {{"format", "pt"}, {"attnscope.routing", routingSummaryJson(r, droppedAs)}});
}

std::string routingCsv(const Routing& r, const TokenizedInput* tokens) {
    const bool named = tokens && static_cast<std::int64_t>(tokens->tokens.size()) == r.n;
    std::ostringstream out;
    out << "token,text,choice,expert,gate,router_prob,position,kept\n";
    for (std::int64_t i = 0; i < r.n; ++i)
        for (std::int64_t c = 0; c < r.k; ++c) {
            const std::size_t at = static_cast<std::size_t>(i * r.k + c);
            const std::int64_t e = r.expert[at];
            out << i << ',' << (named ? csvText(tokens->tokens[static_cast<std::size_t>(i)].text) : std::string()) << ','
                << c + 1 << ',' << e << ',' << exact(r.gate[at]) << ','
                << exact(r.probs[static_cast<std::size_t>(i * r.experts + e)]) << ',' << r.position[at] << ','
                << static_cast<int>(r.kept[at]) << '\n';
        }
    return out.str();
}

Result<void> writeRoutingCsv(const std::string& path, const Routing& r, const TokenizedInput* tokens) {
    return writeFileAtomically(path, routingCsv(r, tokens));
}

}  // namespace attnscope::engine
