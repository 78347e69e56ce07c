#pragma once
// What a result keeps so that every weight can be recomputed exactly (DESIGN.md "The data
// contract"): the Q and K it ran on, the key padding, its resolved parameters, its row statistics
// and its draws. A run fills it from memory, a result file from its tensors; both go through
// makeAttentionWeights (attention/catalog/result_weights.h), so a tile read back from a file is the tile the
// run would have given.

#include <attnscope/attention_weights.h>
#include <attnscope/result.h>
#include <attnscope/tensor.h>
#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include "base/api/engine_error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attnscope::engine {

struct KeptState {
    std::string variantId;
    ParamValues params;  ///< resolved, with the values the variant chose (e.g. n_buckets = 0 -> used)
    std::int64_t heads = 0, n = 0, m = 0, d = 0;
    SharedFloats q, k;                    ///< [H, n, d], [H, m, d]
    std::vector<std::uint8_t> keyPadding; ///< [m], 1 = padded; empty = none
    const std::map<std::string, PlainTensor>* stats = nullptr;        ///< row statistics
    const std::map<std::string, PlainTensor>* diagnostics = nullptr;  ///< draws and the rest

    /// The named statistic or diagnostic; throws EngineError(InvalidInput) naming it when missing
    /// or of another dtype or shape (-1 in `shape`: any size there).
    const PlainTensor& stat(const std::string& name, DType dtype, const std::vector<std::int64_t>& shape) const;
    const PlainTensor& draw(const std::string& name, DType dtype, const std::vector<std::int64_t>& shape) const;
    bool hasDraw(const std::string& name) const { return diagnostics && diagnostics->count(name) > 0; }
    /// The query padding of self-attention (the key padding when m == n), else empty.
    std::vector<std::uint8_t> queryPadding() const { return m == n ? keyPadding : std::vector<std::uint8_t>{}; }
};

}  // namespace attnscope::engine
