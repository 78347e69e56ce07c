// RoBERTa runs BERT's encoder (io/families/bert/bert_forward.cpp); its position offset is config data.

#include "torch/model/family_forward.h"

namespace attnscope::engine::families::roberta {

ModelForwardFn forward() { return families::bert::forward(); }

}  // namespace attnscope::engine::families::roberta
