// The one registry: every variant's run made from the one list (attention/catalog/variant_list.h) and bound
// to its catalog entry. Every run is plain C++, so the engine and the launcher share it.

#include "attention/variants/variant.h"

#include "attention/catalog/variant_list.h"

#include <attnscope/variant_catalog.h>

namespace attnscope::engine {

const std::vector<std::unique_ptr<Variant>>& allVariants() {
    static const std::vector<std::unique_ptr<Variant>> all = makeAllVariants();
    return all;
}

const Variant* findVariant(const std::string& id) {
    for (const auto& v : allVariants())
        if (v->info().id == id) return v.get();
    return nullptr;
}

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
