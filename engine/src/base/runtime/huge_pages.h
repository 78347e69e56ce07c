#pragma once
// Large buffers backed by transparent huge pages. On the machines we measure (a paravirtualised
// VM) the first touch of a fresh 4 KiB page costs 7–15 µs, a fault per page; with huge pages it is
// one fault per 2 MiB: touching a fresh 32 MiB output took 0.12 s before, 0.003 s after. For
// buffers written whole when made: the buffer pool's, the random projections' q, k, v and token
// states, an overview's cells. Not for LibTorch's own short-lived temporaries: they grew slower
// under huge pages (each new one zeroes whole 2 MiB pages, also where it writes only a few).

#include <cstddef>
#include <vector>

namespace attnscope::engine {

/// Buffers at least this large are worth advising.
constexpr std::size_t kHugePageWorthyBytes = 4u << 20;

/// Asks the kernel to back the whole 2 MiB pages inside [data, data + bytes) with huge pages when
/// they are first touched (madvise MADV_HUGEPAGE); nothing for smaller ranges or where the kernel
/// does not offer them. Call before the memory is first written.
void adviseHugePages(void* data, std::size_t bytes);

/// values.assign(count, value) with the storage advised before the assignment first touches it
/// (for a vector with no storage yet: a fresh allocation).
template <typename T>
void assignOnHugePages(std::vector<T>& values, std::size_t count, const T& value) {
    if (values.capacity() < count) {
        std::vector<T>().swap(values);
        values.reserve(count);  // (allocates without touching)
        adviseHugePages(values.data(), count * sizeof(T));
    }
    values.assign(count, value);
}

/// A copy of `source` whose memory is advised before the copy first touches it: a 16 MiB copy
/// took 80 ms of 4 KiB page faults without the advice.
std::vector<float> copyOnHugePages(const std::vector<float>& source);

}  // namespace attnscope::engine
