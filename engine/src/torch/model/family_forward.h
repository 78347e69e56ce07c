#pragma once
// A family's forward pass (LibTorch): what families::<id>::forward() gives, run by
// TransformerModel::forward on the text's ids (or, for a vision family, the prepared pixels).
// Each family's forward folder defines it (torch/forwards/<id>/<id>_forward.cpp; the list of them is
// torch/forwards/family_forward.cpp); families sharing an architecture return the same function
// (RoBERTa BERT's encoder, Mistral the Llama decoder).

#include "io/families/family_list.h"
#include "torch/model/transformer_model.h"

namespace attnscope::engine {

/// `input`: vocabulary ids (kLong, [n]) or, for a vision family, pixels [3, S, S].
using ModelForwardFn = ModelCapture (*)(TransformerModel& model, const at::Tensor& input, bool keepAttention,
                                        const ProgressFn& progress);

#define ATTNSCOPE_DECLARE_FAMILY_FORWARD(id) \
    namespace families::id {                 \
    ModelForwardFn forward();                \
    }
ATTNSCOPE_FAMILIES(ATTNSCOPE_DECLARE_FAMILY_FORWARD)
#undef ATTNSCOPE_DECLARE_FAMILY_FORWARD

/// The forward of the family `config` names (nullptr for a family that opens elsewhere).
ModelForwardFn familyForward(const ModelConfig& config);

}  // namespace attnscope::engine
