#pragma once
// BufferPool: float buffers and workspaces that live as long as the engine, so repeated runs
// reuse memory that is already mapped. On this class of machine touching fresh memory (page
// faults) costs more than the attention arithmetic on it.

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attnscope::engine {

class BufferPool {
public:
    /// A float vector of `count` elements for a result. Reuses the pooled vector of that slot
    /// when no result still holds it (use_count == 1), otherwise allocates a new one. Contents
    /// are unspecified: the caller writes every element it exposes.
    std::shared_ptr<std::vector<float>> resultBuffer(const std::string& slot, std::size_t count);

    /// A scratch tensor [sizes] that stays valid until the next call with the same slot.
    /// Grows its storage only when needed; never shrinks.
    at::Tensor workspace(const std::string& slot, at::IntArrayRef sizes);

    /// Bytes currently held by the pool (workspaces + result buffers it still owns).
    std::uint64_t heldBytes() const;

private:
    std::map<std::string, std::shared_ptr<std::vector<float>>> m_results;
    std::map<std::string, at::Tensor> m_workspaces;
};

/// Wraps a vector's memory as a tensor without copying. The vector must outlive the tensor.
at::Tensor tensorOver(std::vector<float>& values, at::IntArrayRef sizes);

}  // namespace attnscope::engine
