// `roberta`: RoBERTa (Liu et al. 2019), BERT's encoder (families/bert) with positions that start
// after pad_token_id and a byte-level BPE; also the project's trainer folders, `roberta` and
// `roberta_switch` (every FFN a Switch layer).

#include "io/families/roberta/roberta.h"
#include "io/families/bert/encoder.h"

namespace attnscope::engine::families::roberta {
namespace {

Result<void> readConfig(const config_fields::FieldReader& f, const nlohmann::json&, ModelConfig& c) {
    EncoderDefaults d;
    d.vocab = 50265;
    d.maxPositions = 514;
    d.typeVocab = 1;
    d.padTokenId = 1;
    d.layerNormEps = 1e-5;
    if (auto read = readEncoderConfig(f, c, d); !read) return read.error();
    if (c.padTokenId < 0) return f.fail("pad_token_id", "must be set for RoBERTa (positions start after it)");
    c.positionOffset = c.padTokenId + 1;
    if (c.positionOffset >= c.maxPositions)
        return f.fail("max_position_embeddings", "leaves no usable position after the offset pad_token_id + 1 = " +
                                                     std::to_string(c.positionOffset));
    if (c.modelType == kSwitchModelType && !c.moe.active())
        return f.fail("num_experts", "must be at least 1 for a roberta_switch model (its FFN layers are experts)");
    return {};
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e;
    e.id = kModelType;
    e.alsoReads = {kSwitchModelType};
    e.name = "RoBERTa";
    e.reference = "transformers' RobertaModel (modeling_roberta.py); the trainer's Switch layers (docs/TRAINER.md)";
    e.readConfig = &readConfig;
    e.tensors = &encoderTensors;
    e.prefixes = {"roberta.", ""};
    e.layerStem = "encoder.layer.";
    e.tokenizer = TokenizerFiles::RobertaBpe;
    e.tokenizerAlso = {"longformer"};
    e.ownAttention = &encoderAttention;
    e.takesTrainedVariant = true;
    return e;
}

}  // namespace attnscope::engine::families::roberta
