#include <attnscope/memory_budget.h>

#include <unistd.h>

namespace attnscope::engine {

std::uint64_t physicalMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || pageSize <= 0) return 0;
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(pageSize);
}

std::uint64_t memoryBudgetOr(std::uint64_t given) {
    if (given > 0) return given;
    const std::uint64_t physical = physicalMemoryBytes();
    return static_cast<std::uint64_t>(static_cast<double>(physical ? physical : (8ull << 30)) * kDefaultBudgetFraction);
}

}  // namespace attnscope::engine
