#pragma once
// Reads explicit Q/K/V inputs for `attnscope-cli run --qkv PATH`.

#include <attnscope/result.h>
#include <attnscope/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnscope::cli {

struct QkvFile {
    /// q, k, v read in place from the mapped file (which stays mapped while they are held), or
    /// copied when a tensor's bytes are not float-aligned in it.
    engine::SharedQkv qkv;
    std::vector<std::uint8_t> keyPadding;  ///< from the optional U8/BOOL tensor `key_padding` [m]
    /// The file's tensors named by some variant's VariantInfo::inputs (F32), by name.
    std::map<std::string, engine::PlainTensor> variantInputs;
};

/// Tensors `q`, `k`, `v` (float32 [H, n, d]), optionally `key_padding` and the variants' inputs.
engine::Result<QkvFile> readQkvFile(const std::string& path);

}  // namespace attnscope::cli
