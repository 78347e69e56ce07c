// Explicit Q, K, V with a NaN or an infinity: the pattern variants scan the values themselves, in
// the copies their kernels make, and linear and performer each head as they run it
// (Variant::checksQkvValues), instead of the engine reading them first. Every path must still refuse the request with the engine's own message.

#include "sparse_test_support.h"

#include <cmath>
#include <cstring>

namespace {

using namespace sparse_test;

struct Case {
    const char* label;
    std::string id;
    ParamValues params;
    bool padKey = false;  ///< pad one key: the strided rule runs as explicit groups
};

std::vector<Case> cases() {
    return {
        // band groups + the strided keys pass: K in the head's panels, Q and V in the pass's
        {"strided, panels", "sparse_strided", {{"stride", std::int64_t{16}}}},
        // the pass's transposed copies (stride not a multiple of 8)
        {"strided, transposed", "sparse_strided", {{"stride", std::int64_t{12}}, {"causal", false}}},
        // groups only, no pass: Q and V scanned on their own
        {"strided, interleave", "sparse_strided", {{"stride", std::int64_t{8}}, {"combine", std::string("interleave")}}},
        {"longformer", "longformer", {{"window", std::int64_t{5}}}},
        {"bigbird", "bigbird", {{"block", std::int64_t{8}}, {"random", std::int64_t{1}}}},
        {"fixed", "sparse_fixed", {{"block", std::int64_t{16}}, {"summary", std::int64_t{4}}}},
        // dilation with globals: window segments that skip the global keys
        {"longformer, dilated with globals",
         "longformer",
         {{"window", std::int64_t{3}}, {"dilation", std::int64_t{2}}, {"global", std::vector<std::int64_t>{0, 7}}}},
        // a padded key: the strided keys as explicit residue groups (no strided keys pass)
        {"strided, padded key", "sparse_strided", {{"stride", std::int64_t{16}}}, true},
        // feature attention scans each head as it runs it
        {"linear", "linear", {}},
        {"linear, causal", "linear", {{"causal", true}}},
        {"performer", "performer", {{"nb_features", std::int64_t{16}}}},
        {"linformer", "linformer", {{"k", std::int64_t{16}}}},
    };
}

// The engine's message for the first non-finite value (q, then k, then v).
std::string expectedMessage(const char* tensor, float value, std::int64_t index) {
    return std::string("tensor '") + tensor + "' has a non-finite value (" + std::to_string(value) + ") at flat index " +
           std::to_string(index);
}

void expectRefused(Engine& engine, const Case& c, std::int64_t d) {
    const std::int64_t heads = 3, n = 64;
    const float bads[] = {NAN, INFINITY, -INFINITY};
    const char* names[] = {"q", "k", "v"};
    for (int part = 0; part < 3; ++part)
        for (const std::int64_t index : {std::int64_t{0}, heads * n * d / 2 + 5, heads * n * d - 1}) {
            Qkv3 x = randomQkv(heads, n, d, 11);
            PlainTensor& t = part == 0 ? x.q : part == 1 ? x.k : x.v;
            const float bad = bads[(part + index) % 3];
            t.f32[static_cast<std::size_t>(index)] = bad;
            RunRequest request = variantRequest(x, c.id, c.params);
            if (c.padKey) {
                request.keyPadding.assign(static_cast<std::size_t>(n), 0);
                request.keyPadding[3] = 1;
            }
            auto result = engine.run(request);
            ASSERT_FALSE(result.ok()) << c.label << ", " << names[part] << "[" << index << "], d = " << d;
            EXPECT_EQ(result.error().code, ErrorCode::InvalidInput);
            EXPECT_EQ(result.error().message, expectedMessage(names[part], bad, index))
                << c.label << ", d = " << d;
        }
}

TEST(NonFiniteInputs, EveryPatternKernelPathRefusesThem) {
    auto engine = makeEngine();
    for (const Case& c : cases())
        for (std::int64_t d : {16, 12}) expectRefused(*engine, c, d);  // 12: keys without panels
}

TEST(NonFiniteInputs, RefusedWithTwoWorkerThreads) {
    EngineOptions options;
    options.threads = 2;
    auto engine = Engine::create(options);
    ASSERT_TRUE(engine.ok());
    for (const Case& c : cases()) expectRefused(**engine, c, 16);
}

// The first of several variants scans for all of them; a variant that does not scan itself, first,
// leaves the scan to the engine.
TEST(NonFiniteInputs, SeveralVariantsInEitherOrder) {
    auto engine = makeEngine();
    Qkv3 x = randomQkv(2, 48, 16, 5);
    x.v.f32[100] = NAN;
    for (const bool scannerFirst : {true, false}) {
        RunRequest request;
        request.source = QkvTensors{x.q, x.k, x.v};
        VariantRequest strided{"sparse_strided", {{"stride", std::int64_t{8}}}}, full{"full", {}};
        request.variants = scannerFirst ? std::vector<VariantRequest>{strided, full} : std::vector<VariantRequest>{full, strided};
        auto result = engine->run(request);
        ASSERT_FALSE(result.ok());
        EXPECT_EQ(result.error().message, expectedMessage("v", NAN, 100));
    }
    // and finite values still run, with the second variant's output as when it runs alone
    Qkv3 y = randomQkv(2, 48, 16, 6);
    RunRequest both;
    both.source = QkvTensors{y.q, y.k, y.v};
    both.variants = {VariantRequest{"longformer", {{"window", std::int64_t{4}}}}, VariantRequest{"full", {}}};
    auto twoResults = runOk(*engine, both);
    ASSERT_TRUE(twoResults);
    RunRequest alone = both;
    alone.variants = {VariantRequest{"full", {}}};
    auto oneResult = runOk(*engine, alone);
    ASSERT_TRUE(oneResult);
    const auto& a = twoResults->results[1].output;
    const auto& b = oneResult->results[0].output;
    ASSERT_EQ(a.numel(), b.numel());
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.numel()) * sizeof(float)));
}

}  // namespace
