// `bert`: BERT (Devlin et al. 2019) as Hugging Face's BertModel computes and names it.

#include "io/families/bert/encoder.h"

namespace attnscope::engine::families::bert {
namespace {

Result<void> readConfig(const config_fields::FieldReader& f, const nlohmann::json&, ModelConfig& c) {
    return readEncoderConfig(f, c, EncoderDefaults{});
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e;
    e.id = "bert";
    e.name = "BERT";
    e.reference = "transformers' BertModel (modeling_bert.py)";
    e.readConfig = &readConfig;
    e.tensors = &encoderTensors;
    e.prefixes = {"bert.", ""};
    e.layerStem = "encoder.layer.";
    e.tokenizer = TokenizerFiles::WordPiece;
    e.ownAttention = &encoderAttention;
    e.takesTrainedVariant = true;
    return e;
}

}  // namespace attnscope::engine::families::bert
