#include "base/runtime/buffer_pool.h"

#include "base/runtime/huge_pages.h"

namespace attnscope::engine {

std::shared_ptr<std::vector<float>> BufferPool::resultBuffer(const std::string& slot, std::size_t count) {
    const std::lock_guard<std::mutex> lock(m_mutex);
    auto& held = m_results[slot];
    if (!held || held.use_count() > 1) {
        // The previous result is still shown or saved somewhere: never write into it.
        held = std::make_shared<std::vector<float>>();
    }
    if (held->capacity() < count) {
        held->clear();
        held->shrink_to_fit();
        held->reserve(count);
        adviseHugePages(held->data(), count * sizeof(float));
    }
    // NOTE: resize value-initialises only the elements beyond the old size; callers overwrite
    // every element anyway, so a steady-state run touches no fresh memory.
    held->resize(count);
    return held;
}

float* BufferPool::scratch(const std::string& slot, std::size_t count) {
    const std::lock_guard<std::mutex> lock(m_mutex);
    FloatScratch& s = m_scratch[slot];
    if (s.count < count) {
        s.data.reset();  // (released first: the old and the new block are never held together)
        s.data.reset(new float[count]);
        s.count = count;
        adviseHugePages(s.data.get(), count * sizeof(float));
    }
    return s.data.get();
}

void BufferPool::adviseFreshVector(void* data, std::size_t bytes) { adviseHugePages(data, bytes); }

PlainTensor BufferPool::zeros(DType dtype, std::vector<std::int64_t> shape) {
    PlainTensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    const auto n = static_cast<std::size_t>(t.numel());
    switch (dtype) {
    case DType::F32: (t.f32 = take<float>(n)).assign(n, 0.0f); break;
    case DType::I64: (t.i64 = take<std::int64_t>(n)).assign(n, 0); break;
    case DType::I32: (t.i32 = take<std::int32_t>(n)).assign(n, 0); break;
    case DType::U8: (t.u8 = take<std::uint8_t>(n)).assign(n, 0); break;
    }
    return t;
}

std::uint64_t BufferPool::heldBytes() const {
    const std::lock_guard<std::mutex> lock(m_mutex);
    std::uint64_t bytes = 0;
    for (const auto& [slot, s] : m_scratch) bytes += s.count * sizeof(float);
    for (const auto& [slot, s] : m_opaque)
        if (s) bytes += s->bytes();
    for (const auto& [slot, v] : m_results)
        if (v) bytes += v->capacity() * sizeof(float);
    for (const auto& v : m_recycledF32) bytes += v.capacity() * sizeof(float);
    for (const auto& v : m_recycledI64) bytes += v.capacity() * sizeof(std::int64_t);
    for (const auto& v : m_recycledI32) bytes += v.capacity() * sizeof(std::int32_t);
    for (const auto& v : m_recycledU8) bytes += v.capacity();
    return bytes;
}

}  // namespace attnscope::engine
