#include "base/runtime/huge_pages.h"

#include <cstdint>

#include <sys/mman.h>

namespace attnscope::engine {

void adviseHugePages(void* data, std::size_t bytes) {
    if (bytes < kHugePageWorthyBytes) return;
    constexpr std::uintptr_t kHuge = 2u << 20;
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHuge - 1);
    if (end <= begin) return;
    // (advice only: an error, such as a kernel without transparent huge pages, changes nothing)
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

std::vector<float> copyOnHugePages(const std::vector<float>& source) {
    std::vector<float> copy;
    copy.reserve(source.size());  // (allocates without touching)
    adviseHugePages(copy.data(), source.size() * sizeof(float));
    copy.assign(source.begin(), source.end());
    return copy;
}

}  // namespace attnscope::engine
