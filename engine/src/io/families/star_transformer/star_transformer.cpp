// `star-transformer`: the Star-Transformer (Guo et al. 2019) as fastNLP names it, and the project's
// trainer folders (docs/TRAINER.md). Its satellites and relay update over cycles rather than
// layers of Q, K, V, so its folders open in the Star tab and `attnscope-cli star --model`
// (Engine::runStar, torch/model/star_weights.cpp reads the rest); this declaration reads the config
// fields and says so when a folder is opened as a model.

#include "io/families/star_transformer/star_transformer.h"
#include "io/families/family.h"
#include "io/families/softmax_layer.h"

namespace attnscope::engine::families::star_transformer {
namespace {

using namespace config_fields;

Result<void> readConfig(const FieldReader& f, const nlohmann::json&, ModelConfig& c) {
    ATTNSCOPE_TRY_ASSIGN(c.hiddenSize, f.integer("hidden_size", 0, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.numLayers, f.integer("num_layers", 0, 1, kMaxLayers));
    ATTNSCOPE_TRY_ASSIGN(c.numHeads, f.integer("num_head", 0, 1, kMaxHeads));
    ATTNSCOPE_TRY_ASSIGN(c.headSize, f.integer("head_dim", 0, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.vocabSize, f.integer("vocab_size", 0, 1, kMaxVocab));
    c.kvHeads = c.numHeads;
    return {};
}

// (never asked: the folder opens elsewhere)
LayerAttention ownAttention(const ModelConfig&, std::int64_t) { return softmaxLayer({}); }

}  // namespace

FamilyEntry entry() {
    FamilyEntry e;
    e.id = kModelType;
    e.name = "Star-Transformer";
    e.reference = "fastNLP's StarTransEnc (fastNLP/modules/encoder/star_transformer.py)";
    e.readConfig = &readConfig;
    e.tokenizer = TokenizerFiles::None;
    e.ownAttention = &ownAttention;
    e.opensElsewhere = "a Star-Transformer folder: its satellites and relay run over cycles, not layers; open it with "
                       "Open Star Model… on the star variant's Diagnostics page, or `attnscope-cli star --model FOLDER`";
    return e;
}

}  // namespace attnscope::engine::families::star_transformer
