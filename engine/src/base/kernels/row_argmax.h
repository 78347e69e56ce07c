#pragma once
// Row argmax on raw float rows, without allocation.

#include <cstdint>
#include <vector>

namespace attnscope::engine {

/// The index of the first maximum of row[0..cols) (torch.argmax's rule); 0 when every entry is
/// -inf or cols is 0. NaN-free input.
std::int64_t firstMaxIndex(const float* row, std::int64_t cols);

/// The first maximum and the first minimum of row[0..cols) in one pass (cols >= 1).
void firstMaxAndMinIndex(const float* row, std::int64_t cols, std::int64_t& maxAt, std::int64_t& minAt);

/// For each column t of a row-major [rows, cols] matrix (leading dimension ld), the first row
/// holding its maximum, into where[t] (resized to cols); `best` is scratch. rows >= 1.
void firstMaxRowPerColumn(const float* m, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                          std::vector<float>& best, std::vector<std::int32_t>& where);

}  // namespace attnscope::engine
