#include "base/runtime/mapped_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace attnscope::engine {

void dropMappedPages(const SharedFloats& t, std::int64_t first, std::int64_t count) {
    if (!t.mappedFile || !t.data || count <= 0) return;
    // whole pages only: the partial pages at either end may hold values still to be read
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(t.data.get() + first);
    const auto end = reinterpret_cast<std::uintptr_t>(t.data.get() + first + count);
    const std::uintptr_t firstPage = (begin + page - 1) / page * page, lastPage = end / page * page;
    if (lastPage > firstPage) ::madvise(reinterpret_cast<void*>(firstPage), lastPage - firstPage, MADV_DONTNEED);
}

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

void dropMappedHead(const SharedFloats& t, std::int64_t h) {
    if (!t.mappedFile || t.shape.size() != 3) return;
    const std::int64_t perHead = t.shape[1] * t.shape[2];
    dropMappedPages(t, h * perHead, perHead);
}

}  // namespace attnscope::engine
