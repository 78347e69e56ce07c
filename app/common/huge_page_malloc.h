#pragma once
// Huge pages for a torch-free run's ordinary allocations. The buffer pool advises its large
// buffers itself (engine base/runtime/huge_pages.h), but a run also makes many vectors of 0.1–4 MiB (a
// head's scratch, cluster lists, row statistics, diagnostics) that malloc maps one by one on 4 KiB
// pages, each page's first touch a fault (7–15 µs here). With glibc's tunables below, malloc keeps
// allocations up to 32 MiB in its heaps, grows them 64 MiB at a time and backs them with
// transparent huge pages: a Routing run at 16k tokens went from 8,500 page faults to 2,000 and
// ran 11 % faster (paired, docs/PERFORMANCE.md). glibc reads its tunables only when a process
// starts, so the launcher re-executes itself once with them set. A GLIBC_TUNABLES the user set is
// always respected. LibTorch's programs do not get them: its short-lived temporaries grew slower
// on huge pages (each new one zeroes whole 2 MiB pages).

#include <cstdlib>
#include <unistd.h>

namespace attnscope::app {

inline constexpr const char* kHugePageMallocTunables =
    "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:glibc.malloc.top_pad=67108864";

inline void ensureHugePageMalloc(char** argv) {
    if (std::getenv("GLIBC_TUNABLES") != nullptr) return;
    ::setenv("GLIBC_TUNABLES", kHugePageMallocTunables, 1);
    ::execv("/proc/self/exe", argv);
    // execv only returns on failure: run with malloc's defaults rather than fail.
    ::unsetenv("GLIBC_TUNABLES");
}

}  // namespace attnscope::app
