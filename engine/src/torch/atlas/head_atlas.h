#pragma once
// Computes the head atlas from one forward pass (see attnscope/head_atlas.h).

#include <attnscope/head_atlas.h>

#include "base/runtime/buffer_pool.h"
#include "torch/model/model_session.h"
#include "attention/variants/variant.h"

namespace attnscope::engine {

/// One coverage setting ready to run: the variant and its resolved parameters.
struct ResolvedSetting {
    const Variant* variant = nullptr;
    ParamValues params;
};

/// Fills `atlas.metrics`, `settingNotes` and `rollout` from `pass` (which must hold attention).
/// Throws CancelledError when `progress` asks to stop (checked per layer and setting).
void computeHeadAtlas(const ModelSession::Pass& pass, const std::vector<ResolvedSetting>& settings, bool rollout,
                      BufferPool& pool, const ProgressFn& progress, HeadAtlas& atlas);

}  // namespace attnscope::engine
