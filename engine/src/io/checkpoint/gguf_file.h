#pragma once
// GGUF files (llama.cpp's format, versions 2 and 3) read as data: the header, every metadata
// key-value pair and the tensor table validated before anything else reads them — counts and
// lengths bounded by the file, known value and tensor types, no duplicate keys or tensor names,
// dimensions positive, each tensor's bytes (from its type's block size) aligned to
// general.alignment, inside the data section and not overlapping another's. A refusal names the
// rule and where. The first layer of the "GGUF" issue: the family code reads tensors through it.

#include <attnscope/result.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace attnscope::engine {

/// ggml's tensor types (ggml.h's numbering) the reader knows the block layout of.
enum class GgmlType : std::uint32_t {
    F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9, Q2_K = 10, Q3_K = 11,
    Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15, IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19,
    IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28,
    IQ1_M = 29, BF16 = 30, TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};

/// "Q4_K", or "type N" for a number the reader does not know.
std::string ggmlTypeName(std::uint32_t type);
/// Elements per block and bytes per block of a known type; false for an unknown one.
bool ggmlBlockLayout(std::uint32_t type, std::int64_t& elements, std::int64_t& bytes);

/// A metadata value: a scalar, a string, or an array of one of those.
struct GgufValue {
    using Array = std::vector<std::variant<std::uint64_t, std::int64_t, double, bool, std::string>>;
    std::variant<std::uint64_t, std::int64_t, double, bool, std::string, Array> value;
    std::uint32_t type = 0;  ///< GGUF's value type (0–12); for an array, its elements'
    bool isArray() const { return std::holds_alternative<Array>(value); }
};

struct GgufTensor {
    std::string name;
    std::vector<std::int64_t> shape;  ///< as GGUF lists it: the fastest-varying dimension first
    std::uint32_t type = 0;
    std::uint64_t offset = 0;  ///< from the start of the data section
    std::uint64_t bytes = 0;
    std::int64_t elements() const;
};

struct GgufHeader {
    std::uint32_t version = 0;
    std::map<std::string, GgufValue> metadata;
    std::vector<GgufTensor> tensors;  ///< in the file's order
    std::uint64_t alignment = 32;      ///< general.alignment
    std::uint64_t dataStart = 0;       ///< file offset of the data section
};

/// Parses and validates a whole file image. `source` names the file in messages.
Result<GgufHeader> parseGgufHeader(const std::uint8_t* data, std::uint64_t size, const std::string& source);

/// A memory-mapped, validated GGUF file.
class GgufFile {
public:
    static Result<std::unique_ptr<GgufFile>> open(const std::string& path);
    ~GgufFile();
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    const GgufHeader& header() const { return m_header; }
    const GgufTensor* find(const std::string& name) const;
    /// The tensor's bytes inside the mapping (may be unaligned for the host: memcpy, never cast).
    const std::uint8_t* bytes(const GgufTensor& tensor) const { return m_map + m_header.dataStart + tensor.offset; }
    const std::string& path() const { return m_path; }
    /// Gives back the mapped pages of `bytes` bytes of the tensor from `offset` (a finished layer's).
    void dropPages(const GgufTensor& tensor, std::uint64_t offset, std::uint64_t bytes) const;

private:
    GgufFile() = default;
    std::string m_path;
    const std::uint8_t* m_map = nullptr;
    std::uint64_t m_size = 0;
    GgufHeader m_header;
};

}  // namespace attnscope::engine
