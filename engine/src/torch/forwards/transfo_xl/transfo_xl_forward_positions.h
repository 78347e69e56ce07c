#pragma once
// The pieces of Transformer-XL's relative attention that the forward pass and the trainer share
// (the reference's PositionalEmbedding, _rel_shift and its masks), as LibTorch tensors.

#include <ATen/ATen.h>

#include <cstdint>

namespace attnscope::engine::families::transfo_xl {

/// R for each distance: [count, d] = [sin(δ f) | cos(δ f)], f_k = 10000^(−2k / d), distances
/// above clampLen (> 0) taken as clampLen.
at::Tensor relativeEncoding(const at::Tensor& distances, std::int64_t d, std::int64_t clampLen);
/// R for klen − 1 … 0: key column t is at distance klen − 1 − t from the segment's last query.
at::Tensor segmentEncoding(std::int64_t klen, std::int64_t d, std::int64_t clampLen);
/// [qlen, klen] column of the encoding each (query a, key b) takes: distance mlen + a − b, i.e.
/// what _rel_shift's reshape selects (masked cells get some valid column).
at::Tensor relativeColumns(std::int64_t qlen, std::int64_t mlen);
/// [qlen, klen] true where the key is hidden: after the query (triu(ones, 1 + mlen)), and with
/// same_length also tril(ones, −mask_shift_len) as the reference's _forward.
at::Tensor segmentMask(std::int64_t qlen, std::int64_t mlen, std::int64_t memLen, bool sameLength);

}  // namespace attnscope::engine::families::transfo_xl
