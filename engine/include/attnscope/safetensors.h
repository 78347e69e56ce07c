#pragma once
// Strict safetensors reader and writer of our own (../shared FORMATS.md §1.2). Plain C++.
// Every rule of the reference reader is enforced; an error names the rule it breaks, using the
// reference reader's names (HeaderTooSmall, InvalidOffset, MetadataIncompleteBuffer, ...).

#include <attnscope/result.h>
#include <attnscope/tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attnscope::engine {

/// Every dtype the format defines, spelled as in the header.
enum class StDType {
    BOOL, F4, F6_E2M3, F6_E3M2, U8, I8, F8_E5M2, F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ,
    I16, U16, F16, BF16, I32, U32, F32, C64, F64, I64, U64,
};
const char* stDTypeName(StDType dtype);
int stDTypeBits(StDType dtype);

struct StTensorInfo {
    std::string name;
    StDType dtype = StDType::F32;
    std::vector<std::uint64_t> shape;
    std::uint64_t begin = 0;  ///< relative to the start of the byte buffer
    std::uint64_t end = 0;    ///< exclusive
};

struct StHeader {
    std::uint64_t headerLength = 0;            ///< N, bytes of JSON after the 8-byte prefix
    std::vector<StTensorInfo> tensors;          ///< in data_offsets order
    std::map<std::string, std::string> metadata;
    std::vector<std::string> warnings;          ///< extra keys, odd format tag, ...
};

/// Validates a complete file image (prefix + header + buffer) without allocating any tensor.
Result<StHeader> parseSafetensorsHeader(const std::uint8_t* data, std::uint64_t size);

/// A memory-mapped, validated safetensors file. Tensor bytes are read straight from the mapping.
/// NOTE: a file truncated by another process while mapped raises SIGBUS on access; results and
/// checkpoints are opened read-only and only after the whole header was validated.
class SafetensorsFile {
public:
    static Result<std::unique_ptr<SafetensorsFile>> open(const std::string& path);
    ~SafetensorsFile();
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const StHeader& header() const { return m_header; }
    const StTensorInfo* find(const std::string& name) const;
    /// Pointer to the tensor's bytes inside the mapping (may be unaligned: memcpy, never cast).
    const std::uint8_t* bytes(const StTensorInfo& info) const;
    /// Copies a tensor into a PlainTensor. Supported: F32, I64, I32, U8, BOOL (as U8);
    /// F16, BF16 and F64 are converted to F32. Others give ErrorCode::Unsupported.
    Result<PlainTensor> read(const std::string& name) const;
    /// Rows `rows` of a 2-D F32, F16 or BF16 tensor as F32 [rows, columns] (an embedding's
    /// lookup without converting the whole table); a row out of range is an error.
    Result<PlainTensor> readRowsF32(const std::string& name, const std::vector<std::int64_t>& rows) const;
    /// Converts the F32, F16, BF16 or F64 tensor `name` into `out`, which holds exactly its
    /// `count` elements (a buffer reused from an earlier tensor of the same size). Returns
    /// whether every value is finite.
    Result<bool> readF32Into(const std::string& name, float* out, std::size_t count) const;
    /// As readF32Into for slice `index` along the first dimension of a tensor of rank >= 2 (an
    /// expert of a fused [experts, …] tensor); index −1 reads the whole tensor.
    Result<bool> readSliceF32Into(const std::string& name, std::int64_t index, float* out, std::size_t count) const;
    const std::string& path() const { return m_path; }
    /// Lets the kernel drop the tensor's mapped pages from this process (madvise DONTNEED): a
    /// finished layer of a large decoder stops counting in its resident memory; reading it again
    /// faults the pages back in from the file.
    void dropPages(const StTensorInfo& info) const;

private:
    SafetensorsFile() = default;
    std::string m_path;
    const std::uint8_t* m_map = nullptr;
    std::uint64_t m_size = 0;
    std::uint64_t m_dataStart = 0;
    StHeader m_header;
};

/// One tensor to write: a PlainTensor, or a dtype and shape with its bytes in place (`data`) or
/// made piece by piece while the file is written (`produce`: dense weights head by head, without
/// holding them all). Nothing is copied before it is written.
struct StWriteItem {
    StWriteItem() = default;
    /// A tensor written from its own storage: {"q", &q}.
    StWriteItem(std::string itemName, const PlainTensor* itemTensor) : name(std::move(itemName)), tensor(itemTensor) {}

    std::string name;
    const PlainTensor* tensor = nullptr;
    DType dtype = DType::F32;
    std::vector<std::int64_t> shape;
    const void* data = nullptr;
    /// Called once with `write(bytes, size)`, which appends and returns false on a write error;
    /// must write exactly the tensor's byte size and return true, or false to abandon the file.
    std::function<bool(const std::function<bool(const void*, std::size_t)>& write)> produce;

    static StWriteItem view(std::string name, DType dtype, std::vector<std::int64_t> shape, const void* data) {
        StWriteItem item;
        item.name = std::move(name);
        item.dtype = dtype;
        item.shape = std::move(shape);
        item.data = data;
        return item;
    }
};

/// Writes a safetensors file as the official writer does: header padded with spaces to a
/// multiple of 8, tensors sorted by descending alignment then name, no duplicate or reserved
/// names. Writes to a temporary file in the same folder and renames it into place.
Result<void> writeSafetensors(const std::string& path, const std::vector<StWriteItem>& tensors,
                              const std::map<std::string, std::string>& metadata);

/// Serialises to memory (the same bytes writeSafetensors would write).
Result<std::vector<std::uint8_t>> encodeSafetensors(const std::vector<StWriteItem>& tensors,
                                                    const std::map<std::string, std::string>& metadata);

}  // namespace attnscope::engine
