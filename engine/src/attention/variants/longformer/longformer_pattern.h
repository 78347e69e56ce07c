#pragma once
// Longformer's pattern, defined once: its run, its weights and its listing derive from it.
// Checks what the schema cannot and throws EngineError(InvalidArgument) naming the parameter and
// the rule (VARIANTS.md gives the rules).

#include "attention/pattern/block_pattern.h"

#include <attnscope/tensor.h>
#include <attnscope/variant_info.h>

#include <cstdint>

namespace attnscope::engine {

BlockPattern longformerPattern(const ParamValues& params, std::int64_t heads, std::int64_t n);

}  // namespace attnscope::engine
