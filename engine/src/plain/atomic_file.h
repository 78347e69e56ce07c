#pragma once
// A file written under a temporary name in the target's folder and renamed into place when
// complete: readers see the old file or the new one, never half of one, and a failed write leaves
// nothing behind.

#include <attnscope/result.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnscope::engine {

class AtomicFile {
public:
    /// Creates `path`.tmp-XXXXXX (mode 0644). Errors are Io errors naming `path`.
    static Result<AtomicFile> create(const std::string& path);
    AtomicFile(AtomicFile&& other) noexcept;
    AtomicFile& operator=(AtomicFile&&) = delete;
    AtomicFile(const AtomicFile&) = delete;
    ~AtomicFile();  ///< removes the temporary file unless committed

    /// Appends bytes; an Io error on failure (the file is then abandoned).
    Result<void> write(const void* bytes, std::size_t size);
    /// fsync (without it a crash after the rename can leave an empty file under the final name),
    /// close and rename into place.
    Result<void> commit();
    /// An Io error naming the target: "PATH: what: strerror(err)".
    Error error(const std::string& what, int err) const;
    const std::string& path() const { return m_path; }

private:
    AtomicFile(std::string path, std::string tmpPath, int fd);
    void abandon();

    std::string m_path, m_tmpPath;
    int m_fd = -1;
    std::uint64_t m_written = 0;      ///< bytes written so far
    std::uint64_t m_writtenBack = 0;  ///< bytes whose write-back to the disk has been started
};

}  // namespace attnscope::engine
