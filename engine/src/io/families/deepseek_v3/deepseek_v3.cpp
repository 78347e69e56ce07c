// `deepseek_v3`: DeepSeek-V3 (DeepSeek-AI 2024), the DeepSeek decoder (io/families/deepseek_v2/
// mla_decoder.h) with a sigmoid router: each expert scored σ(logit), chosen on that score plus
// e_score_correction_bias within the topk_group best of n_group groups (a group scored by its two
// best), gates the chosen scores renormalised and times routed_scaling_factor; rope_interleave.

#include "io/families/deepseek_v2/mla_decoder.h"

namespace attnscope::engine::families::deepseek_v3 {
namespace {

MlaTraits v3Traits() {
    MlaTraits t;
    t.vocab = 129280;
    t.hidden = 7168;
    t.intermediate = 18432;
    t.moeIntermediate = 2048;
    t.layers = 61;
    t.heads = 128;
    t.maxPositions = 4096;
    t.v3 = true;
    return t;
}

Result<void> readConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    return readMlaConfig(f, root, c, v3Traits());
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = mlaEntry();
    e.id = "deepseek_v3";
    e.name = "DeepSeek-V3";
    e.reference = "transformers' DeepseekV3Model (modeling_deepseek_v3.py)";
    e.readConfig = &readConfig;
    return e;
}

}  // namespace attnscope::engine::families::deepseek_v3
