// Strict safetensors reader: header validation (FORMATS.md §1.2) and the mmap-backed file.
#include <attnscope/safetensors.h>

#include "io/checkpoint/half_float.h"
#include "io/checkpoint/safetensors_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <tuple>
#include <unordered_set>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope::engine {

using namespace safetensors_detail;

namespace {

constexpr const char* kMetadataKey = "__metadata__";
constexpr int kMaxDepth = 3;  // root object > tensor entry > shape/data_offsets array
constexpr std::size_t kMaxExtraKeyWarnings = 10;

std::string shapeText(const std::vector<std::uint64_t>& shape) {
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) out += ", ";
        out += std::to_string(shape[i]);
    }
    return out + "]";
}

Error invalid(const std::string& message) { return makeError(ErrorCode::InvalidInput, message); }

/// Builds the tensor list straight from SAX events, so a hostile header never becomes a DOM,
/// duplicate keys are caught (nlohmann's DOM keeps the last one silently) and depth is bounded.
class HeaderSaxHandler {
public:
    using Json = nlohmann::json;

    explicit HeaderSaxHandler(StHeader& header) : m_header(header) {}

    const std::string& error() const { return m_error; }

    bool null() { return onValue(Kind::Null); }
    bool boolean(bool /*value*/) { return onValue(Kind::Bool); }
    bool number_integer(Json::number_integer_t value) {
        // nlohmann reports every literal with a minus sign here, "-0" included.
        if (value >= 0) return onValue(Kind::Unsigned, static_cast<std::uint64_t>(value));
        return onValue(Kind::Negative, 0, std::to_string(value));
    }
    bool number_unsigned(Json::number_unsigned_t value) { return onValue(Kind::Unsigned, value); }
    bool number_float(Json::number_float_t /*value*/, const std::string& literal) {
        return onValue(Kind::Float, 0, literal);
    }
    bool string(std::string& value) { return onValue(Kind::String, 0, std::move(value)); }
    bool binary(Json::binary_t& /*value*/) { return fail("binary values are not JSON"); }

    bool start_object(std::size_t /*elements*/) {
        if (!enterContainer(true)) return false;
        m_stack.push_back(Frame{true, {}});
        return true;
    }
    bool end_object() {
        m_stack.pop_back();
        if (m_stack.size() != 1) return true;
        if (m_inMetadata) {
            m_inMetadata = false;
            return true;
        }
        for (const auto& [seen, field] : {std::pair{m_hasDtype, "dtype"}, std::pair{m_hasShape, "shape"},
                                          std::pair{m_hasOffsets, "data_offsets"}}) {
            if (!seen) return fail(tensorRef() + ": missing field '" + field + "'");
        }
        m_header.tensors.push_back(std::move(m_current));
        return true;
    }
    bool start_array(std::size_t /*elements*/) {
        if (!enterContainer(false)) return false;
        m_stack.push_back(Frame{false, {}});
        return true;
    }
    bool end_array() {
        m_stack.pop_back();
        if (m_stack.size() != 2 || m_inMetadata) return true;
        if (m_field == Field::Shape) {
            m_current.shape = std::move(m_array);
            m_hasShape = true;
        } else if (m_field == Field::Offsets) {
            if (m_array.size() != 2) {
                return fail(tensorRef() + ": data_offsets must have exactly two elements, got " +
                            std::to_string(m_array.size()));
            }
            m_current.begin = m_array[0];
            m_current.end = m_array[1];
            m_hasOffsets = true;
        }
        m_array.clear();
        return true;
    }

    bool key(std::string& key) {
        Frame& frame = m_stack.back();
        if (!frame.keys.insert(key).second) {
            if (m_stack.size() == 1) {
                return fail(key == kMetadataKey
                                ? std::string("duplicate key '__metadata__'")
                                : "duplicate tensor name " + quoteName(key) +
                                      " (duplicate keys are not allowed)");
            }
            return fail(contextRef() + ": duplicate key " + quoteName(key));
        }
        if (m_stack.size() == 1) {
            m_key = key;
        } else if (m_stack.size() == 2 && m_inMetadata) {
            m_metadataKey = key;
        } else if (m_stack.size() == 2) {
            m_field = key == "dtype" ? Field::Dtype
                      : key == "shape" ? Field::Shape
                      : key == "data_offsets" ? Field::Offsets
                                              : Field::Extra;
            if (m_field == Field::Extra) {
                if (m_extraKeys < kMaxExtraKeyWarnings) {
                    m_header.warnings.push_back(tensorRef() + ": unknown key " + quoteName(key) +
                                                " ignored");
                }
                ++m_extraKeys;
            }
        }
        return true;
    }

