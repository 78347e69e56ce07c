#include "torch/model/family_forward.h"

#include "io/families/family.h"

namespace attnscope::engine {

ModelForwardFn familyForward(const ModelConfig& config) {
    // (in list order, as familyEntries(): the family's place in one is its place in the other)
    static const std::vector<ModelForwardFn> forwards = {
#define ATTNSCOPE_FORWARD(id) families::id::forward(),
        ATTNSCOPE_FAMILIES(ATTNSCOPE_FORWARD)
#undef ATTNSCOPE_FORWARD
    };
    const FamilyEntry& family = familyOf(config);
    const auto index = static_cast<std::size_t>(&family - familyEntries().data());
    return forwards.at(index);
}

}  // namespace attnscope::engine
