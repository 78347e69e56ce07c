#include "io/checkpoint/gguf_file.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope::engine {
namespace {

constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF", little-endian
constexpr std::uint64_t kMaxStringBytes = 1ull << 26;  // 64 MiB: a string longer than any tokenizer's
constexpr std::uint32_t kMaxDims = 4;                  // ggml's GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 1;                      // arrays of scalars or strings (the spec's use)

struct Layout {
    std::uint32_t type;
    const char* name;
    std::int64_t elements, bytes;
};

// ggml's block layouts (ggml-common.h): elements per block, bytes per block.
constexpr Layout kLayouts[] = {
    {0, "F32", 1, 4},          {1, "F16", 1, 2},          {2, "Q4_0", 32, 18},       {3, "Q4_1", 32, 20},
    {6, "Q5_0", 32, 22},       {7, "Q5_1", 32, 24},       {8, "Q8_0", 32, 34},       {9, "Q8_1", 32, 36},
    {10, "Q2_K", 256, 84},     {11, "Q3_K", 256, 110},    {12, "Q4_K", 256, 144},    {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},    {15, "Q8_K", 256, 292},    {16, "IQ2_XXS", 256, 66},  {17, "IQ2_XS", 256, 74},
    {18, "IQ3_XXS", 256, 98},  {19, "IQ1_S", 256, 50},    {20, "IQ4_NL", 32, 18},    {21, "IQ3_S", 256, 110},
    {22, "IQ2_S", 256, 82},    {23, "IQ4_XS", 256, 136},  {24, "I8", 1, 1},          {25, "I16", 1, 2},
    {26, "I32", 1, 4},         {27, "I64", 1, 8},         {28, "F64", 1, 8},         {29, "IQ1_M", 256, 56},
    {30, "BF16", 1, 2},        {34, "TQ1_0", 256, 54},    {35, "TQ2_0", 256, 66},    {39, "MXFP4", 32, 17},
};

const Layout* layoutOf(std::uint32_t type) {
    for (const Layout& l : kLayouts)
        if (l.type == type) return &l;
    return nullptr;
}

// A bounds-checked little-endian reader over the file image; a failure records where and why.
class Cursor {
public:
    Cursor(const std::uint8_t* data, std::uint64_t size, std::string source) : m_data(data), m_size(size), m_source(std::move(source)) {}

