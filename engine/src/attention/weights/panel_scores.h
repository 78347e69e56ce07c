#pragma once
// Scores q_i · k_j of one head for any rectangle of queries x keys, with the same bits for a cell
// whichever rectangle asks for it: each cell is one chain of fused multiply-adds over c = 0..d-1,
// in that order, on every path. The keys are laid out once in panels of 16 (per component c,
// sixteen keys side by side), so the AVX-512 path scores 12 queries x 16 keys a step and the AVX2
// path 6 x 16 without horizontal sums; the portable path runs the same chains with std::fma.

#include <cstdint>
#include <vector>

namespace attnscope::engine {

/// Keys a panel.
constexpr std::int64_t kPanelKeys = 16;

/// Floats of panels holding `keys` keys of d components.
inline std::int64_t panelFloats16(std::int64_t keys, std::int64_t d) { return (keys + kPanelKeys - 1) / kPanelKeys * kPanelKeys * d; }

/// Key rows t < count (d floats each, at rows + t·ld) into panels (panel t / 16, lane t % 16;
/// the last panel's missing lanes 0), eight by eight in registers where the CPU has AVX2.
void toKeyPanels(const float* rows, std::int64_t ld, std::int64_t count, std::int64_t d, float* panels);

/// out[r * ldo + (j - j0)] = q_r · k_j for `rows` queries (q_r at q + r·ldq) and keys [j0, j1) of
/// `panels` (key j in panel j / 16, lane j % 16).
void scorePanels(const float* q, std::int64_t ldq, std::int64_t rows, const float* panels, std::int64_t j0,
                 std::int64_t j1, std::int64_t d, float* out, std::int64_t ldo);

/// scorePanels for panels anywhere: panelAt[p - j0 / 16] holds keys 16p .. 16p + 15.
void scorePanelList(const float* q, std::int64_t ldq, std::int64_t rows, const float* const* panelAt, std::int64_t j0,
                    std::int64_t j1, std::int64_t d, float* out, std::int64_t ldo);

class KeyPanels {
public:
    KeyPanels() = default;
    /// k: [m, d] row-major.
    KeyPanels(const float* k, std::int64_t m, std::int64_t d);

    std::int64_t keys() const { return m_m; }
    std::int64_t dim() const { return m_d; }

    /// out[(i - i0) * ldo + (j - j0)] = q_i · k_j for queries [i0, i1) of q ([n, d] row-major) and
    /// keys [j0, j1).
    void score(const float* q, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, float* out,
               std::int64_t ldo) const;

private:
    std::int64_t m_m = 0, m_d = 0;
    std::vector<float> m_panels;  ///< [ceil(m / 16)][d][16], zeros past m (toKeyPanels)
};

}  // namespace attnscope::engine
