// The tensors of a family's forward (Hugging Face names without "model.") found under GGUF's names
// (llama.cpp's tensor map, gguf-py's constants). What llama.cpp's converter changed on the way is
// undone here: experts stacked into one tensor per layer (or, in older files, one tensor each),
// and, as the family's GgufReading says, the row order of q and k and norms stored as 1 + w.

#include "io/checkpoint/gguf_model.h"

#include <cctype>
#include <map>

namespace attnscope::engine {
namespace {

// A layer's tensors: Hugging Face's suffix after "layers.N." → GGUF's after "blk.N.".
const std::map<std::string, std::string>& layerNames() {
    static const std::map<std::string, std::string> names = {
        {"input_layernorm.weight", "attn_norm.weight"},
        {"self_attn.q_proj.weight", "attn_q.weight"},
        {"self_attn.q_proj.bias", "attn_q.bias"},
        {"self_attn.k_proj.weight", "attn_k.weight"},
        {"self_attn.k_proj.bias", "attn_k.bias"},
        {"self_attn.v_proj.weight", "attn_v.weight"},
        {"self_attn.v_proj.bias", "attn_v.bias"},
        {"self_attn.o_proj.weight", "attn_output.weight"},
        {"self_attn.o_proj.bias", "attn_output.bias"},
        {"self_attn.q_norm.weight", "attn_q_norm.weight"},
        {"self_attn.k_norm.weight", "attn_k_norm.weight"},
        {"mlp.gate_proj.weight", "ffn_gate.weight"},
        {"mlp.up_proj.weight", "ffn_up.weight"},
        {"mlp.down_proj.weight", "ffn_down.weight"},
        {"mlp.gate.weight", "ffn_gate_inp.weight"},
        {"block_sparse_moe.gate.weight", "ffn_gate_inp.weight"},
        {"mlp.shared_expert.gate_proj.weight", "ffn_gate_shexp.weight"},
        {"mlp.shared_expert.up_proj.weight", "ffn_up_shexp.weight"},
        {"mlp.shared_expert.down_proj.weight", "ffn_down_shexp.weight"},
        {"mlp.shared_expert_gate.weight", "ffn_gate_inp_shexp.weight"},
    };
    return names;
}

// The norms around a layer's MLP: Gemma's four (after attention, before and after the MLP), or a
// Llama's two, whose second llama.cpp names ffn_norm — tried in that order.
const std::map<std::string, std::vector<std::string>>& normNames() {
    static const std::map<std::string, std::vector<std::string>> names = {
        {"post_attention_layernorm.weight", {"post_attention_norm.weight", "ffn_norm.weight"}},
        {"pre_feedforward_layernorm.weight", {"ffn_norm.weight"}},
        {"post_feedforward_layernorm.weight", {"post_ffw_norm.weight"}},
    };
    return names;
}

// An expert's matrix: "mlp.experts.E.gate_proj.weight" or Mixtral's "block_sparse_moe.experts.E.w1.weight"
// → ("gate", E); false for any other name.
bool expertMatrix(const std::string& suffix, std::string& which, std::int64_t& expert) {
    std::string rest;
    for (const char* stem : {"mlp.experts.", "block_sparse_moe.experts."}) {
        const std::string s = stem;
        if (suffix.compare(0, s.size(), s) == 0) rest = suffix.substr(s.size());
    }
    const auto dot = rest.find('.');
    if (rest.empty() || dot == std::string::npos || dot == 0 || dot > 6) return false;
    for (std::size_t i = 0; i < dot; ++i)
        if (!std::isdigit(static_cast<unsigned char>(rest[i]))) return false;
    expert = std::stoll(rest.substr(0, dot));
    const std::string matrix = rest.substr(dot + 1);
    static const std::map<std::string, std::string> kinds = {
        {"gate_proj.weight", "gate"}, {"up_proj.weight", "up"}, {"down_proj.weight", "down"},
        {"w1.weight", "gate"},        {"w3.weight", "up"},      {"w2.weight", "down"},
    };
    const auto it = kinds.find(matrix);
    if (it == kinds.end()) return false;
    which = it->second;
    return true;
}

}  // namespace

std::vector<GgufPlace> ggufPlacesFor(const GgufReading& reading, const std::string& hfName, std::int64_t heads, std::int64_t kvHeads) {
    const float normAddend = reading.normAddend;
    if (hfName == "embed_tokens.weight") return {GgufPlace{"token_embd.weight"}};
    if (hfName == "norm.weight") return {GgufPlace{"output_norm.weight", -1, 0, normAddend}};
    if (hfName == "lm_head.weight") return {GgufPlace{"output.weight"}, GgufPlace{"token_embd.weight"}};  // else tied
    const std::string stem = "layers.";
    if (hfName.compare(0, stem.size(), stem) != 0) return {};
    const auto dot = hfName.find('.', stem.size());
    if (dot == std::string::npos) return {};
    const std::string layer = hfName.substr(stem.size(), dot - stem.size());
    const std::string suffix = hfName.substr(dot + 1);
    const std::string block = "blk." + layer + ".";

    std::string which;
    std::int64_t expert = 0;
    if (expertMatrix(suffix, which, expert))
        return {GgufPlace{block + "ffn_" + which + "_exps.weight", expert},
                GgufPlace{block + "ffn_" + which + "." + std::to_string(expert) + ".weight"}};
    if (const auto norm = normNames().find(suffix); norm != normNames().end()) {
        std::vector<GgufPlace> places;
        for (const auto& name : norm->second) places.push_back(GgufPlace{block + name, -1, 0, normAddend});
        return places;
    }
    const auto it = layerNames().find(suffix);
    if (it == layerNames().end()) return {};
    GgufPlace place{block + it->second};
    if (suffix.size() > 11 && suffix.compare(suffix.size() - 11, 11, "norm.weight") == 0) place.addend = normAddend;
    // llama.cpp's converter reorders the rows of q and k where its rotary kernel turns pairs
    // (2i, 2i + 1) and Hugging Face's halves (i, i + d/2): FamilyEntry::gguf says where
    if (reading.permutedQk && suffix.rfind("self_attn.q_proj.", 0) == 0) place.permuteHeads = heads;
    if (reading.permutedQk && suffix.rfind("self_attn.k_proj.", 0) == 0) place.permuteHeads = kvHeads;
    return {place};
}

}  // namespace attnscope::engine