    template <class T>
    bool read(T& out, const char* what) {
        if (m_size - m_at < sizeof(T)) return fail(std::string(what) + " runs past the end of the file");
        std::memcpy(&out, m_data + m_at, sizeof(T));  // (x86 and ARM hosts are little-endian, as GGUF)
        m_at += sizeof(T);
        return true;
    }
    bool readString(std::string& out, const std::string& what) {
        std::uint64_t length = 0;
        if (!read(length, what.c_str())) return false;
        if (length > kMaxStringBytes || length > m_size - m_at)
            return fail(what + " claims " + std::to_string(length) + " bytes, more than the file holds");
        out.assign(reinterpret_cast<const char*>(m_data + m_at), static_cast<std::size_t>(length));
        m_at += length;
        return true;
    }
    bool fail(const std::string& rule) {
        if (m_error.empty()) m_error = m_source + ": GGUF at byte " + std::to_string(m_at) + ": " + rule;
        return false;
    }
    std::uint64_t at() const { return m_at; }
    std::uint64_t left() const { return m_size - m_at; }
    const std::string& error() const { return m_error; }

private:
    const std::uint8_t* m_data;
    std::uint64_t m_size, m_at = 0;
    std::string m_source, m_error;
};

using Scalar = std::variant<std::uint64_t, std::int64_t, double, bool, std::string>;

// A float32 value as the shortest decimal that reads back as it (1e-5, not 9.99999974738e-06): the
// number the converter was given, which config.json states for the same model.
double shortestDecimal(float v) {
    if (!std::isfinite(v)) return static_cast<double>(v);
    char text[32];
    const auto written = std::to_chars(text, text + sizeof text - 1, v);
    *written.ptr = '\0';
    return std::strtod(text, nullptr);
}

// One value of GGUF type `type` (not an array).
bool readScalar(Cursor& c, std::uint32_t type, Scalar& out, const std::string& key) {
    auto integer = [&](auto sample, bool isSigned) {
        decltype(sample) v{};
        if (!c.read(v, ("the value of '" + key + "'").c_str())) return false;
        if (isSigned) out = static_cast<std::int64_t>(v);
        else out = static_cast<std::uint64_t>(v);
        return true;
    };
    switch (type) {
    case 0: return integer(std::uint8_t{}, false);
    case 1: return integer(std::int8_t{}, true);
    case 2: return integer(std::uint16_t{}, false);
    case 3: return integer(std::int16_t{}, true);
    case 4: return integer(std::uint32_t{}, false);
    case 5: return integer(std::int32_t{}, true);
    case 10: return integer(std::uint64_t{}, false);
    case 11: return integer(std::int64_t{}, true);
    case 6: {
        float v = 0;
        if (!c.read(v, "a float32 value")) return false;
        out = shortestDecimal(v);
        return true;
    }
    case 12: {
        double v = 0;
        if (!c.read(v, "a float64 value")) return false;
        out = v;
        return true;
    }
    case 7: {
        std::uint8_t v = 0;
        if (!c.read(v, "a bool value")) return false;
        if (v > 1) return c.fail("'" + key + "' is a bool of value " + std::to_string(v) + " (0 or 1)");
        out = v == 1;
        return true;
    }
    case 8: {
        std::string s;
        if (!c.readString(s, "the string of '" + key + "'")) return false;
        out = std::move(s);
        return true;
    }
    default: return c.fail("'" + key + "' has value type " + std::to_string(type) + ", not one of GGUF's 0–12");
    }
}

// The smallest bytes an element of `type` takes: an array's count is checked against the file.
std::uint64_t minimumBytes(std::uint32_t type) {
    switch (type) {
    case 0: case 1: case 7: return 1;
    case 2: case 3: return 2;
    case 4: case 5: case 6: return 4;
    default: return 8;  // 64-bit scalars, and a string's length
    }
}

bool readValue(Cursor& c, GgufValue& out, const std::string& key) {
    std::uint32_t type = 0;
    if (!c.read(type, ("the type of '" + key + "'").c_str())) return false;
    if (type != 9) {
        Scalar s;
        if (!readScalar(c, type, s, key)) return false;
        out.type = type;
        std::visit([&](auto&& v) { out.value = v; }, s);
        return true;
    }
    std::uint32_t elementType = 0;
    std::uint64_t count = 0;
    if (!c.read(elementType, ("the element type of '" + key + "'").c_str()) || !c.read(count, ("the length of '" + key + "'").c_str()))
        return false;
    if (elementType == 9) return c.fail("'" + key + "' is an array of arrays (deeper than " + std::to_string(kMaxArrayDepth) + " level)");
    if (elementType > 12) return c.fail("'" + key + "' has element type " + std::to_string(elementType) + ", not one of GGUF's 0–12");
    if (count > c.left() / minimumBytes(elementType))
        return c.fail("'" + key + "' claims " + std::to_string(count) + " elements, more than the file holds");
    GgufValue::Array array;
    array.reserve(static_cast<std::size_t>(count));
    for (std::uint64_t i = 0; i < count; ++i) {
        Scalar s;
        if (!readScalar(c, elementType, s, key)) return false;
        array.push_back(std::move(s));
    }
    out.type = elementType;
    out.value = std::move(array);
    return true;
}

bool readTensorInfo(Cursor& c, GgufTensor& t) {
    if (!c.readString(t.name, "a tensor's name")) return false;
    std::uint32_t dims = 0;
    if (!c.read(dims, ("the dimensions of '" + t.name + "'").c_str())) return false;
    if (dims == 0 || dims > kMaxDims)
        return c.fail("tensor '" + t.name + "' has " + std::to_string(dims) + " dimensions (1 to " + std::to_string(kMaxDims) + ")");
    std::uint64_t elements = 1;
    for (std::uint32_t d = 0; d < dims; ++d) {
        std::uint64_t size = 0;
        if (!c.read(size, ("a dimension of '" + t.name + "'").c_str())) return false;
        if (size == 0 || size > (1ull << 40) || elements > (1ull << 50) / size)
            return c.fail("tensor '" + t.name + "' has dimension " + std::to_string(d) + " of " + std::to_string(size) +
                          " (positive, and the whole under 2^50 elements)");
        elements *= size;
        t.shape.push_back(static_cast<std::int64_t>(size));
    }
    if (!c.read(t.type, ("the type of '" + t.name + "'").c_str()) || !c.read(t.offset, ("the offset of '" + t.name + "'").c_str()))
        return false;
    const Layout* layout = layoutOf(t.type);
    if (!layout) return c.fail("tensor '" + t.name + "' has type " + std::to_string(t.type) + ", which ggml does not define");
    if (t.shape[0] % layout->elements != 0)
        return c.fail("tensor '" + t.name + "' of type " + layout->name + " has rows of " + std::to_string(t.shape[0]) +
                      " elements, not a multiple of its block of " + std::to_string(layout->elements));
    t.bytes = elements / static_cast<std::uint64_t>(layout->elements) * static_cast<std::uint64_t>(layout->bytes);
    return true;
}

// Alignment, data bounds and overlaps of the tensors (their bytes against the data section).
bool checkTensorPlacement(Cursor& c, GgufHeader& h, std::uint64_t fileSize) {
    h.dataStart = (c.at() + h.alignment - 1) / h.alignment * h.alignment;
    if (h.dataStart > fileSize) return c.fail("the data section starts past the end of the file");
    const std::uint64_t dataBytes = fileSize - h.dataStart;
    std::map<std::uint64_t, const GgufTensor*> byOffset;
    for (const GgufTensor& t : h.tensors) {
        if (t.offset % h.alignment != 0)
            return c.fail("tensor '" + t.name + "' starts at data offset " + std::to_string(t.offset) + ", not a multiple of the alignment " +
                          std::to_string(h.alignment));
        if (t.offset > dataBytes || t.bytes > dataBytes - t.offset)
            return c.fail("tensor '" + t.name + "' (" + std::to_string(t.bytes) + " bytes at data offset " + std::to_string(t.offset) +
                          ") runs past the end of the file");
        if (!byOffset.emplace(t.offset, &t).second && t.bytes > 0)
            return c.fail("tensors '" + byOffset[t.offset]->name + "' and '" + t.name + "' start at the same offset");
    }
    const GgufTensor* previous = nullptr;
    for (const auto& [offset, t] : byOffset) {
        if (previous && previous->offset + previous->bytes > offset)
            return c.fail("tensors '" + previous->name + "' and '" + t->name + "' overlap");
        previous = t;
    }
    return true;
}

bool readAlignment(Cursor& c, GgufHeader& h) {
    const auto it = h.metadata.find("general.alignment");
    if (it == h.metadata.end()) return true;
    const auto* value = std::get_if<std::uint64_t>(&it->second.value);
    if (!value || it->second.type != 4) return c.fail("general.alignment must be a uint32");
    if (*value == 0 || (*value & (*value - 1)) != 0 || *value > 4096)
        return c.fail("general.alignment must be a power of two up to 4096, got " + std::to_string(*value));
    h.alignment = *value;
    return true;
}

}  // namespace

