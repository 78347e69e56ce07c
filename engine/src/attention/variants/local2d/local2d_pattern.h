#pragma once
// The 2-D local window's pattern, defined once (its run, weights and listing derive from it):
// tokens [prefix, n) are the cells of a grid `width` cells wide in raster order (0: ⌈√(n − prefix)⌉); cell (r, c) may
// attend the cells (r', c') with |r − r'| ≤ h and |c − c'| ≤ h, h = (k − 1) / 2 (a k × k
// neighbourhood, cut at the grid's edges), and every prefix token; a prefix token (CLS) attends
// every key. Causal: only keys j ≤ i in raster order. Checks what the schema cannot and throws
// EngineError(InvalidArgument) naming the parameter.

#include "attention/pattern/block_pattern.h"

#include <attnscope/variant_info.h>

#include <cstdint>

namespace attnscope::engine {

BlockPattern local2dPattern(const ParamValues& params, std::int64_t heads, std::int64_t n);

}  // namespace attnscope::engine
