#pragma once
// A small, fully specified generator (splitmix64 seeding + xoshiro256**, Box-Muller normals) so
// that every random draw is reproducible from the seed alone, whatever the LibTorch version.

#include <cmath>
#include <cstdint>

namespace attnscope::engine {

inline std::uint64_t splitMix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

class SeededNormal {
public:
    explicit SeededNormal(std::uint64_t seed) {
        for (auto& s : m_s) s = splitMix64(seed);
    }
    std::uint64_t nextU64() {
        const std::uint64_t result = rotl(m_s[1] * 5, 7) * 9;
        const std::uint64_t t = m_s[1] << 17;
        m_s[2] ^= m_s[0];
        m_s[3] ^= m_s[1];
        m_s[1] ^= m_s[2];
        m_s[0] ^= m_s[3];
        m_s[2] ^= t;
        m_s[3] = rotl(m_s[3], 45);
        return result;
    }
    /// Uniform in (0, 1): 53 random bits, never exactly 0.
    double uniform() { return (static_cast<double>(nextU64() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
    double normal() {
        if (m_hasSpare) {
            m_hasSpare = false;
            return m_spare;
        }
        const double u1 = uniform(), u2 = uniform();
        const double radius = std::sqrt(-2.0 * std::log(u1));
        m_spare = radius * std::sin(6.283185307179586 * u2);
        m_hasSpare = true;
        return radius * std::cos(6.283185307179586 * u2);
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t m_s[4]{};
    double m_spare = 0;
    bool m_hasSpare = false;
};

/// The random projections' embedding table: stream kEmbeddingStream ^ token id.
constexpr std::uint64_t kEmbeddingStream = 0x100000000ull;

/// Mixes a seed with a stream id (token id, head, matrix) into an independent seed.
inline std::uint64_t mixSeed(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ull);
    return splitMix64(s);
}

}  // namespace attnscope::engine
