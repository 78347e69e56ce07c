#include "attention/variants/reformer/reformer_geometry.h"

#include <stdexcept>

namespace attnscope::engine {

ReformerGeometry::ReformerGeometry(const ReformerSettings& settings, std::int64_t n, const std::int64_t* sorted,
                                   const std::int64_t* buckets, const std::vector<std::uint8_t>& keyPadding)
    : m_s(settings), m_n(n), m_sorted(sorted), m_buckets(buckets), m_pad(&keyPadding) {
    m_slotOf.assign(static_cast<std::size_t>(m_s.hashes * n), -1);
    for (std::int64_t r = 0; r < m_s.hashes; ++r)
        for (std::int64_t t = 0; t < m_s.nPad; ++t) {
            const std::int64_t token = sorted[r * m_s.nPad + t];
            if (token < 0) continue;
            if (token >= n) throw std::invalid_argument("reformer: sorted order names a token past n");
            m_slotOf[static_cast<std::size_t>(r * n + token)] = static_cast<std::int32_t>(t);
        }
    for (std::int32_t slot : m_slotOf)
        if (slot < 0) throw std::invalid_argument("reformer: sorted order misses a token");
}

std::int64_t ReformerGeometry::bucketOfSlot(std::int64_t slot) const {
    const std::int64_t r = slot / m_s.nPad;
    const std::int64_t token = m_sorted[slot];
    return token < 0 ? -1 : m_buckets[r * m_n + token] + r * m_s.buckets;
}

void ReformerGeometry::candidates(std::int64_t i, std::vector<ReformerCandidate>& out) const {
    out.clear();
    const std::int64_t L = m_s.chunkLen, C = m_s.chunks();
    const auto padded = [&](std::int64_t t) { return !m_pad->empty() && (*m_pad)[static_cast<std::size_t>(t)] != 0; };
    for (std::int64_t r = 0; r < m_s.hashes; ++r) {
        const std::int64_t slot = r * m_s.nPad + m_slotOf[static_cast<std::size_t>(r * m_n + i)];
        const std::int64_t chunk = slot / L;
        const std::int64_t qBucket = bucketOfSlot(slot);
        for (std::int64_t o = -m_s.before; o <= m_s.after; ++o) {
            const std::int64_t wc = ((chunk + o) % C + C) % C;
            for (std::int64_t b = 0; b < L; ++b) {
                const std::int64_t keySlot = wc * L + b;
                const std::int64_t j = m_sorted[keySlot];
                const bool self = j == i;
                // masked in the reference's order: padding, causal, self (set, not masked), bucket
                if (!self && (j < 0 || padded(j) || (m_s.causal && i < j))) continue;
                const bool same = bucketOfSlot(keySlot) == qBucket;
                if (!m_s.acrossBuckets && !same) continue;
                out.push_back(ReformerCandidate{static_cast<std::int32_t>(j), static_cast<std::int32_t>(r), self, same});
            }
        }
    }
}

}  // namespace attnscope::engine
