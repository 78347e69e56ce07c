#pragma once
// The memory budget every entry point checks its allocations against before making them
// (Engine requests, result listings, `attnscope-cli route`).

#include <cstdint>
#include <string>

namespace attnscope::engine {

/// The share of physical memory a request may take when no budget is given.
constexpr double kDefaultBudgetFraction = 0.4;

/// Physical memory in bytes (sysconf), 0 when unknown.
std::uint64_t physicalMemoryBytes();

/// `given` when positive, else kDefaultBudgetFraction of physical memory (of 8 GiB when unknown).
std::uint64_t memoryBudgetOr(std::uint64_t given);

/// "1.5 GiB", "300 MiB", "12 KiB", "512 bytes": a size for messages.
std::string formatBytes(std::uint64_t bytes);

}  // namespace attnscope::engine