std::string ggmlTypeName(std::uint32_t type) {
    const Layout* l = layoutOf(type);
    return l ? l->name : "type " + std::to_string(type);
}

bool ggmlBlockLayout(std::uint32_t type, std::int64_t& elements, std::int64_t& bytes) {
    const Layout* l = layoutOf(type);
    if (!l) return false;
    elements = l->elements;
    bytes = l->bytes;
    return true;
}

std::int64_t GgufTensor::elements() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

Result<GgufHeader> parseGgufHeader(const std::uint8_t* data, std::uint64_t size, const std::string& source) {
    Cursor c(data, size, source);
    GgufHeader h;
    std::uint32_t magic = 0;
    std::uint64_t tensorCount = 0, metadataCount = 0;
    auto refused = [&]() -> Result<GgufHeader> { return Error{ErrorCode::InvalidInput, c.error()}; };
    if (!c.read(magic, "the magic") || magic != kMagic) {
        c.fail("not a GGUF file (no \"GGUF\" magic)");
        return refused();
    }
    if (!c.read(h.version, "the version")) return refused();
    if (h.version != 2 && h.version != 3) {
        c.fail("version " + std::to_string(h.version) + " is not read (versions 2 and 3 are)");
        return refused();
    }
    if (!c.read(tensorCount, "the tensor count") || !c.read(metadataCount, "the metadata count")) return refused();
    // every pair and tensor takes at least 8 + 4 bytes: counts beyond the file are refused before any allocation
    if (metadataCount > c.left() / 12 || tensorCount > c.left() / 12) {
        c.fail("claims " + std::to_string(metadataCount) + " metadata pairs and " + std::to_string(tensorCount) +
               " tensors, more than the file holds");
        return refused();
    }
    for (std::uint64_t i = 0; i < metadataCount; ++i) {
        std::string key;
        GgufValue value;
        if (!c.readString(key, "a metadata key") || !readValue(c, value, key)) return refused();
        if (!h.metadata.emplace(key, std::move(value)).second) {
            c.fail("metadata key '" + key + "' appears twice");
            return refused();
        }
    }
    if (!readAlignment(c, h)) return refused();
    std::set<std::string> names;
    for (std::uint64_t i = 0; i < tensorCount; ++i) {
        GgufTensor t;
        if (!readTensorInfo(c, t)) return refused();
        if (!names.insert(t.name).second) {
            c.fail("tensor '" + t.name + "' appears twice");
            return refused();
        }
        h.tensors.push_back(std::move(t));
    }
    if (!checkTensorPlacement(c, h, size)) return refused();
    return h;
}

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error{ErrorCode::NotFound, path + ": cannot open: " + std::strerror(errno)};
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
        ::close(fd);
        return Error{ErrorCode::InvalidInput, path + ": empty or unreadable"};
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    void* map = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) return Error{ErrorCode::InvalidInput, path + ": cannot map: " + std::strerror(errno)};
    std::unique_ptr<GgufFile> file(new GgufFile());
    file->m_path = path;
    file->m_map = static_cast<const std::uint8_t*>(map);
    file->m_size = size;
    auto header = parseGgufHeader(file->m_map, size, path);
    if (!header) return header.error();
    file->m_header = std::move(header.value());
    return file;
}

void GgufFile::dropPages(const GgufTensor& tensor, std::uint64_t offset, std::uint64_t bytes) const {
    // whole pages only: the first and last may hold a neighbour's bytes, which then fault back in
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(this->bytes(tensor) + offset);
    const std::uintptr_t first = begin / page * page, last = (begin + bytes + page - 1) / page * page;
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

GgufFile::~GgufFile() {
    if (m_map) ::munmap(const_cast<std::uint8_t*>(m_map), static_cast<std::size_t>(m_size));
}

const GgufTensor* GgufFile::find(const std::string& name) const {
    for (const GgufTensor& t : m_header.tensors)
        if (t.name == name) return &t;
    return nullptr;
}

}  // namespace attnscope::engine
