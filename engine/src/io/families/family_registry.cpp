#include "io/families/family.h"

#include "io/families/family_list.h"

#include <algorithm>
#include <stdexcept>

namespace attnscope::engine {

ATTNSCOPE_FAMILIES(ATTNSCOPE_DECLARE_FAMILY_ENTRY)

const std::vector<FamilyEntry>& familyEntries() {
#define ATTNSCOPE_FAMILY_ENTRY(id) families::id::entry(),
    static const std::vector<FamilyEntry> entries = {ATTNSCOPE_FAMILIES(ATTNSCOPE_FAMILY_ENTRY)};
#undef ATTNSCOPE_FAMILY_ENTRY
    return entries;
}

const FamilyEntry* findFamily(const std::string& modelType) {
    for (const FamilyEntry& e : familyEntries())
        if (e.id == modelType || std::find(e.alsoReads.begin(), e.alsoReads.end(), modelType) != e.alsoReads.end()) return &e;
    return nullptr;
}

const FamilyEntry& familyOf(const ModelConfig& config) {
    for (const FamilyEntry& e : familyEntries())
        if (e.id == config.family) return e;
    throw std::logic_error("no model family '" + config.family + "'");
}

std::string supportedModelTypes() {
    std::string out;
    for (const FamilyEntry& e : familyEntries()) {
        out += (out.empty() ? "" : ", ") + e.id;
        for (const auto& also : e.alsoReads) out += ", " + also;
    }
    return out;
}

const FamilyEntry* findGgufFamily(const std::string& architecture, bool withExperts) {
    using Experts = GgufReading::Experts;
    for (const FamilyEntry& e : familyEntries()) {
        if (e.gguf.architecture.empty() || e.gguf.architecture != architecture) continue;
        if (e.gguf.experts == Experts::Either || (e.gguf.experts == Experts::With) == withExperts) return &e;
    }
    return nullptr;
}

std::string supportedGgufArchitectures() {
    std::vector<std::string> names;
    for (const FamilyEntry& e : familyEntries())
        if (!e.gguf.architecture.empty() && std::find(names.begin(), names.end(), e.gguf.architecture) == names.end())
            names.push_back(e.gguf.architecture);
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

}  // namespace attnscope::engine
