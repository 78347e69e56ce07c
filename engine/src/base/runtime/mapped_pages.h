#pragma once
// Lets go of the pages of a mapped file's values once a pass has finished with them. A run on a
// million tokens reads 6 GiB of q, k and v from a mapped file: the pages it has read stay in the
// process's memory (its resident set) until unmapped, so a head at a time is let go when the
// variant is done with it, and a result's q and k as they are written out. The file's pages stay
// in the page cache; reading them again maps them back without touching the disk.

#include <attnscope/attention_weights.h>

#include <cstdint>

namespace attnscope::engine {

/// Lets go of the whole pages inside t's values [first, first + count) when t is a mapped file
/// (SharedFloats::mappedFile); nothing for other storage, which would lose its values.
void dropMappedPages(const SharedFloats& t, std::int64_t first, std::int64_t count);

/// Maps the pages of t's values [first, first + count) in one call when t is a mapped file, before
/// a pass reads them all (MADV_POPULATE_READ): a fault per 16 pages costs more than the reading on
/// a paravirtualised machine. Nothing for other storage, or where the kernel lacks it (before 5.14).
void prefaultMappedPages(const SharedFloats& t, std::int64_t first, std::int64_t count);

/// dropMappedPages for head h of t [heads, rows, d].
void dropMappedHead(const SharedFloats& t, std::int64_t h);

/// Values per chunk for passes over a whole mapped tensor (a scan, a copy into a file): 16 MiB,
/// large enough that the dropping costs nothing next to the reading.
constexpr std::int64_t kMappedChunkFloats = std::int64_t{1} << 22;

}  // namespace attnscope::engine
