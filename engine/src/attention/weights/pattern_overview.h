#pragma once
// A pattern variant's overview built group by group from its DensePlan (pattern/block_pattern.h),
// as the kernel computes it: a block of rows scored against a segment's keys in one
// register-tiled product, the weights exp(s/√d − row_max) / row_sum from the kept statistics, and
// each row's run of keys pooled a cell at a time. The row visits' way (weight_overview.cpp) lists
// and scores every row's keys one by one: about ten times slower, and at a million tokens the
// difference between a first picture in seconds and in half a minute.

#include "attention/pattern/block_pattern.h"

#include <attnscope/attention_weights.h>
#include <attnscope/weight_overview.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace attnscope::engine {

/// How one head's plan is pooled: the plan with its strided rule written out as groups, the groups
/// whose rows go through row visits instead (segments that may list a key twice, as BigBird's
/// duplicated blocks: a key's weight is then the sum of its listings, which only its row's listing
/// knows), and the count of excluded keys before each key.
struct GroupPooling {
    DensePlan plan;
    std::vector<std::uint8_t> byRows;          ///< [groups]
    std::vector<std::int32_t> excludedBefore;  ///< [m + 1]; empty when no key is excluded
};

/// The pooling of `plan` (n rows, m keys), or null when some row's keys are split over groups in a
/// way the pooling cannot see to be distinct (the rows then go through row visits).
std::shared_ptr<const GroupPooling> makeGroupPooling(const DensePlan& plan, std::int64_t n, std::int64_t m);

/// One head of a pattern result as the pooling reads it.
struct PatternHead {
    int head = 0;
    const float* q = nullptr;  ///< [queries, d]
    const float* k = nullptr;  ///< [keys, d]
    std::int64_t keys = 0;
    std::int64_t d = 0;
    float scale = 1.0f;
    const float* shift = nullptr;  ///< [queries] the kept row_max
    const float* sum = nullptr;    ///< [queries] the kept row_sum
    const std::vector<std::uint8_t>* keyPadding = nullptr;    ///< [keys] or empty
    const std::vector<std::uint8_t>* queryPadding = nullptr;  ///< [queries] or empty
    const AttentionWeights* weights = nullptr;  ///< for the groups pooled by row visits
};

/// Fills `out` (its region set, cells zeroed) for head.head; keepGoing as buildOverview's.
bool poolByGroups(const GroupPooling& pooling, const PatternHead& head, WeightOverview& out,
                  const std::function<bool(double)>& keepGoing);

}  // namespace attnscope::engine
