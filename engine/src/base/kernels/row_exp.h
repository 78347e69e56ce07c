#pragma once
// Pieces of the row exp shared by the softmax kernel's portable loops (softmax_kernel.cpp) and its
// explicit AVX2 version (row_exp_avx2.cpp, a file of its own: with target-attributed functions in
// the same file GCC left the portable loops scalar).

#include "base/kernels/cpu_features.h"

#include <cstdint>
#include <limits>

namespace attnscope::engine {

/// No earlier part: the row's own max is the shift.
constexpr float kNoReference = -std::numeric_limits<float>::infinity();
/// The largest scaled excess of a row over its reference shift (values then stay below e^64).
constexpr float kMaxReferenceExcess = 64.0f;

/// The shift of a row's exp: an earlier part's max (`reference`, unscaled) when the row's values
/// then stay below exp(kMaxReferenceExcess), else the row's own max. Softmax is invariant under
/// the shift and float's relative precision does not depend on magnitude, so either is exact; the
/// reference lets a second part of a row add into the first part's output without rescaling it.
inline float referenceShift(float maxValue, float scale, float reference) {
    return reference != kNoReference && (maxValue - reference) * scale <= kMaxReferenceExcess ? reference : maxValue;
}

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
/// exp(scale·(x − shift)) of row[0..cols) in place, shift = referenceShift(max, scale, reference)
/// (stored in *rowMax when not null); returns the sum. normalise: then divided by the sum. An all
/// −inf row becomes zeros with sum 0 and *rowMax = −inf. Only where haveAvx2Fma().
float rowExpAvx2(float* row, std::int64_t cols, float scale, float* rowMax, bool normalise, float reference);

/// exp(x) in place for values x <= 0 (below −87.3: exactly 0). Only where haveAvx2Fma().
void expNonPositiveAvx2(float* data, std::int64_t count);

/// softmax_kernel.h keptWeightsInPlace in AVX2. Only where haveAvx2Fma().
void keptWeightsAvx2(float* data, std::int64_t count, float scale, float shift, float factor);
#endif

}  // namespace attnscope::engine
