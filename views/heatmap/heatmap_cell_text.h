#pragma once
// The text of one heatmap cell under the pointer or the cursor: "query 3 'it' → key 1 'cat':
// weight 0.1234"; in a pooled picture the exact weight of the cell under the pointer (recomputed
// from the result's kept state), then what the drawn block shows.

#include "views/data/head_matrix.h"

#include <attnscope/types.h>

#include <QString>

#include <cstdint>
#include <functional>

namespace attnscope::views {

/// (query, key) in input indices of head `head` of `r`; `drawn` is the matrix holding the cell
/// (the zoomed region when it does, else the whole head); `tokenText` gives a token's label or "".
QString heatmapCellText(const engine::AttentionResult& r, int head, const HeadMatrix& drawn,
                        const std::function<QString(std::int64_t)>& tokenText, int query, int key);

}  // namespace attnscope::views
