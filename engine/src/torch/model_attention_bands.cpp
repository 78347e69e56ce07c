// Engine::modelAttentionBands: one forward pass of the current Transformer-XL model keeping every
// layer's attention, cut to the band each query sees so the receptive field view holds
// O(layers · n · (M + L)) floats instead of layers dense n × n matrices.

#include <attnscope/engine.h>
#include <attnscope/receptive_field.h>

#include <cstdint>

namespace attnscope::engine {
namespace {

std::int64_t intDefault(const ParamValues& params, const char* name) {
    const auto it = params.find(name);
    return it != params.end() && std::holds_alternative<std::int64_t>(it->second) ? std::get<std::int64_t>(it->second) : 0;
}

bool boolDefault(const ParamValues& params, const char* name) {
    const auto it = params.find(name);
    return it != params.end() && std::holds_alternative<bool>(it->second) && std::get<bool>(it->second);
}

/// The layout the model reads text with: its tgt_len, mem_len and same_length.
SegmentLayout modelLayout(const ModelInfo& info, std::int64_t n) {
    const ParamValues& x = info.variantDefaults.at("transformer_xl");
    SegmentLayout layout;
    layout.n = n;
    layout.segment = intDefault(x, "segment");
    layout.memory = intDefault(x, "memory");
    layout.sameLength = boolDefault(x, "same_length");
    return layout;
}

}  // namespace

Result<std::shared_ptr<const ModelAttentionBands>> Engine::modelAttentionBands(const std::string& text,
                                                                               const ProgressFn& progress) {
    const ModelInfo* info = currentModel();
    if (!info) return makeError(ErrorCode::InvalidArgument, "no model is open (open a Transformer-XL model folder first)");
    if (info->variantDefaults.count("transformer_xl") == 0)
        return makeError(ErrorCode::InvalidArgument, "the receptive field follows a Transformer-XL model's memory; " +
                                                         info->folder + " is a " + info->arch + " model, which has none");
    // Every tokenizer such a model has gives at most one token per byte.
    const auto upper = static_cast<std::int64_t>(text.size());
    if (upper > kMaxReceptiveFieldTokens)
        return makeError(ErrorCode::InvalidArgument, "the receptive field reads at most " + std::to_string(kMaxReceptiveFieldTokens) +
                                                         " tokens; this text has up to " + std::to_string(upper) +
                                                         ": shorten it");
    const std::uint64_t dense = static_cast<std::uint64_t>(info->layers) * static_cast<std::uint64_t>(info->heads) *
                                static_cast<std::uint64_t>(upper) * static_cast<std::uint64_t>(upper) * sizeof(float);
    if (dense > memoryBudgetBytes())
        return makeError(ErrorCode::OutOfBudget, "the receptive field's attention capture needs up to " +
                                                     std::to_string(dense >> 20) + " MiB, over the memory budget of " +
                                                     std::to_string(memoryBudgetBytes() >> 20) + " MiB: shorten the text");
    ModelInput input;
    input.text = text;
    input.keepAttention = true;
    auto forward = forwardModel(input, progress);
    if (!forward) return forward.error();
    const ModelForward& pass = *forward.value();
    auto bands = std::make_shared<ModelAttentionBands>();
    bands->folder = info->folder;
    bands->text = text;
    bands->tokens = pass.input.tokens;
    bands->layout = modelLayout(*info, pass.n);
    for (const PlainTensor& attention : pass.attention) {
        auto band = attentionBandOf(attention, bands->layout);
        if (!band) return band.error();
        bands->layers.push_back(std::move(band.value()));
    }
    return std::shared_ptr<const ModelAttentionBands>(std::move(bands));
}

}  // namespace attnscope::engine
