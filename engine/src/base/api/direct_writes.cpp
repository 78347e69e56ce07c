#include "base/api/direct_writes.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace attnscope::engine {
namespace {

// Bytes per direct write: 1 MiB writes took twice as long as 2–8 MiB ones here.
constexpr std::size_t kBufferBytes = 8u << 20;
// Direct writes must cover whole blocks of the device: 4 KiB covers every common one.
constexpr std::size_t kBlockBytes = 4096;
constexpr std::size_t kHugePage = 2u << 20;

// The bounce buffer on huge pages (its first touch is then 4 faults, not 2,048), unmapped with
// its alignment slack trimmed so that munmap(buffer, kBufferBytes) releases all of it.
std::uint8_t* mapAlignedBuffer() {
    void* raw = ::mmap(nullptr, kBufferBytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    const auto start = reinterpret_cast<std::uintptr_t>(raw);
    const auto aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
    if (aligned > start) ::munmap(raw, aligned - start);
    const std::uintptr_t tail = start + kBufferBytes + kHugePage - (aligned + kBufferBytes);
    if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + kBufferBytes), tail);
    ::madvise(reinterpret_cast<void*>(aligned), kBufferBytes, MADV_HUGEPAGE);  // (advice only)
    return reinterpret_cast<std::uint8_t*>(aligned);
}

}  // namespace

std::unique_ptr<DirectWrites> DirectWrites::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0) return nullptr;  // (EINVAL: this filesystem has no direct I/O)
    std::uint8_t* buffer = mapAlignedBuffer();
    if (!buffer) {
        ::close(fd);
        return nullptr;
    }
    // One block written now tells whether this filesystem takes direct writes of this alignment
    // (some accept O_DIRECT at open and refuse the write): the file is then written through the
    // cache from its first byte. The block is overwritten by the file's own first bytes.
    std::memset(buffer, 0, kBlockBytes);
    if (::pwrite(fd, buffer, kBlockBytes, 0) != static_cast<ssize_t>(kBlockBytes)) {
        ::munmap(buffer, kBufferBytes);
        ::close(fd);
        return nullptr;
    }
    return std::unique_ptr<DirectWrites>(new DirectWrites(fd, buffer));
}

DirectWrites::~DirectWrites() {
    if (m_buffer) ::munmap(m_buffer, kBufferBytes);
    if (m_fd >= 0) ::close(m_fd);
}

bool DirectWrites::append(const void* bytes, std::size_t size) {
    const auto* p = static_cast<const std::uint8_t*>(bytes);
    while (size > 0) {
        const std::size_t take = std::min(size, kBufferBytes - m_fill);
        std::memcpy(m_buffer + m_fill, p, take);
        m_fill += take;
        p += take;
        size -= take;
        if (m_fill == kBufferBytes && !writeBuffer(kBufferBytes)) return false;
    }
    return true;
}

bool DirectWrites::finish() {
    if (m_fill == 0) return true;
    const std::size_t padded = (m_fill + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
    std::memset(m_buffer + m_fill, 0, padded - m_fill);
    const std::size_t tail = m_fill;
    if (!writeBuffer(padded)) return false;
    m_flushed -= padded - tail;  // (the padding is not part of the file: the caller truncates it)
    return true;
}

bool DirectWrites::writeBuffer(std::size_t bytes) {
    std::size_t done = 0;
    while (done < bytes) {
        const ssize_t n = ::pwrite(m_fd, m_buffer + done, bytes - done, static_cast<off_t>(m_flushed + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0 || n % static_cast<ssize_t>(kBlockBytes) != 0) {  // (a short direct write: the disk is full)
            errno = ENOSPC;
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    m_flushed += bytes;
    m_fill = 0;
    return true;
}

}  // namespace attnscope::engine
