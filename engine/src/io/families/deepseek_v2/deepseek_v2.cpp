// `deepseek_v2`: DeepSeek-V2 (DeepSeek-AI 2024) and V2-Lite, the DeepSeek decoder (mla_decoder.h)
// with rotary pairs (2i, 2i + 1), a softmax router choosing greedily or within the topk_group best
// expert groups (a group scored by its best expert), gates times routed_scaling_factor, and
// n_shared_experts beside them.

#include "io/families/deepseek_v2/mla_decoder.h"

namespace attnscope::engine::families::deepseek_v2 {
namespace {

Result<void> readConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    return readMlaConfig(f, root, c, MlaTraits{});
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = mlaEntry();
    e.id = "deepseek_v2";
    e.name = "DeepSeek-V2";
    e.reference = "transformers' DeepseekV2Model (modeling_deepseek_v2.py) and DeepSeek's modeling_deepseek.py";
    e.readConfig = &readConfig;
    return e;
}

}  // namespace attnscope::engine::families::deepseek_v2