    bool parse_error(std::size_t position, const std::string& /*lastToken*/,
                     const nlohmann::detail::exception& ex) {
        // what() starts with "[json.exception.parse_error.101] "; keep the readable part.
        std::string what = ex.what();
        const auto cut = what.find("] ");
        if (cut != std::string::npos) what = what.substr(cut + 2);
        return fail("not valid JSON near header byte " + std::to_string(position) + ": " + what);
    }

    /// Called once the document ended; adds the summary of capped warnings.
    void finish() {
        if (m_extraKeys > kMaxExtraKeyWarnings) {
            m_header.warnings.push_back(std::to_string(m_extraKeys - kMaxExtraKeyWarnings) +
                                        " more unknown tensor keys ignored");
        }
    }

private:
    enum class Kind { Null, Bool, Negative, Unsigned, Float, String };
    enum class Field { Dtype, Shape, Offsets, Extra };
    struct Frame {
        bool isObject;
        std::unordered_set<std::string> keys;
    };

    static const char* kindName(Kind kind) {
        switch (kind) {
        case Kind::Null: return "null";
        case Kind::Bool: return "a boolean";
        case Kind::Negative: return "a negative integer";
        case Kind::Unsigned: return "an integer";
        case Kind::Float: return "a non-integer number";
        case Kind::String: return "a string";
        }
        return "?";
    }

    bool fail(std::string message) {
        if (m_error.empty()) m_error = std::move(message);
        return false;
    }
    std::string tensorRef() const { return "tensor " + quoteName(m_key); }
    std::string contextRef() const {
        if (m_stack.size() >= 2 && m_inMetadata) return "__metadata__";
        return tensorRef();
    }
    const char* fieldName() const { return m_field == Field::Shape ? "shape" : "data_offsets"; }

    /// Checks that a container may start at the current position.
    bool enterContainer(bool isObject) {
        const char* what = isObject ? "an object" : "an array";
        switch (m_stack.size()) {
        case 0:
            return isObject || fail("the header must be a JSON object, not an array");
        case 1:
            if (m_key == kMetadataKey) {
                if (!isObject) return fail("__metadata__ must be an object of strings, not an array");
                m_inMetadata = true;
                return true;
            }
            if (!isObject) return fail(tensorRef() + " must be an object, not an array");
            if (m_header.tensors.size() >= kMaxTensorCount) {
                return fail("more than " + std::to_string(kMaxTensorCount) + " tensors");
            }
            m_current = StTensorInfo{};
            m_current.name = m_key;
            m_hasDtype = m_hasShape = m_hasOffsets = false;
            return true;
        case 2:
            if (m_inMetadata) {
                return fail("__metadata__ value for key " + quoteName(m_metadataKey) +
                            " must be a string, not " + what);
            }
            if (m_field == Field::Extra) return true;
            if (m_field == Field::Dtype) return fail(tensorRef() + ": dtype must be a string, not " + what);
            if (isObject) {
                return fail(tensorRef() + ": " + fieldName() + " must be an array of unsigned integers, not an object");
            }
            m_array.clear();
            return true;
        default:
            return fail(contextRef() + ": JSON nesting deeper than " + std::to_string(kMaxDepth) + " levels");
        }
    }

