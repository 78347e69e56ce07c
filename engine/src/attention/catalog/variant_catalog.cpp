#include "attention/catalog/variant_entry.h"

#include <attnscope/variant_catalog.h>

#include <stdexcept>

namespace attnscope::engine {

const std::vector<VariantEntry>& variantEntries() {
#define ATTNSCOPE_ENTRY(id) variants::id::entry(),
    static const std::vector<VariantEntry> entries = {ATTNSCOPE_VARIANTS(ATTNSCOPE_ENTRY)};
#undef ATTNSCOPE_ENTRY
    return entries;
}

const VariantEntry* findVariantEntry(const std::string& id) {
    for (const VariantEntry& e : variantEntries())
        if (e.info.id == id) return &e;
    return nullptr;
}

const std::vector<VariantInfo>& variantCatalog() {
    static const std::vector<VariantInfo> infos = [] {
        std::vector<VariantInfo> out;
        for (const VariantEntry& e : variantEntries()) out.push_back(e.info);
        return out;
    }();
    return infos;
}

const VariantInfo* findVariantInfo(const std::string& id) {
    for (const VariantInfo& info : variantCatalog())
        if (info.id == id) return &info;
    return nullptr;
}

const VariantInfo& exactReference() {
    for (const VariantInfo& info : variantCatalog())
        if (info.exact) return info;
    throw std::logic_error("the variant catalog has no exact reference");
}

}  // namespace attnscope::engine
