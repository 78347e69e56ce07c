#pragma once
// A file written under a temporary name in the target's folder and renamed into place when
// complete: readers see the old file or the new one, never half of one, and a failed write leaves
// nothing behind.

#include <attnscope/result.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace attnscope::engine {

class DirectWrites;

class AtomicFile {
public:
    /// Creates `path`.tmp-XXXXXX (mode 0644). Errors are Io errors naming `path`. A file expected
    /// to reach kDirectWorthyBytes is written straight to the disk where the filesystem allows it
    /// (base/api/direct_writes.h), else through the page cache.
    static Result<AtomicFile> create(const std::string& path, std::uint64_t expectedBytes = 0);
    static constexpr std::uint64_t kDirectWorthyBytes = 16ull << 20;
    AtomicFile(AtomicFile&& other) noexcept;
    AtomicFile& operator=(AtomicFile&&) = delete;
    AtomicFile(const AtomicFile&) = delete;
    ~AtomicFile();  ///< removes the temporary file unless committed

    /// Appends bytes; an Io error on failure (the file is then abandoned).
    Result<void> write(const void* bytes, std::size_t size);
    /// Close and rename into place. Not fsync'd (atomic_file.cpp says why): after a power cut in
    /// the seconds that follow, the new file may be missing or empty; a failed run never leaves
    /// half of one.
    Result<void> commit();
    /// An Io error naming the target: "PATH: what: strerror(err)".
    Error error(const std::string& what, int err) const;
    const std::string& path() const { return m_path; }

private:
    AtomicFile(std::string path, std::string tmpPath, int fd);
    void abandon();

    std::string m_path, m_tmpPath;
    int m_fd = -1;
    std::unique_ptr<DirectWrites> m_direct;  ///< set while the bytes go straight to the disk
    std::uint64_t m_written = 0;      ///< bytes written so far
    std::uint64_t m_writtenBack = 0;  ///< bytes whose write-back to the disk has been started
};

}  // namespace attnscope::engine