    bool onValue(Kind kind, std::uint64_t number = 0, std::string text = {}) {
        switch (m_stack.size()) {
        case 0:
            return fail(std::string("the header must be a JSON object, not ") + kindName(kind));
        case 1:
            // The reference reader reads __metadata__ as an Option, so null means "none".
            if (m_key == kMetadataKey) {
                return kind == Kind::Null ||
                       fail(std::string("__metadata__ must be an object of strings, not ") + kindName(kind));
            }
            return fail(tensorRef() + " must be an object, not " + kindName(kind));
        case 2:
            if (m_inMetadata) {
                if (kind != Kind::String) {
                    return fail("__metadata__ value for key " + quoteName(m_metadataKey) +
                                " must be a string, not " + kindName(kind));
                }
                m_header.metadata[m_metadataKey] = std::move(text);
                return true;
            }
            if (m_field == Field::Extra) return true;
            if (m_field != Field::Dtype) {
                return fail(tensorRef() + ": " + fieldName() + " must be an array of unsigned integers, not " +
                            kindName(kind));
            }
            if (kind != Kind::String) {
                return fail(tensorRef() + ": dtype must be a string, not " + kindName(kind));
            }
            if (!parseDType(text, m_current.dtype)) {
                return fail(tensorRef() + ": unknown dtype " + quoteName(text));
            }
            m_hasDtype = true;
            return true;
        default:
            break;
        }
        if (m_field == Field::Extra || m_inMetadata) return true;
        const std::string where = tensorRef() + ": " + fieldName() + " element ";
        if (kind == Kind::Negative) return fail(where + text + " is negative");
        if (kind == Kind::Float) return fail(where + text + " is not an integer");
        if (kind != Kind::Unsigned) {
            return fail(where + "must be an unsigned integer, not " + kindName(kind));
        }
        if (m_field == Field::Offsets) {
            if (number > kMaxJsonInteger) return fail(where + std::to_string(number) + " exceeds 2^48");
            if (m_array.size() == 2) return fail(tensorRef() + ": data_offsets must have exactly two elements, got more");
        }
        // Shape dims above 2^48 are refused after the overflow checks (ValidationOverflow first,
        // as the reference reader reports it).
        m_array.push_back(number);
        return true;
    }

    StHeader& m_header;
    std::string m_error;
    std::vector<Frame> m_stack;
    std::string m_key;  // current top-level key: a tensor name or __metadata__
    std::string m_metadataKey;
    bool m_inMetadata = false;
    Field m_field = Field::Extra;
    StTensorInfo m_current;
    bool m_hasDtype = false;
    bool m_hasShape = false;
    bool m_hasOffsets = false;
    std::vector<std::uint64_t> m_array;
    std::size_t m_extraKeys = 0;
};

/// Metadata::validate of the reference reader, plus our 2^48 cap on dims. Returns the buffer end.
Result<std::uint64_t> validateTensors(std::vector<StTensorInfo>& tensors) {
    std::sort(tensors.begin(), tensors.end(), [](const StTensorInfo& a, const StTensorInfo& b) {
        return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
    });
    std::uint64_t start = 0;
    for (const StTensorInfo& t : tensors) {
        const std::string ref = "tensor " + quoteName(t.name);
        if (t.begin != start) {
            return invalid("InvalidOffset: " + ref + " begins at " + std::to_string(t.begin) +
                           (&t == &tensors.front()
                                ? std::string(" but the byte buffer starts at 0")
                                : " but the previous tensor ends at " + std::to_string(start)) +
                           " (gaps and overlaps are not allowed)");
        }
        if (t.end < t.begin) {
            return invalid("InvalidOffset: " + ref + " ends at " + std::to_string(t.end) +
                           " before it begins at " + std::to_string(t.begin));
        }
        start = t.end;

        std::uint64_t elements = 1;
        for (const std::uint64_t dim : t.shape) {
            if (__builtin_mul_overflow(elements, dim, &elements)) {
                return invalid("ValidationOverflow: " + ref + ": the element count of shape " +
                               shapeText(t.shape) + " overflows 64 bits");
            }
        }
        const int bits = stDTypeBits(t.dtype);
        std::uint64_t totalBits = 0;
        if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(bits), &totalBits)) {
            return invalid("ValidationOverflow: " + ref + ": " + std::to_string(elements) +
                           " elements of " + std::to_string(bits) + " bits overflow 64 bits");
        }
        if (totalBits % 8 != 0) {
            return invalid("MisalignedSlice: " + ref + ": " + std::to_string(elements) + " elements of dtype " +
                           stDTypeName(t.dtype) + " take " + std::to_string(totalBits) +
                           " bits, not a whole number of bytes");
        }
        if (t.end - t.begin != totalBits / 8) {
            return invalid("TensorInvalidInfo: " + ref + ": data_offsets [" + std::to_string(t.begin) + ", " +
                           std::to_string(t.end) + "] span " + std::to_string(t.end - t.begin) +
                           " bytes but shape " + shapeText(t.shape) + " of dtype " + stDTypeName(t.dtype) +
                           " needs " + std::to_string(totalBits / 8));
        }
        for (const std::uint64_t dim : t.shape) {
            if (dim > kMaxJsonInteger) {
                return invalid("InvalidHeaderDeserialization: " + ref + ": shape element " +
                               std::to_string(dim) + " exceeds 2^48");
            }
        }
    }
    return start;
}

}  // namespace

