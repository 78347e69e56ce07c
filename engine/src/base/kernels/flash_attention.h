#pragma once
// Exact softmax attention of one head in one pass over the keys, flash-style (Dao et al. 2022): a
// block of queries against a block of keys scored in cache, an online softmax (a running max and
// sum per row, earlier output rescaled when the max grows), the weighted values accumulated; the
// keys are packed once per head so the score kernel reads them along the vector lanes. No n × m
// matrix exists at any time. Each row's shift (scale · its max) and sum are kept, from which every
// weight is recomputed (DESIGN.md "The data contract"). Plain C++: the AVX-512, AVX2/FMA and
// portable bodies are one source (flash_attention_body.inc) compiled three ways, picked at run time
// (base/kernels/cpu_features.h, KernelPath).

#include <cstdint>
#include <vector>

namespace attnscope::engine {

/// One head's problem: q [n, d], k and v [m, d] row-major; out [n, d]; rowShift, rowSum and
/// status [n] are written (status 0 normal, 1 no admissible key: zero output, shift −inf, sum 0;
/// 2 padded query when `padQueries`, likewise zeroed).
struct FlashHead {
    const float *q = nullptr, *k = nullptr, *v = nullptr;
    float* out = nullptr;
    float *rowShift = nullptr, *rowSum = nullptr;
    std::uint8_t* status = nullptr;
    std::int64_t n = 0, m = 0, d = 0;
    float scale = 1.0f;
    /// Key j visible to query i iff j <= i + m − n (the queries aligned to the last n keys).
    bool causal = false;
    const std::uint8_t* keyPadding = nullptr;  ///< [m], 1 = padded key; null = none
    bool padQueries = false;                   ///< query i is padded when keyPadding[i] (n == m)
    /// Called after each block of queries with the rows done so far; false stops the head there
    /// (its later rows left as they were: the caller cancels the run). Null: never stopped. A
    /// plain function, not std::function: flash_attention_bodies.h says why.
    bool (*keepGoing)(void* context, std::int64_t rowsDone) = nullptr;
    void* context = nullptr;
};

/// A worker's reusable buffers (the packed keys and values, a block of scores and of output).
struct FlashScratch {
    std::vector<float> keys, values, scores, output, rowMax;
    std::vector<double> rowSum;
};

/// Which body runs: the fastest the CPU and KernelPath allow.
enum class FlashIsa { Portable, Avx2, Avx512 };
FlashIsa flashIsa();
const char* flashIsaName(FlashIsa isa);

/// Computes one head; returns its number of rows with no admissible key (status 1).
std::int64_t flashAttentionHead(const FlashHead& head, FlashScratch& scratch);
/// The same with a given body (tests compare every body the CPU has with the float64 reference).
std::int64_t flashAttentionHead(const FlashHead& head, FlashScratch& scratch, FlashIsa isa);

/// Bytes of scratch one worker needs for m keys of d dimensions.
std::uint64_t flashScratchBytes(std::int64_t m, std::int64_t d);

}  // namespace attnscope::engine
