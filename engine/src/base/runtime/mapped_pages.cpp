#include "base/runtime/mapped_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace attnscope::engine {
namespace {

// Maps the pages of t's values [first, first + count) in one call when t is a mapped file; where
// the kernel lacks it (before 5.14) the reads fault them in.
void prefaultMappedPages(const SharedFloats& t, std::int64_t first, std::int64_t count) {
#ifdef MADV_POPULATE_READ
    if (!t.mappedFile || !t.data || count <= 0) return;
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(t.data.get() + first) / page * page;
    const auto end = reinterpret_cast<std::uintptr_t>(t.data.get() + first + count);
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);  // (advice: the reads fault otherwise)
#else
    (void)t, (void)first, (void)count;
#endif
}

}  // namespace

void dropMappedPages(const SharedFloats& t, std::int64_t first, std::int64_t count) {
    if (!t.mappedFile || !t.data || count <= 0) return;
    // whole pages only: the partial pages at either end may hold values still to be read
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(t.data.get() + first);
    const auto end = reinterpret_cast<std::uintptr_t>(t.data.get() + first + count);
    const std::uintptr_t firstPage = (begin + page - 1) / page * page, lastPage = end / page * page;
    if (lastPage > firstPage) ::madvise(reinterpret_cast<void*>(firstPage), lastPage - firstPage, MADV_DONTNEED);
}

void dropMappedHead(const SharedFloats& t, std::int64_t h) {
    if (!t.mappedFile || t.shape.size() != 3) return;
    const std::int64_t perHead = t.shape[1] * t.shape[2];
    dropMappedPages(t, h * perHead, perHead);
}

std::int64_t mappedChunks(const SharedFloats& t) { return (t.numel() + kMappedChunkFloats - 1) / kMappedChunkFloats; }

bool passOverMappedChunk(const SharedFloats& t, std::int64_t c, const ChunkPass& pass) {
    const std::int64_t first = c * kMappedChunkFloats, count = std::min(kMappedChunkFloats, t.numel() - first);
    prefaultMappedPages(t, first, count);
    const bool goOn = pass(first, count);
    dropMappedPages(t, first, count);
    return goOn;
}

bool passOverMappedChunks(const SharedFloats& t, const ChunkPass& pass) {
    for (std::int64_t c = 0, chunks = mappedChunks(t); c < chunks; ++c)
        if (!passOverMappedChunk(t, c, pass)) return false;
    return true;
}

}  // namespace attnscope::engine
