#pragma once
// A real run for the views tests that need what only the engine keeps (Q, K and on-demand weights):
// random normal q, k, v through the launcher's torch-free run.

#include <attnscope/torch_free_run.h>
#include <attnscope/types.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace attnscope::testing {

/// `variant` with `params` on seeded random q, k, v [heads, n, d]; null when the run fails.
inline std::shared_ptr<const engine::RunResult> randomExplicitRun(std::int64_t heads, std::int64_t n, std::int64_t d,
                                                                  const std::string& variant, engine::ParamValues params,
                                                                  std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> draw;
    std::vector<float> x(static_cast<std::size_t>(heads * n * d));
    const auto make = [&] {
        for (float& v : x) v = draw(rng);
        return engine::PlainTensor::fromF32({heads, n, d}, x);
    };
    engine::RunRequest request;
    request.source = engine::QkvTensors{make(), make(), make()};
    request.variants.push_back(engine::VariantRequest{variant, std::move(params)});
    auto run = engine::runTorchFree(request, engine::TorchFreeRunOptions{});
    return run.ok() ? run.value() : nullptr;
}

}  // namespace attnscope::testing
