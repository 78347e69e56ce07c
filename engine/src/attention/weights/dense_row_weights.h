#pragma once
// The weights of variants whose rows may allow every key (full, topk's and entmax's score rows,
// linear, performer, linformer): tiles are computed directly, a block of rows at a time; row
// visits come from whole-row tiles.

#include <attnscope/attention_weights.h>

namespace attnscope::engine {

class DenseRowWeights : public AttentionWeights {
public:
    bool denseRows() const override { return true; }

protected:
    using AttentionWeights::AttentionWeights;
    bool visitRows(int head, std::int64_t r0, std::int64_t r1, const RowVisitor& visit) const override;
};

}  // namespace attnscope::engine
