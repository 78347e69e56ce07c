#pragma once
// The bytes of a large file written straight to the disk (O_DIRECT) through an aligned bounce
// buffer, not through the page cache. On the machines we measure (a paravirtualised VM) every
// fresh page-cache page costs as much as a fresh page of memory: writing a 136 MB Linformer result
// took 0.26 s through the cache after a `full` run, 55–72 ms directly (strace; docs/PERFORMANCE.md). A result file is read again rarely and long after, so the cache gains
// nothing from holding it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace attnscope::engine {

class DirectWrites {
public:
    /// A second descriptor on `path` (already created, empty) opened with O_DIRECT, tried with one
    /// block; null where the filesystem or the kernel does not take direct writes (the caller
    /// writes through the cache).
    static std::unique_ptr<DirectWrites> open(const std::string& path);
    ~DirectWrites();
    DirectWrites(const DirectWrites&) = delete;
    DirectWrites& operator=(const DirectWrites&) = delete;

    /// Appends bytes; false with errno set when a direct write failed.
    bool append(const void* bytes, std::size_t size);
    /// Writes what is still buffered, padded with zeros to whole blocks: the caller truncates the
    /// file to total() bytes. False with errno set on failure.
    bool finish();
    /// Bytes appended so far.
    std::uint64_t total() const { return m_flushed + m_fill; }

private:
    DirectWrites(int fd, std::uint8_t* buffer) : m_fd(fd), m_buffer(buffer) {}
    bool writeBuffer(std::size_t bytes);

    int m_fd = -1;
    std::uint8_t* m_buffer = nullptr;  ///< kBufferBytes, 2 MiB-aligned
    std::size_t m_fill = 0;
    std::uint64_t m_flushed = 0;
};

}  // namespace attnscope::engine
