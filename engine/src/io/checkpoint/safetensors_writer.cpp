// safetensors writer following the official one (FORMATS.md §1.2 "Our writer").
#include <attnscope/safetensors.h>

#include "io/checkpoint/safetensors_json.h"
#include "base/api/atomic_file.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <cerrno>
#include <cstring>
#include <unordered_set>


namespace attnscope::engine {

using namespace safetensors_detail;

namespace {

struct PreparedItem {
    const StWriteItem* item;
    StDType dtype;
    std::uint64_t byteSize;
};

struct Prepared {
    std::string header;  // JSON, space-padded to a multiple of 8
    std::vector<PreparedItem> items;  // in buffer order
    std::uint64_t bufferSize = 0;
};

StDType toStDType(DType dtype) {
    switch (dtype) {
    case DType::F32: return StDType::F32;
    case DType::I64: return StDType::I64;
    case DType::I32: return StDType::I32;
    case DType::U8: return StDType::U8;
    }
    return StDType::U8;
}

std::size_t storedElements(const PlainTensor& t) {
    switch (t.dtype) {
    case DType::F32: return t.f32.size();
    case DType::I64: return t.i64.size();
    case DType::I32: return t.i32.size();
    case DType::U8: return t.u8.size();
    }
    return 0;
}

std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) out += ", ";
        out += std::to_string(shape[i]);
    }
    return out + "]";
}

Error badArgument(const std::string& message) { return makeError(ErrorCode::InvalidArgument, message); }

Result<Prepared> prepare(const std::vector<StWriteItem>& tensors,
                         const std::map<std::string, std::string>& metadata) {
    Prepared out;
    out.items.reserve(tensors.size());
    std::unordered_set<std::string> names;
    for (const StWriteItem& item : tensors) {
        if (item.name.empty()) return badArgument("tensor names must not be empty");
        const std::string ref = "tensor " + quoteName(item.name);
        if (item.name == "__metadata__") {
            return badArgument("the tensor name '__metadata__' is reserved for the metadata map");
        }
        if (!isValidUtf8(item.name)) return badArgument(ref + ": the name is not valid UTF-8");
        if (!names.insert(item.name).second) return badArgument("duplicate tensor name " + quoteName(item.name));
        if (item.tensor == nullptr && item.data == nullptr && !item.produce) return badArgument(ref + ": no tensor given");

        const std::vector<std::int64_t>& shape = item.tensor ? item.tensor->shape : item.shape;
        const DType dtype = item.tensor ? item.tensor->dtype : item.dtype;
        std::uint64_t elements = 1;
        for (const std::int64_t dim : shape) {
            if (dim < 0) return badArgument(ref + ": negative dimension in shape " + shapeText(shape));
            if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(dim), &elements)) {
                return badArgument(ref + ": the element count of shape " + shapeText(shape) + " overflows");
            }
        }
        if (item.tensor && storedElements(*item.tensor) != elements) {
            return badArgument(ref + ": shape " + shapeText(shape) + " needs " + std::to_string(elements) +
                               " elements but the tensor holds " + std::to_string(storedElements(*item.tensor)));
        }
        std::uint64_t bytes = 0;
        if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(dtypeSize(dtype)), &bytes))
            return badArgument(ref + ": the byte size of shape " + shapeText(shape) + " overflows");
        out.items.push_back(PreparedItem{&item, toStDType(dtype), bytes});
    }
    for (const auto& [key, value] : metadata) {
        if (!isValidUtf8(key) || !isValidUtf8(value)) {
            return badArgument("__metadata__ entry " + quoteName(key) + " is not valid UTF-8");
        }
    }

    // The official writer sorts by descending dtype (its enum is ordered by alignment), then by
    // name, so every tensor starts naturally aligned; we reproduce its byte layout exactly.
    std::sort(out.items.begin(), out.items.end(), [](const PreparedItem& a, const PreparedItem& b) {
        const int bitsA = stDTypeBits(a.dtype);
        const int bitsB = stDTypeBits(b.dtype);
        if (bitsA != bitsB) return bitsA > bitsB;
        if (a.dtype != b.dtype) return a.dtype > b.dtype;
        return a.item->name < b.item->name;
    });

    std::string& h = out.header;
    h += '{';
    bool first = true;
    if (!metadata.empty()) {
        h += "\"__metadata__\":{";
        for (const auto& [key, value] : metadata) {
            if (!first) h += ',';
            first = false;
            appendJsonString(h, key);
            h += ':';
            appendJsonString(h, value);
        }
        h += '}';
        first = false;
    }
    std::uint64_t offset = 0;
    for (const PreparedItem& p : out.items) {
        if (!first) h += ',';
        first = false;
        appendJsonString(h, p.item->name);
        h += ":{\"dtype\":\"";
        h += stDTypeName(p.dtype);
        h += "\",\"shape\":[";
        const std::vector<std::int64_t>& shape = p.item->tensor ? p.item->tensor->shape : p.item->shape;
        for (std::size_t i = 0; i < shape.size(); ++i) {
            if (i > 0) h += ',';
            h += std::to_string(shape[i]);
        }
        h += "],\"data_offsets\":[";
        h += std::to_string(offset);
        h += ',';
        offset += p.byteSize;
        h += std::to_string(offset);
        h += "]}";
    }
    h += '}';
    h.append((8 - h.size() % 8) % 8, ' ');
    out.bufferSize = offset;
    if (h.size() > kMaxHeaderSize) {
        return badArgument("HeaderTooLarge: the header would take " + std::to_string(h.size()) +
                           " bytes, more than the limit of " + std::to_string(kMaxHeaderSize));
    }
    if (offset > kMaxJsonInteger) {
        return badArgument("the tensors take " + std::to_string(offset) + " bytes, more than 2^48");
    }
    return out;
}

