#pragma once
// For targets whose parser takes a path (result files, --qkv files, model folders): one scratch
// folder per process, in RAM (/dev/shm) where there is one, emptied before each input. Inputs
// that stand for several files hold them one after another, split at kFilePartSeparator (the
// seed corpora are written that way; fuzz.sh passes the separator to libFuzzer as a dictionary
// entry so mutations keep and move it).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

inline constexpr const char* kFilePartSeparator = "\n--attnscope-fuzz-part--\n";

/// The input cut at every separator (an input without one is a single part).
inline std::vector<std::string> splitFileParts(const std::uint8_t* data, std::size_t size) {
    const std::string all(reinterpret_cast<const char*>(data), size);
    const std::string sep = kFilePartSeparator;
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t at; (at = all.find(sep, start)) != std::string::npos; start = at + sep.size())
        parts.push_back(all.substr(start, at - start));
    parts.push_back(all.substr(start));
    return parts;
}

class ScratchFolder {
public:
    ScratchFolder() {
        const std::filesystem::path ram = "/dev/shm";
        const auto base = std::filesystem::is_directory(ram) ? ram : std::filesystem::temp_directory_path();
        m_path = base / ("attnscope-fuzz-" + std::to_string(::getpid()));
        clear();
    }
    ~ScratchFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }
    /// Removes every file a previous input left.
    void clear() {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
        std::filesystem::create_directories(m_path);
    }
    std::string folder() const { return m_path.string(); }
    std::string write(const std::string& name, const std::string& bytes) const {
        const auto file = m_path / name;
        std::ofstream(file, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return file.string();
    }

private:
    std::filesystem::path m_path;
};
