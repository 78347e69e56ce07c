#pragma once
// Strict JSON for untrusted files (config.json, index files): nlohmann's DOM parser keeps the last
// of two duplicate keys silently and stops at an embedded NUL, so we parse through SAX, reject
// both, and bound the nesting depth (FORMATS.md §4).

#include <attnscope/result.h>

#include <nlohmann/json.hpp>

#include <string>

namespace attnscope::engine {

/// Parses `text` as one JSON document. `source` names the file in error messages.
Result<nlohmann::json> parseStrictJson(const std::string& text, const std::string& source, int maxDepth = 64);

/// Reads a whole file (refusing more than `maxBytes`) and parses it with parseStrictJson.
Result<nlohmann::json> readStrictJsonFile(const std::string& path, std::uint64_t maxBytes = 64u << 20);

/// Reads a whole file into a string, refusing files over `maxBytes`; the error names the path.
Result<std::string> readWholeFile(const std::string& path, std::uint64_t maxBytes);

}  // namespace attnscope::engine