const char* stDTypeName(StDType dtype) {
    for (const auto& entry : kDTypes) {
        if (entry.dtype == dtype) return entry.name;
    }
    return "?";
}

int stDTypeBits(StDType dtype) {
    for (const auto& entry : kDTypes) {
        if (entry.dtype == dtype) return entry.bits;
    }
    return 0;
}

Result<StHeader> parseSafetensorsHeader(const std::uint8_t* data, std::uint64_t size) {
    if (size < 8) {
        return invalid("HeaderTooSmall: the file has " + std::to_string(size) +
                       " bytes, fewer than the 8-byte header length prefix");
    }
    if (data == nullptr) return makeError(ErrorCode::InvalidArgument, "no data to parse");

    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
    if (n > kMaxHeaderSize || n > std::numeric_limits<std::size_t>::max()) {
        return invalid("HeaderTooLarge: the header length prefix says " + std::to_string(n) +
                       " bytes, more than the limit of " + std::to_string(kMaxHeaderSize));
    }
    if (n > size - 8) {
        return invalid("InvalidHeaderLength: the header length prefix says " + std::to_string(n) +
                       " bytes but only " + std::to_string(size - 8) + " bytes follow it");
    }

    const std::uint8_t* json = data + 8;
    const auto jsonSize = static_cast<std::size_t>(n);
    // nlohmann stops at an embedded NUL and ignores the rest (FORMATS.md §4): refuse it first.
    if (const void* nul = std::memchr(json, 0, jsonSize)) {
        return invalid("InvalidHeader: the header contains a 0x00 byte at file offset " +
                       std::to_string(8 + (static_cast<const std::uint8_t*>(nul) - json)));
    }
    if (const std::size_t bad = firstInvalidUtf8(json, jsonSize); bad != jsonSize) {
        return invalid("InvalidHeader: the header is not valid UTF-8 (file offset " +
                       std::to_string(8 + bad) + ")");
    }
    // nlohmann skips a leading byte order mark; serde_json (the reference) refuses it.
    if (jsonSize >= 3 && json[0] == 0xEF && json[1] == 0xBB && json[2] == 0xBF) {
        return invalid("InvalidHeaderDeserialization: the header starts with a byte order mark");
    }

    StHeader header;
    header.headerLength = n;
    HeaderSaxHandler handler(header);
    bool parsed = false;
    try {
        const auto* first = reinterpret_cast<const char*>(json);
        parsed = nlohmann::json::sax_parse(first, first + jsonSize, &handler);
    } catch (const std::exception& ex) {
        return invalid(std::string("InvalidHeaderDeserialization: ") + ex.what());
    }
    if (!parsed) {
        return invalid("InvalidHeaderDeserialization: " +
                       (handler.error().empty() ? std::string("malformed header") : handler.error()));
    }
    handler.finish();

    auto bufferEnd = validateTensors(header.tensors);
    if (!bufferEnd) return bufferEnd.error();
    // bufferEnd <= 2^48 and n <= 10^8: no overflow.
    const std::uint64_t expected = *bufferEnd + 8 + n;
    if (expected != size) {
        return invalid("MetadataIncompleteBuffer: the tensors end at buffer byte " + std::to_string(*bufferEnd) +
                       ", so the file should be " + std::to_string(expected) + " bytes long, but it is " +
                       std::to_string(size) + (size < expected ? " (truncated)" : " (trailing bytes)"));
    }

    if (const auto it = header.metadata.find("format"); it != header.metadata.end()) {
        const std::string& format = it->second;
        if (format != "pt" && format != "tf" && format != "flax" && format != "mlx") {
            header.warnings.push_back("__metadata__ format " + quoteName(format) +
                                      " is not one of pt, tf, flax, mlx");
        }
    }
    // A large header in a small file hints at a polyglot or padded file; tiny files always
    // have relatively large headers, so only look at files of 1 MiB and more.
    if (size >= (std::uint64_t{1} << 20) && n > size / 10) {
        header.warnings.push_back("the header takes " + std::to_string(n) + " of " + std::to_string(size) +
                                  " bytes (more than 10 % of the file)");
    }
    return header;
}

