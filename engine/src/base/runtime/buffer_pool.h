#pragma once
// BufferPool: float buffers and workspaces that live as long as the engine, so repeated runs
// reuse memory that is already mapped. On this class of machine touching fresh memory (page
// faults) costs more than the attention arithmetic on it.
// Thread-safe bookkeeping: a variant's workers ask for their own scratch slots at the same time
// (Reformer's per-worker heads), so every lookup or change of the pool's tables holds m_mutex.
// The memory handed out is the caller's to use without the lock: map nodes never move.

#include <attnscope/tensor.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace attnscope::engine {

class BufferPool {
public:
    /// A float vector of `count` elements for a result. Reuses the pooled vector of that slot
    /// when no result still holds it (use_count == 1), otherwise allocates a new one. Contents
    /// are unspecified: the caller writes every element it exposes.
    std::shared_ptr<std::vector<float>> resultBuffer(const std::string& slot, std::size_t count);

    /// Scratch of `count` floats that stays valid until the next call with the same slot.
    /// Grows only when needed (uninitialised: nothing is touched here); never shrinks.
    float* scratch(const std::string& slot, std::size_t count);

    /// Scratch another layer keeps per slot (LibTorch's tensors: torch/tensors/tensor_views.h),
    /// opaque here; the pool holds it as long as it lives and counts its bytes.
    struct OpaqueScratch {
        virtual ~OpaqueScratch() = default;
        virtual std::uint64_t bytes() const = 0;
    };
    std::unique_ptr<OpaqueScratch>& opaqueScratch(const std::string& slot) {
        const std::lock_guard<std::mutex> lock(m_mutex);
        return m_opaque[slot];
    }

    /// Bytes currently held by the pool (workspaces + result buffers it still owns).
    std::uint64_t heldBytes() const;

    /// Recycled vector storage for results made of plain std::vectors (the listed pattern,
    /// diagnostics, row status). `give` keeps a released vector's capacity (its pages are already
    /// mapped); `take` returns a vector with capacity >= minCapacity, empty unless keepSize: the
    /// smallest pooled one that has that capacity, else the largest pooled one (reserve grows
    /// it), else a new one. Requests under kMinRecycledBytes get a new vector: handing them a
    /// pooled one left a later, larger request of the same call to allocate fresh memory.
    /// Only vectors no result can still see may be given (engine.cpp: use_count() == 1).
    /// keepSize: the vector keeps the size (and stale contents) it had when given, so that a
    /// caller that overwrites every element can resize() it to the same size without the
    /// value-initialising pass (a whole extra write of the memory) that clear() + resize() costs.
    template <class T>
    std::vector<T> take(std::size_t minCapacity, bool keepSize = false) {
        if (minCapacity * sizeof(T) < kMinRecycledBytes) {  // small: the heap's, as in give
            std::vector<T> out;
            out.reserve(minCapacity);
            return out;
        }
        std::vector<T> out;
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            out = takePooled<T>(minCapacity);
        }
        if (!keepSize) out.clear();
        if (out.capacity() < minCapacity) {
            out.reserve(minCapacity);
            adviseFreshVector(out.data(), minCapacity * sizeof(T));
        }
        return out;
    }
    /// A zero-filled tensor for a result (diagnostics, row status) on recycled storage (take):
    /// a steady-state run writes its zeros into pages an earlier result already mapped.
    PlainTensor zeros(DType dtype, std::vector<std::int64_t> shape);

    template <class T>
    void give(std::vector<T>&& v) {
        if (v.capacity() * sizeof(T) < kMinRecycledBytes) return;  // small: the heap handles it
        const std::lock_guard<std::mutex> lock(m_mutex);
        auto& list = recycled<T>();
        list.push_back(std::move(v));  // size kept for take(..., keepSize = true)
        if (list.size() > kMaxRecycledPerType) {  // drop the smallest
            auto smallest = std::min_element(list.begin(), list.end(),
                                             [](const auto& a, const auto& b) { return a.capacity() < b.capacity(); });
            list.erase(smallest);
        }
    }

private:
    /// take's choice (the caller holds m_mutex): the pooled vector that fits best, removed from
    /// the list, or an empty one.
    template <class T>
    std::vector<T> takePooled(std::size_t minCapacity) {
        auto& list = recycled<T>();
        const std::size_t none = list.size();
        std::size_t fit = none, largest = none;
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::size_t cap = list[i].capacity();
            if (cap >= minCapacity) {
                if (fit == none || cap < list[fit].capacity()) fit = i;
            } else if (largest == none || cap > list[largest].capacity()) {
                largest = i;
            }
        }
        const std::size_t best = fit != none ? fit : largest;
        std::vector<T> out;
        if (best < list.size()) {
            out = std::move(list[best]);
            list.erase(list.begin() + static_cast<std::ptrdiff_t>(best));
        }
        return out;
    }

    /// Huge pages for a vector's fresh storage (base/runtime/huge_pages.h), before it is first written.
    static void adviseFreshVector(void* data, std::size_t bytes);

    static constexpr std::size_t kMinRecycledBytes = 64 * 1024;
    static constexpr std::size_t kMaxRecycledPerType = 16;

    template <class T>
    std::vector<std::vector<T>>& recycled();

    std::map<std::string, std::shared_ptr<std::vector<float>>> m_results;
    struct FloatScratch {
        std::unique_ptr<float[]> data;
        std::size_t count = 0;
    };
    std::map<std::string, FloatScratch> m_scratch;
    std::map<std::string, std::unique_ptr<OpaqueScratch>> m_opaque;
    std::vector<std::vector<float>> m_recycledF32;
    std::vector<std::vector<std::int64_t>> m_recycledI64;
    std::vector<std::vector<std::int32_t>> m_recycledI32;
    std::vector<std::vector<std::uint8_t>> m_recycledU8;
    mutable std::mutex m_mutex;
};

template <>
inline std::vector<std::vector<float>>& BufferPool::recycled<float>() { return m_recycledF32; }
template <>
inline std::vector<std::vector<std::int64_t>>& BufferPool::recycled<std::int64_t>() { return m_recycledI64; }
template <>
inline std::vector<std::vector<std::int32_t>>& BufferPool::recycled<std::int32_t>() { return m_recycledI32; }
template <>
inline std::vector<std::vector<std::uint8_t>>& BufferPool::recycled<std::uint8_t>() { return m_recycledU8; }

}  // namespace attnscope::engine
