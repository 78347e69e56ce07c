#pragma once
// BPE merging of one pre-token: repeatedly merge the adjacent pair of lowest rank (leftmost on a
// tie), which is what the reference loop does, but with a min-heap and a linked list of symbols:
// O(n log n) in the piece length instead of the reference's O(n²) (openai/tiktoken#195).

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnscope::engine {

/// One output symbol: vocabulary id and its bytes [begin, begin + length) within the piece.
struct BpeSymbol {
    std::int32_t id = 0;
    std::int32_t begin = 0;
    std::int32_t length = 0;
};

class BpeMerger {
public:
    /// Registers the merge (left, right) → merged with `rank` (lower merges first). A later call
    /// for the same pair replaces the earlier one, as the references' dicts do.
    void addMerge(std::int32_t left, std::int32_t right, std::int32_t merged, std::int32_t rank);
    std::size_t size() const { return m_merges.size(); }

    /// Merges `symbols` (initially one per byte, in order) in place.
    void merge(std::vector<BpeSymbol>& symbols) const;

private:
    struct Merge {
        std::int32_t rank;
        std::int32_t merged;
    };
    static std::uint64_t key(std::int32_t left, std::int32_t right) {
        return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
               static_cast<std::uint32_t>(right);
    }
    const Merge* find(std::int32_t left, std::int32_t right) const;

    std::unordered_map<std::uint64_t, Merge> m_merges;
};

}  // namespace attnscope::engine
