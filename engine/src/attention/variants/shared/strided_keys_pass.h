#pragma once
// The strided keys of a dense plan (DensePlan::strided): row i also attends the keys j ≡ i
// (mod step) below its other keys (j <= i − gap·step) and, when `above`, above them
// (j >= i + gap·step). Added to rows whose other keys the plan's groups have already computed,
// in their running state (max, sum, unnormalised output): the groups' max is the exp's shift.
//
// Rows of one residue r mod step attend keys of that residue only, so the pass runs 8 residues
// side by side in the lanes of a vector: lane t of "row u" is query u·step + r0 + t, lane t of
// "key s" is key s·step + r0 + t. Per lane this is an ordinary triangle of scores; across lanes no
// shuffles are needed, every residue costs the same, and short residues (n / step = 8 at 1k
// tokens with step 128) pay no per-group overhead.

#include <cstdint>

namespace attnscope::engine {

struct StridedKeysPass {
    std::int64_t n = 0, d = 0, step = 0, gap = 0;
    bool above = false;
    float scale = 1.0f;
    /// This head's rows [n, d] (queries, keys, values), as given.
    const float *q = nullptr, *k = nullptr, *v = nullptr;
    /// Running state of the rows, updated in place: max (unscaled, the exp's shift), sum of the
    /// exps, and output rows [n, d] (unnormalised). Every row with strided keys must have a finite
    /// max (its other keys are computed first).
    float *rowMax = nullptr, *rowSum = nullptr, *out = nullptr;
    /// When not null: set when a value of q or v is NaN or infinite (scanned as they are copied).
    bool* nonFinite = nullptr;
    /// Also divide every output row by its sum, once its strided keys are in (rows whose sum is 0
    /// are left alone): the pass is then the last to touch the rows, and no separate pass over
    /// the output is needed.
    bool normalise = false;
};

/// Keys of a residue at most (residue 0 has the most); also its lane rows.
inline std::int64_t keysPerResidue(std::int64_t n, std::int64_t step) { return (n + step - 1) / step; }

/// Floats of scratch that addStridedKeys needs (with copies of the rows in panels or transposed;
/// `keyPanels` says whether the caller passes the keys already in panels of 8).
std::int64_t stridedKeysScratchFloats(std::int64_t n, std::int64_t d, std::int64_t step, bool keyPanels);

/// Adds the strided keys' exps (against each row's running max, or, when a strided score exceeds
/// it by more than kMaxReferenceExcess after scaling, against the new max with the row rescaled)
/// and weighted values to the running rows. keyPanels: this head's keys in panels of 8
/// (copyToPanels), or null. Returns the number of (query, key) entries added.
std::int64_t addStridedKeys(const StridedKeysPass& pass, const float* keyPanels, float* scratch);

}  // namespace attnscope::engine
