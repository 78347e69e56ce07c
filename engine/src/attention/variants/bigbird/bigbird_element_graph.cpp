// BigBird's element graph (the paper's element-level pattern, beside the block form it computes):
// global tokens (ITC: the first and last block; ETC: the g extra tokens) attend and are attended
// by every token; the others attend a window |i - j| <= floor(3b/2) among the non-extra tokens
// and the keys of their query block's drawn random blocks. Set semantics: one entry per key, the
// first reason of global, window, random. Reasons only (its weights are 0).

#include "attention/weights/sparse_row_weights.h"
#include "attention/weights/kept_state.h"

#include "attention/variants/bigbird/bigbird_pattern.h"
#include "base/api/param_access.h"

#include <attnscope/types.h>

#include <algorithm>

namespace attnscope::engine {
namespace {

class BigBirdElementGraph final : public SparseRowWeights {
public:
    BigBirdElementGraph(std::int64_t heads, std::int64_t n, std::int64_t length, BigBirdBlocks blocks,
                        std::vector<std::int64_t> randAttn)
        : SparseRowWeights(heads, n, n), m_length(length), m_blocks(blocks), m_rand(std::move(randAttn)) {}

private:
    bool isGlobalRow(std::int64_t i) const {
        const std::int64_t b = m_blocks.block;
        return m_blocks.etc ? i < m_blocks.globalTokens : (i < b || i >= m_length - b);
    }

    void rowKeys(int head, std::int64_t i, Scratch& s) const override {
        s.sort.clear();
        const std::int64_t n = queries(), b = m_blocks.block, g = m_blocks.globalTokens, r = m_blocks.random;
        const auto add = [&](std::int64_t j, PatternReason why) {
            if (j >= 0 && j < n) s.sort.emplace_back(static_cast<std::int32_t>(j), static_cast<std::uint8_t>(why));
        };
        if (isGlobalRow(i)) {
            for (std::int64_t j = 0; j < n; ++j) add(j, PatternReason::Global);
        } else {
            for (std::int64_t j = 0; j < (m_blocks.etc ? g : b); ++j) add(j, PatternReason::Global);
            if (!m_blocks.etc)
                for (std::int64_t j = m_length - b; j < m_length; ++j) add(j, PatternReason::Global);
            for (std::int64_t j = std::max(g, i - 3 * b / 2); j <= std::min(m_length - 1, i + 3 * b / 2); ++j)
                add(j, PatternReason::Local);
            const std::int64_t qb = (i - g) / b, row = m_blocks.etc ? qb : qb - 1;
            for (std::int64_t t = 0; t < r; ++t) {
                const std::int64_t blk = m_rand[static_cast<std::size_t>((head * m_blocks.randomRows() + row) * r + t)];
                for (std::int64_t j = g + blk * b; j < g + (blk + 1) * b; ++j) add(j, PatternReason::Random);
            }
        }
        std::stable_sort(s.sort.begin(), s.sort.end(), [](const auto& a, const auto& c) { return a.first < c.first; });
        s.keys.clear();
        for (const auto& [key, why] : s.sort) {
            if (!s.keys.keys.empty() && s.keys.keys.back() == key) continue;  // set semantics, first reason
            s.keys.keys.push_back(key);
            s.keys.multiplicity.push_back(1);
            s.keys.reasons.push_back(static_cast<ReasonBits>(1u << why));
        }
    }

    void rowWeights(int, std::int64_t, Scratch& s, std::int64_t t0, std::int64_t t1) const override {
        std::fill(s.weights.begin() + t0, s.weights.begin() + t1, 0.0f);
    }

    std::int64_t m_length = 0;
    BigBirdBlocks m_blocks;
    std::vector<std::int64_t> m_rand;
};

}  // namespace

std::shared_ptr<const AttentionWeights> makeBigBirdElementGraph(const KeptState& state) {
    std::int64_t length = state.n;
    if (state.hasDraw("padded_length")) length = state.draw("padded_length", DType::I64, {1}).i64[0];
    const BigBirdBlocks blocks = bigbirdBlocks(state.params, length);
    const PlainTensor& randAttn = state.draw("rand_attn", DType::I64, {state.heads, blocks.randomRows(), blocks.random});
    return std::make_shared<BigBirdElementGraph>(state.heads, state.n, length, blocks, randAttn.i64);
}

}  // namespace attnscope::engine
