#include "variants/variant.h"

#include "variants/variant_list.h"

#include <attnscope/variant_catalog.h>

namespace attnscope::engine {

std::vector<std::unique_ptr<Variant>> makeAllVariants() {
    std::vector<std::unique_ptr<Variant>> all;
#define ATTNSCOPE_KERNEL(id)                      \
    all.push_back(variants::id::kernel());        \
    all.back()->bindInfo(*findVariantInfo(#id));
    ATTNSCOPE_VARIANTS(ATTNSCOPE_KERNEL)
#undef ATTNSCOPE_KERNEL
    return all;
}

}  // namespace attnscope::engine
