// The MoE router on arbitrary logits and options (the values of a --input file and the flags).
#include <attnscope/moe_router.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope::engine;
    if (size < 8) return 0;
    RouterOptions o;
    o.policy = data[0] & 1 ? "topk" : "switch";
    o.k = data[1] % 9;
    o.normalize = data[2] & 1;
    o.capacityFactor = (data[3] % 40) / 8.0 - 0.5;
    o.expertCapacity = data[4] % 7;
    o.groupSize = data[5] % 5;
    o.priority = data[6] & 1 ? "gate" : "sequence";
    o.droppedAs = data[6] & 2 ? "expert0" : "paper";
    const std::int64_t experts = data[7] % 9;
    const std::size_t floats = (size - 8) / sizeof(float);
    if (experts == 0 || floats < static_cast<std::size_t>(experts)) return 0;
    const std::int64_t n = static_cast<std::int64_t>(floats) / experts;
    PlainTensor logits = PlainTensor::zeros(DType::F32, {n, experts});
    std::memcpy(logits.f32.data(), data + 8, static_cast<std::size_t>(n * experts) * sizeof(float));
    auto routed = routeTokens(logits, o);
    (void)routed;
    return 0;
}
