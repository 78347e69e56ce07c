#include "base/api/strict_json.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <unordered_set>
#include <vector>

namespace attnscope::engine {
namespace {

Error invalid(std::string message) { return Error{ErrorCode::InvalidInput, std::move(message)}; }

/// Builds the DOM from SAX events, refusing duplicate keys and deep nesting.
class StrictDomBuilder {
public:
    using Json = nlohmann::json;

    StrictDomBuilder(Json& root, int maxDepth) : m_root(root), m_maxDepth(maxDepth) {}
    const std::string& error() const { return m_error; }

    bool null() { return put(Json(nullptr)); }
    bool boolean(bool v) { return put(Json(v)); }
    bool number_integer(Json::number_integer_t v) { return put(Json(v)); }
    bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)); }
    bool number_float(Json::number_float_t v, const std::string& /*literal*/) { return put(Json(v)); }
    bool string(std::string& v) { return put(Json(std::move(v))); }
    bool binary(Json::binary_t& /*v*/) { return fail("binary values are not JSON"); }

    bool start_object(std::size_t /*elements*/) { return open(Json::object()); }
    bool start_array(std::size_t /*elements*/) { return open(Json::array()); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool key(std::string& k) {
        Frame& frame = m_stack.back();
        if (!frame.keys.insert(k).second) return fail("duplicate key \"" + k + "\" in " + path());
        frame.pendingKey = k;
        return true;
    }

    bool parse_error(std::size_t position, const std::string& /*lastToken*/,
                     const nlohmann::detail::exception& ex) {
        std::string what = ex.what();
        const auto cut = what.find("] ");
        if (cut != std::string::npos) what = what.substr(cut + 2);
        return fail("not valid JSON near byte " + std::to_string(position) + ": " + what);
    }

private:
    struct Frame {
        Json* node;
        std::unordered_set<std::string> keys;
        std::string pendingKey;
    };

    bool fail(std::string message) {
        if (m_error.empty()) m_error = std::move(message);
        return false;
    }
    std::string path() const {
        std::string out = "$";
        for (std::size_t i = 0; i + 1 < m_stack.size(); ++i) {
            const Frame& f = m_stack[i];
            if (f.node->is_object()) out += "." + f.pendingKey;
            else out += "[" + std::to_string(f.node->size() - 1) + "]";
        }
        return out;
    }
    Json* slot(Json value) {
        if (m_stack.empty()) {
            m_root = std::move(value);
            return &m_root;
        }
        Frame& frame = m_stack.back();
        if (frame.node->is_object()) {
            Json& target = (*frame.node)[frame.pendingKey];
            target = std::move(value);
            return &target;
        }
        frame.node->push_back(std::move(value));
        return &frame.node->back();
    }
    bool put(Json value) {
        slot(std::move(value));
        return true;
    }
    bool open(Json container) {
        if (static_cast<int>(m_stack.size()) >= m_maxDepth)
            return fail("nesting deeper than " + std::to_string(m_maxDepth) + " levels");
        Json* node = slot(std::move(container));
        m_stack.push_back(Frame{node, {}, {}});
        return true;
    }
    bool close() {
        m_stack.pop_back();
        return true;
    }

    Json& m_root;
    int m_maxDepth;
    std::vector<Frame> m_stack;
    std::string m_error;
};

}  // namespace

Result<nlohmann::json> parseStrictJson(const std::string& text, const std::string& source, int maxDepth) {
    const auto nul = text.find('\0');
    if (nul != std::string::npos)
        return invalid(source + ": NUL byte at offset " + std::to_string(nul) + " (not JSON text)");
    nlohmann::json root;
    StrictDomBuilder builder(root, maxDepth);
    bool ok = false;
    try {
        ok = nlohmann::json::sax_parse(text, &builder);
    } catch (const std::exception& e) {
        return invalid(source + ": " + e.what());
    }
    if (!ok) return invalid(source + ": " + (builder.error().empty() ? "not valid JSON" : builder.error()));
    return root;
}

Result<std::string> readWholeFile(const std::string& path, std::uint64_t maxBytes) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        const int err = errno;
        return Error{err == ENOENT ? ErrorCode::NotFound : ErrorCode::Io,
                     path + ": cannot open: " + std::strerror(err)};
    }
    const auto size = static_cast<std::int64_t>(in.tellg());
    if (size < 0) return Error{ErrorCode::Io, path + ": cannot read its size"};
    if (static_cast<std::uint64_t>(size) > maxBytes)
        return invalid(path + ": " + std::to_string(size) + " bytes, more than the " + std::to_string(maxBytes) +
                       " allowed for this kind of file");
    std::string text(static_cast<std::size_t>(size), '\0');
    in.seekg(0);
    if (size > 0 && !in.read(text.data(), size)) return Error{ErrorCode::Io, path + ": read failed"};
    return text;
}

Result<nlohmann::json> readStrictJsonFile(const std::string& path, std::uint64_t maxBytes) {
    auto text = readWholeFile(path, maxBytes);
    if (!text) return text.error();
    return parseStrictJson(text.value(), path);
}

}  // namespace attnscope::engine
