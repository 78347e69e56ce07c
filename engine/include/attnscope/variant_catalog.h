#pragma once
// Every registered variant's VariantInfo, without an engine and without LibTorch: the CLI's
// `variants`, the window's forms, the trainer, the atlas and the tests read it.

#include <attnscope/variant_info.h>

#include <string>
#include <vector>

namespace attnscope::engine {

/// In the order the window's picker and `attnscope-cli variants` list them.
const std::vector<VariantInfo>& variantCatalog();
/// nullptr when no variant has this id.
const VariantInfo* findVariantInfo(const std::string& id);
/// The exact softmax reference (the entry with `exact` set): what approximations are measured
/// against and what compare views put beside their panes.
const VariantInfo& exactReference();

}  // namespace attnscope::engine
