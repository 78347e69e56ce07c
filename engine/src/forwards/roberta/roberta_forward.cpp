// RoBERTa runs BERT's encoder (families/bert/bert_forward.cpp); its position offset is config data.

#include "model/family_forward.h"

namespace attnscope::engine::families::roberta {

ModelForwardFn forward() { return families::bert::forward(); }

}  // namespace attnscope::engine::families::roberta