// ---- SafetensorsFile ------------------------------------------------------------------------

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        return makeError(err == ENOENT || err == ENOTDIR ? ErrorCode::NotFound : ErrorCode::Io,
                         path + ": cannot open: " + std::strerror(err));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return makeError(ErrorCode::Io, path + ": cannot stat: " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return makeError(ErrorCode::Io, path + ": not a regular file");
    }
    std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
    file->m_path = path;
    file->m_size = static_cast<std::uint64_t>(st.st_size);
    // mmap refuses length 0; an empty file is simply HeaderTooSmall.
    if (file->m_size > 0) {
        void* map = ::mmap(nullptr, static_cast<std::size_t>(file->m_size), PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            return makeError(ErrorCode::Io, path + ": cannot map: " + std::strerror(err));
        }
        file->m_map = static_cast<const std::uint8_t*>(map);
    }
    ::close(fd);  // the mapping keeps its own reference to the file

    auto header = parseSafetensorsHeader(file->m_map, file->m_size);
    if (!header) return makeError(header.error().code, path + ": " + header.error().message);
    file->m_header = std::move(header.value());
    file->m_dataStart = 8 + file->m_header.headerLength;
    return file;
}

SafetensorsFile::~SafetensorsFile() {
    if (m_map != nullptr) {
        ::munmap(const_cast<std::uint8_t*>(m_map), static_cast<std::size_t>(m_size));
    }
}

const StTensorInfo* SafetensorsFile::find(const std::string& name) const {
    for (const StTensorInfo& info : m_header.tensors) {
        if (info.name == name) return &info;
    }
    return nullptr;
}

void SafetensorsFile::dropPages(const StTensorInfo& info) const {
    // whole pages only: the first and last may hold a neighbour's bytes, which then fault back in
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(bytes(info));
    const std::uintptr_t first = begin / page * page, last = (begin + (info.end - info.begin) + page - 1) / page * page;
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

const std::uint8_t* SafetensorsFile::bytes(const StTensorInfo& info) const {
    return m_map + m_dataStart + info.begin;
}

Result<PlainTensor> SafetensorsFile::read(const std::string& name) const {
    const StTensorInfo* info = find(name);
    if (info == nullptr) {
        return makeError(ErrorCode::NotFound, m_path + ": no tensor named " + quoteName(name));
    }
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                  "safetensors data is little-endian; the memcpy paths assume a little-endian host");
    // Validation bounded every dim by 2^48 and the element count by the file size.
    std::size_t count = 1;
    PlainTensor out;
    for (const std::uint64_t dim : info->shape) {
        out.shape.push_back(static_cast<std::int64_t>(dim));
        count *= static_cast<std::size_t>(dim);
    }
    const std::uint8_t* src = bytes(*info);
    switch (info->dtype) {
    case StDType::F32:
        out.dtype = DType::F32;
        out.f32.resize(count);
        if (count > 0) std::memcpy(out.f32.data(), src, count * sizeof(float));
        break;
    case StDType::I64:
        out.dtype = DType::I64;
        out.i64.resize(count);
        if (count > 0) std::memcpy(out.i64.data(), src, count * sizeof(std::int64_t));
        break;
    case StDType::I32:
        out.dtype = DType::I32;
        out.i32.resize(count);
        if (count > 0) std::memcpy(out.i32.data(), src, count * sizeof(std::int32_t));
        break;
    case StDType::U8:
    case StDType::BOOL:
        out.dtype = DType::U8;
        out.u8.assign(src, src + count);
        break;
    case StDType::F16:
    case StDType::BF16:
    case StDType::F64: {
        out.dtype = DType::F32;
        out.f32.resize(count);
        auto converted = readF32Into(name, out.f32.data(), count);  // (finiteness is the caller's)
        if (!converted) return converted.error();
        break;
    }
    default:
        return makeError(ErrorCode::Unsupported, m_path + ": tensor " + quoteName(name) + ": dtype " +
                                                     stDTypeName(info->dtype) + " not supported");
    }
    return out;
}

