// The Star-Transformer has no layer-by-layer forward here: its cycles run in Engine::runStar
// (torch/model/star_forward.cpp), so a folder of it is refused as a model (FamilyEntry::opensElsewhere).

#include "torch/model/family_forward.h"

namespace attnscope::engine::families::star_transformer {

ModelForwardFn forward() { return nullptr; }

}  // namespace attnscope::engine::families::star_transformer
