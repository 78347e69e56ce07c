#pragma once
// Lets go of the pages of a mapped file's values once a pass has finished with them. A run on a
// million tokens reads 6 GiB of q, k and v from a mapped file: the pages it has read stay in the
// process's memory (its resident set) until unmapped, so a head at a time is let go when the
// variant is done with it, and a result's q and k as they are written out. The file's pages stay
// in the page cache; reading them again maps them back without touching the disk.

#include <attnscope/attention_weights.h>

#include <cstdint>
#include <functional>

namespace attnscope::engine {

/// Lets go of the whole pages inside t's values [first, first + count) when t is a mapped file
/// (SharedFloats::mappedFile); nothing for other storage, which would lose its values.
void dropMappedPages(const SharedFloats& t, std::int64_t first, std::int64_t count);

/// dropMappedPages for head h of t [heads, rows, d].
void dropMappedHead(const SharedFloats& t, std::int64_t h);

/// Values per chunk for passes over a whole mapped tensor (a scan, a copy into a file): 16 MiB,
/// large enough that the dropping costs nothing next to the reading.
constexpr std::int64_t kMappedChunkFloats = std::int64_t{1} << 22;

/// What a pass does with values [first, first + count) of a tensor; false stops the pass.
using ChunkPass = std::function<bool(std::int64_t first, std::int64_t count)>;

/// How many chunks of kMappedChunkFloats values t has.
std::int64_t mappedChunks(const SharedFloats& t);
/// pass on chunk c of t; when t is a mapped file, the chunk's pages are populated first (in one
/// call, MADV_POPULATE_READ: a fault per 16 pages costs more than the reading on a paravirtualised
/// machine) and let go after. pass's answer. Chunks may be passed over on several threads at once.
bool passOverMappedChunk(const SharedFloats& t, std::int64_t c, const ChunkPass& pass);
/// passOverMappedChunk on every chunk in order; false once a pass said stop.
bool passOverMappedChunks(const SharedFloats& t, const ChunkPass& pass);

}  // namespace attnscope::engine
