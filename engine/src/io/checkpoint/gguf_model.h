#pragma once
// A GGUF file read as a model: its metadata turned into the config.json the family of its
// `general.architecture` reads (so every field is checked as for a Hugging Face folder), and each
// tensor the family's forward names found under GGUF's name — a slice of a stacked expert tensor,
// llama.cpp's reordered q/k rows, Gemma's norms stored plus one — so the forward reads the same
// floats as from the model's safetensors.

#include "io/checkpoint/gguf_file.h"
#include "io/families/family.h"

#include <attnscope/result.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

/// The family that reads the file (FamilyEntry::gguf: by general.architecture and whether it has
/// experts) and the config.json equivalent of its metadata; a refusal names the key or the architecture.
struct GgufModelConfig {
    const FamilyEntry* family = nullptr;
    nlohmann::json config;
};
Result<GgufModelConfig> ggufConfigJson(const GgufFile& file);

/// Where a tensor of the family's forward lives in the file.
struct GgufPlace {
    std::string tensor;           ///< GGUF's name ("blk.3.attn_q.weight")
    std::int64_t slice = -1;      ///< an expert's slice of a stacked [experts, …] tensor; -1: whole
    std::int64_t permuteHeads = 0;  ///< undo llama.cpp's row order of q/k over this many heads; 0: none
    float addend = 0;             ///< added to every value (Gemma's norms, stored as 1 + w): −1
};

/// The places to try for `hfName` (a forward's name without the "model." prefix, e.g.
/// "layers.3.self_attn.q_proj.weight"), first the usual one; empty when GGUF has no such tensor.
std::vector<GgufPlace> ggufPlacesFor(const GgufReading& reading, const std::string& hfName, std::int64_t heads,
                                     std::int64_t kvHeads);

}  // namespace attnscope::engine