void appendLengthPrefix(std::uint8_t prefix[8], std::uint64_t n) {
    for (int i = 0; i < 8; ++i) prefix[i] = static_cast<std::uint8_t>(n >> (8 * i));
}

/// write(2) until done; retries on EINTR and short writes. Returns 0 or an errno value.
// The item's bytes through `write`: the tensor's storage, the view's, or what produce() makes.
bool writeItem(const StWriteItem& item, const std::function<bool(const void*, std::size_t)>& write) {
    if (item.produce) return item.produce(write);
    const void* data = item.tensor ? item.tensor->data() : item.data;
    const std::size_t bytes = item.tensor ? item.tensor->byteSize()
                                          : static_cast<std::size_t>(std::accumulate(item.shape.begin(), item.shape.end(),
                                                                                     std::int64_t{1}, std::multiplies<>())) *
                                                dtypeSize(item.dtype);
    return write(data, bytes);
}

}  // namespace

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; tensors are written from host memory as is");

Result<std::vector<std::uint8_t>> encodeSafetensors(const std::vector<StWriteItem>& tensors,
                                                    const std::map<std::string, std::string>& metadata) {
    auto prepared = prepare(tensors, metadata);
    if (!prepared) return prepared.error();
    const Prepared& p = prepared.value();
    std::vector<std::uint8_t> out(8);
    appendLengthPrefix(out.data(), p.header.size());
    out.reserve(8 + p.header.size() + static_cast<std::size_t>(p.bufferSize));
    out.insert(out.end(), p.header.begin(), p.header.end());
    for (const PreparedItem& item : p.items) {
        if (item.byteSize == 0) continue;
        const std::size_t before = out.size();
        if (!writeItem(*item.item, [&](const void* bytes, std::size_t size) {
                const auto* b = static_cast<const std::uint8_t*>(bytes);
                out.insert(out.end(), b, b + size);
                return true;
            }))
            return makeError(ErrorCode::Io, "tensor " + quoteName(item.item->name) + " could not be made");
        if (out.size() - before != item.byteSize)
            return makeError(ErrorCode::Internal, "tensor " + quoteName(item.item->name) + " produced " +
                                                      std::to_string(out.size() - before) + " bytes, expected " +
                                                      std::to_string(item.byteSize));
    }
    return out;
}

Result<void> writeSafetensors(const std::string& path, const std::vector<StWriteItem>& tensors,
                              const std::map<std::string, std::string>& metadata) {
    auto prepared = prepare(tensors, metadata);
    if (!prepared) return makeError(prepared.error().code, path + ": " + prepared.error().message);
    const Prepared& p = prepared.value();

    auto file = AtomicFile::create(path, sizeof(std::uint64_t) + p.header.size() + p.bufferSize);
    if (!file) return file.error();
    std::uint8_t prefix[8];
    appendLengthPrefix(prefix, p.header.size());
    if (auto w = file->write(prefix, sizeof prefix); !w) return w.error();
    if (auto w = file->write(p.header.data(), p.header.size()); !w) return w.error();
    for (const PreparedItem& item : p.items) {
        if (item.byteSize == 0) continue;
        Result<void> failed;
        std::uint64_t written = 0;
        const bool made = writeItem(*item.item, [&](const void* bytes, std::size_t size) {
            failed = file->write(bytes, size);
            written += size;
            return static_cast<bool>(failed);
        });
        if (!failed) return failed.error();
        if (!made || written != item.byteSize)
            return makeError(made ? ErrorCode::Internal : ErrorCode::Io,
                             path + ": tensor " + quoteName(item.item->name) +
                                 (made ? " produced " + std::to_string(written) + " bytes, expected " + std::to_string(item.byteSize)
                                       : " could not be made"));
    }
    return file->commit();
}

}  // namespace attnscope::engine
