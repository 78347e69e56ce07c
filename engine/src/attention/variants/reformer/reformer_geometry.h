#pragma once
// Which keys a Reformer query sees (Kitaev et al. 2020, lucidrains' LSHAttention; VARIANTS.md §6):
// per hash round, the query's slot in the round's bucket-sorted order, its chunk of chunk_len
// slots, and the chunks before and after it in the sorted list of all rounds (wrapping around
// the list); masked there: chunk padding, padded keys, later keys when causal, and keys of other
// buckets unless attend_across_buckets. The self key stays with the score -5e4. Built from the
// draws a result keeps (buckets, sorted order), so the run and the weights share one definition.

#include <cstdint>
#include <vector>

namespace attnscope::engine {

struct ReformerSettings {
    std::int64_t buckets = 0, hashes = 0, chunkLen = 0, before = 0, after = 0;
    bool causal = false, acrossBuckets = true, allowDuplicates = true;
    std::int64_t nPad = 0;  ///< n rounded up to a multiple of chunkLen
    std::int64_t window() const { return (before + 1 + after) * chunkLen; }
    std::int64_t chunks() const { return hashes * nPad / chunkLen; }
};

/// lucidrains' TOKEN_SELF_ATTN_VALUE: the self key's score is set to this (not added), finite.
constexpr float kReformerSelfScore = -5e4f;

/// One candidate occurrence of a key in a query's windows.
struct ReformerCandidate {
    std::int32_t key = 0;
    std::int32_t round = 0;
    bool self = false;        ///< the query itself: score kReformerSelfScore
    bool sameBucket = false;  ///< in the query's bucket (else a neighbour chunk's other bucket)
};

class ReformerGeometry {
public:
    /// sorted: [hashes, nPad] token per slot (-1 = chunk padding); buckets: [hashes, n] bucket of
    /// each token per round; keyPadding: [n] or empty. One head.
    ReformerGeometry(const ReformerSettings& settings, std::int64_t n, const std::int64_t* sorted,
                     const std::int64_t* buckets, const std::vector<std::uint8_t>& keyPadding);

    /// Every unmasked occurrence of a key in query i's windows, round by round.
    void candidates(std::int64_t i, std::vector<ReformerCandidate>& out) const;

private:
    std::int64_t bucketOfSlot(std::int64_t slot) const;

    ReformerSettings m_s;
    std::int64_t m_n = 0;
    const std::int64_t* m_sorted = nullptr;
    const std::int64_t* m_buckets = nullptr;
    const std::vector<std::uint8_t>* m_pad = nullptr;
    std::vector<std::int32_t> m_slotOf;  ///< [hashes, n] slot of each token in its round
};

}  // namespace attnscope::engine
