#pragma once
// Row softmax on raw float rows, fused with the score scale, without allocation.

#include <cstdint>

namespace attnscope::engine {

/// For each of `rows` rows of `cols` floats (row r starts at data + r * rowStride), replaces the
/// scores s with softmax(scale * s) in place. Entries equal to -inf get exactly 0. A row whose
/// entries are all -inf has no admissible key: it becomes all zeros and rowEmpty[r] is set to 1
/// (rowEmpty may be null). rowShift, rowSum (when not null): each row's shift (scale · its max)
/// and the sum of exp(scale·s − shift), from which every weight is exp(scale·s − shift) / sum
/// exactly as computed here (the row log-sum-exp is shift + log sum); −inf and 0 for an empty row.
/// Returns the number of empty rows.
std::int64_t softmaxRowsInPlace(float* data, std::int64_t rows, std::int64_t cols, std::int64_t rowStride,
                                float scale, std::uint8_t* rowEmpty, float* rowShift = nullptr, float* rowSum = nullptr);

/// The unnormalised half of the softmax, for rows whose keys are split over several tiles: each
/// row's scores s become exp(scale·(s − max)) in place; rowMax[r] = max (unscaled, −inf for an
/// all −inf row, which becomes zeros) and rowSum[r] = the sum of the row's new values.
void expRowsInPlace(float* data, std::int64_t rows, std::int64_t cols, std::int64_t rowStride, float scale,
                    float* rowMax, float* rowSum);

/// expRowsInPlace for one row, shifted by `reference` (the max, unscaled, of an earlier part of the
/// same softmax row; -inf for none) instead of the row's own max whenever the row's values then
/// stay below exp(64): a second part can then be added to the first without rescaling either.
/// Returns the sum; *shiftMax = the max used as the shift (-inf for an all -inf row).
float expRowAgainst(float* row, std::int64_t cols, float scale, float reference, float* shiftMax);

/// FAVOR+ positive features in place: each of `rows` rows of `cols` floats becomes
/// (exp(x - shift[r]) + eps) * ratio. Callers guarantee x - shift[r] <= 0 (the shift holds the
/// row's or the head's largest projection), which the exp kernel relies on.
void positiveFeaturesInPlace(float* data, std::int64_t rows, std::int64_t cols, const float* shift, float eps,
                             float ratio);

/// elu(x) + 1 in place (x + 1 for x > 0, exp(x) otherwise): the Linear Transformer's feature map.
void eluPlusOneInPlace(float* data, std::int64_t count);

/// exp(x) in place for values x <= 0 (the softmax's exp: below -87.3 gives exactly 0).
void expNonPositiveInPlace(float* data, std::int64_t count);

/// Weights from a row's kept statistics in place: each score s becomes
/// exp(min(scale·s − shift, kMaxReferenceExcess)) · factor (factor = 1 / the row's sum). The kept
/// shift may be an earlier part's max (row_exp.h referenceShift), which the row's scores pass by
/// at most kMaxReferenceExcess; the cap only absorbs a rescored key's rounding beyond it.
void keptWeightsInPlace(float* data, std::int64_t count, float scale, float shift, float factor);

/// The largest of data[0..count) (-inf when count is 0).
float maxValue(const float* data, std::int64_t count);

}  // namespace attnscope::engine
