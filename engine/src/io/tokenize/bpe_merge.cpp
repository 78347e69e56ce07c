#include "io/tokenize/bpe_merge.h"

#include <queue>

namespace attnscope::engine {

void BpeMerger::addMerge(std::int32_t left, std::int32_t right, std::int32_t merged, std::int32_t rank) {
    m_merges[key(left, right)] = Merge{rank, merged};
}

const BpeMerger::Merge* BpeMerger::find(std::int32_t left, std::int32_t right) const {
    const auto it = m_merges.find(key(left, right));
    return it == m_merges.end() ? nullptr : &it->second;
}

void BpeMerger::merge(std::vector<BpeSymbol>& symbols) const {
    const auto n = static_cast<std::int32_t>(symbols.size());
    if (n < 2) return;

    // Candidate merges keyed by (rank, position of the left symbol); entries go stale when a
    // neighbour is merged away and are checked again when popped.
    struct Candidate {
        std::int32_t rank;
        std::int32_t left;
        std::int32_t leftId;
        std::int32_t rightId;
        bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    std::vector<std::int32_t> next(static_cast<std::size_t>(n));
    std::vector<std::int32_t> prev(static_cast<std::size_t>(n));
    std::vector<bool> alive(static_cast<std::size_t>(n), true);
    for (std::int32_t i = 0; i < n; ++i) {
        next[static_cast<std::size_t>(i)] = i + 1 < n ? i + 1 : -1;
        prev[static_cast<std::size_t>(i)] = i - 1;
    }
    auto push = [&](std::int32_t left) {
        if (left < 0) return;
        const std::int32_t right = next[static_cast<std::size_t>(left)];
        if (right < 0) return;
        const std::int32_t a = symbols[static_cast<std::size_t>(left)].id;
        const std::int32_t b = symbols[static_cast<std::size_t>(right)].id;
        if (const Merge* m = find(a, b)) heap.push(Candidate{m->rank, left, a, b});
    };
    for (std::int32_t i = 0; i + 1 < n; ++i) push(i);

    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        const auto left = static_cast<std::size_t>(c.left);
        if (!alive[left] || symbols[left].id != c.leftId) continue;
        const std::int32_t rightIndex = next[left];
        if (rightIndex < 0) continue;
        const auto right = static_cast<std::size_t>(rightIndex);
        if (symbols[right].id != c.rightId) continue;

        symbols[left].id = find(c.leftId, c.rightId)->merged;
        symbols[left].length += symbols[right].length;
        alive[right] = false;
        next[left] = next[right];
        if (next[right] >= 0) prev[static_cast<std::size_t>(next[right])] = c.left;
        push(prev[left]);
        push(c.left);
    }

    std::size_t out = 0;
    for (std::int32_t i = 0; i >= 0; i = next[static_cast<std::size_t>(i)]) symbols[out++] = symbols[static_cast<std::size_t>(i)];
    symbols.resize(out);
}

}  // namespace attnscope::engine
