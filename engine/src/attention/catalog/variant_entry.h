#pragma once
// A variant's torch-free half: its catalog entry (VariantInfo) and how its weights come back from
// what a run kept. The catalog holds one per variant (attention/catalog/variant_list.h).

#include "attention/catalog/variant_list.h"
#include "attention/weights/kept_state.h"

#include <attnscope/variant_info.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attnscope::engine {

using WeightsFactory = std::shared_ptr<const AttentionWeights> (*)(const KeptState& state);
using ExtraPatternsFactory = std::map<std::string, std::shared_ptr<const AttentionWeights>> (*)(const KeptState& state);

struct VariantEntry {
    VariantInfo info;
    /// The weights of a run from its kept state; throws EngineError(InvalidInput) naming a
    /// missing or mis-shaped tensor.
    WeightsFactory weights = nullptr;
    /// Further patterns derived from its draws, by name (BigBird's element graph); may be null.
    ExtraPatternsFactory extraPatterns = nullptr;
};

#define ATTNSCOPE_DECLARE_VARIANT_ENTRY(id) \
    namespace variants::id {                \
    VariantEntry entry();                   \
    }
ATTNSCOPE_VARIANTS(ATTNSCOPE_DECLARE_VARIANT_ENTRY)
#undef ATTNSCOPE_DECLARE_VARIANT_ENTRY

/// Every variant's entry, in catalog order.
const std::vector<VariantEntry>& variantEntries();
/// nullptr when no variant has this id.
const VariantEntry* findVariantEntry(const std::string& id);

}  // namespace attnscope::engine