Result<PlainTensor> SafetensorsFile::readRowsF32(const std::string& name, const std::vector<std::int64_t>& rows) const {
    const StTensorInfo* info = find(name);
    if (info == nullptr) return makeError(ErrorCode::NotFound, m_path + ": no tensor named " + quoteName(name));
    if (info->shape.size() != 2)
        return makeError(ErrorCode::InvalidArgument, m_path + ": tensor " + quoteName(name) + " is not a matrix");
    const bool floating = info->dtype == StDType::F32 || info->dtype == StDType::F16 || info->dtype == StDType::BF16;
    if (!floating)
        return makeError(ErrorCode::Unsupported, m_path + ": tensor " + quoteName(name) + ": rows of dtype " +
                                                     stDTypeName(info->dtype) + " are not read");
    const std::uint64_t height = info->shape[0];
    const std::size_t width = static_cast<std::size_t>(info->shape[1]);
    const std::size_t elementBytes = info->dtype == StDType::F32 ? 4 : 2;
    PlainTensor out;
    out.dtype = DType::F32;
    out.shape = {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(width)};
    out.f32.resize(rows.size() * width);
    const std::uint8_t* base = bytes(*info);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (rows[r] < 0 || static_cast<std::uint64_t>(rows[r]) >= height)
            return makeError(ErrorCode::InvalidArgument, m_path + ": tensor " + quoteName(name) + " has no row " +
                                                             std::to_string(rows[r]) + " (it has " + std::to_string(height) + ")");
        const std::uint8_t* src = base + static_cast<std::size_t>(rows[r]) * width * elementBytes;
        float* dst = out.f32.data() + r * width;
        if (info->dtype == StDType::F32) {
            std::memcpy(dst, src, width * sizeof(float));
            continue;
        }
        for (std::size_t i = 0; i < width; ++i) {
            const std::uint16_t h = loadU16(src + 2 * i);
            dst[i] = info->dtype == StDType::F16 ? halfToFloat(h) : bf16ToFloat(h);
        }
    }
    return out;
}

}  // namespace attnscope::engine

namespace attnscope::engine {

Result<bool> SafetensorsFile::readF32Into(const std::string& name, float* out, std::size_t count) const {
    return readSliceF32Into(name, -1, out, count);
}

Result<bool> SafetensorsFile::readSliceF32Into(const std::string& name, std::int64_t index, float* out, std::size_t count) const {
    const StTensorInfo* info = find(name);
    if (info == nullptr) return makeError(ErrorCode::NotFound, m_path + ": no tensor named " + quoteName(name));
    if (index >= 0 && (info->shape.size() < 2 || static_cast<std::uint64_t>(index) >= info->shape[0]))
        return makeError(ErrorCode::InvalidArgument, m_path + ": tensor " + quoteName(name) + " has no slice " + std::to_string(index));
    std::size_t numel = 1;
    for (std::size_t d = index < 0 ? 0 : 1; d < info->shape.size(); ++d) numel *= static_cast<std::size_t>(info->shape[d]);
    if (numel != count)
        return makeError(ErrorCode::InvalidArgument, m_path + ": tensor " + quoteName(name) + " has " + std::to_string(numel) +
                                                         " elements" + (index >= 0 ? " a slice" : "") + ", not " + std::to_string(count));
    const std::size_t skip = index < 0 ? 0 : static_cast<std::size_t>(index) * numel * static_cast<std::size_t>(stDTypeBits(info->dtype) / 8);
    const std::uint8_t* src = bytes(*info) + skip;
    switch (info->dtype) {
    case StDType::F32:
        if (count > 0) std::memcpy(out, src, count * sizeof(float));
        break;
    case StDType::F16:
        for (std::size_t i = 0; i < count; ++i) out[i] = halfToFloat(loadU16(src + 2 * i));
        break;
    case StDType::BF16:
        for (std::size_t i = 0; i < count; ++i) out[i] = bf16ToFloat(loadU16(src + 2 * i));
        break;
    case StDType::F64:
        for (std::size_t i = 0; i < count; ++i) {
            double value = 0.0;
            std::memcpy(&value, src + 8 * i, sizeof value);
            out[i] = static_cast<float>(value);
        }
        break;
    default:
        return makeError(ErrorCode::Unsupported, m_path + ": tensor " + quoteName(name) + ": dtype " +
                                                     stDTypeName(info->dtype) + " is not a floating-point weight");
    }
    // NaN and Inf are the values whose exponent bits are all ones
    bool finite = true;
    for (std::size_t i = 0; i < count && finite; ++i) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, out + i, sizeof bits);
        finite = (bits & 0x7F800000u) != 0x7F800000u;
    }
    return finite;
}

}  // namespace attnscope::engine
