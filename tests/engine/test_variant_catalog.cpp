// The catalog is what every consumer reads, so it must say the truth about every registered
// variant: each run writes exactly the diagnostics its entry declares (names and dtypes), its
// weights carry only the reasons it declares, and the facts agree with the schema.
#include "sparse_test_support.h"

#include <attnscope/variant_catalog.h>

#include <set>

using namespace sparse_test;

namespace {

constexpr std::int64_t kHeads = 2, kTokens = 128, kDim = 8;

// The parameters of each entry's own first coverage setting, else the defaults: every variant
// runs with them on 128 tokens (BigBird's block 16 tiles 128 in 8 blocks, enough for 2 random).
ParamValues smallRunParams(const VariantInfo& info) { return info.atlasCoverage.empty() ? ParamValues{} : info.atlasCoverage.front(); }

}  // namespace

TEST(VariantCatalog, EveryRunWritesExactlyTheDiagnosticsItsEntryDeclares) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(kHeads, kTokens, kDim, 90);
    for (const VariantInfo& info : variantCatalog()) {
        SCOPED_TRACE(info.id);
        const auto run = runOk(*engine, variantRequest(x, info.id, smallRunParams(info)));
        ASSERT_TRUE(run);
        const AttentionResult& r = run->results.at(0);
        for (const auto& [name, tensor] : r.diagnostics) {
            const DiagnosticSpec* spec = info.findDiagnostic(name);
            ASSERT_NE(spec, nullptr) << "undeclared diagnostic '" << name << "'";
            EXPECT_EQ(tensor.dtype, spec->dtype) << name;
        }
        // Within the dense limit (128 <= 4096) everything but what a parameter asks for is there.
        for (const DiagnosticSpec& spec : info.diagnostics)
            if (spec.when != DiagnosticWhen::OnRequest) {
                EXPECT_EQ(r.diagnostics.count(spec.name), 1u) << spec.name;
            }
        // Above the dense limit the dense-limit ones are gone.
        RunRequest small = variantRequest(x, info.id, smallRunParams(info));
        small.denseLimit = kTokens - 1;
        const auto above = runOk(*engine, small);
        ASSERT_TRUE(above);
        for (const DiagnosticSpec& spec : info.diagnostics)
            if (spec.when == DiagnosticWhen::WithinDenseLimit) {
                EXPECT_EQ(above->results[0].diagnostics.count(spec.name), 0u) << spec.name;
            }

        // The weights carry only the declared reasons, and at least one of them.
        ReasonBits declared = 0, seen = 0;
        for (PatternReason reason : info.reasons) declared |= static_cast<ReasonBits>(1u << static_cast<unsigned>(reason));
        for (int h = 0; h < kHeads; ++h) {
            const WeightTile tile = r.weights->tile(h, 0, r.n, 0, r.m, /*withReasons=*/true);
            for (ReasonBits bits : tile.reasons) seen |= bits;
        }
        EXPECT_NE(seen, 0);
        EXPECT_EQ(seen & ~declared, 0) << "reasons 0x" << std::hex << (seen & ~declared) << " not declared";
    }
}

TEST(VariantCatalog, OptionalDiagnosticsAppearWhenAskedFor) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(kHeads, 46, kDim, 91);  // 46: not a multiple of BigBird's block 4
    const auto padded = runOk(*engine, variantRequest(x, "bigbird", {{"pad", true}}));
    ASSERT_TRUE(padded);
    EXPECT_EQ(padded->results[0].diagnostics.count("padded_length"), 1u);
    const auto spectrum = runOk(*engine, variantRequest(x, "linformer", {{"spectrum", true}}));
    ASSERT_TRUE(spectrum);
    for (const char* name : {"singular_values", "energy", "rank90"}) EXPECT_EQ(spectrum->results[0].diagnostics.count(name), 1u) << name;
    const auto quiet = runOk(*engine, variantRequest(x, "linformer", {{"spectrum", false}}));
    ASSERT_TRUE(quiet);
    EXPECT_EQ(quiet->results[0].diagnostics.count("singular_values"), 0u);
}

TEST(VariantCatalog, FactsAgreeWithTheSchemaAndTheRegistry) {
    const auto& catalog = variantCatalog();
    std::set<std::string> ids;
    int exact = 0;
    for (const VariantInfo& info : catalog) {
        SCOPED_TRACE(info.id);
        EXPECT_TRUE(ids.insert(info.id).second) << "duplicate id";
        EXPECT_EQ(findVariantInfo(info.id), &info);
        exact += info.exact ? 1 : 0;
        EXPECT_FALSE(info.exact && info.approximatesSoftmax);
        if (info.approximatesSoftmax) {
            EXPECT_EQ(info.diagnosticsPage, DiagnosticsPage::Approximation);
        }
        if (!info.errorSweepParam.empty()) {
            const ParamSpec* swept = info.findParam(info.errorSweepParam);
            ASSERT_NE(swept, nullptr) << info.errorSweepParam;
            EXPECT_EQ(swept->type, ParamType::Int);
            EXPECT_TRUE(info.approximatesSoftmax);
        }
        for (const ParamValues& setting : info.atlasCoverage) EXPECT_TRUE(resolveParams(info, setting).ok());
        EXPECT_FALSE(info.reasons.empty());
        std::set<std::string> names;
        for (const DiagnosticSpec& d : info.diagnostics) EXPECT_TRUE(names.insert(d.name).second) << d.name;
    }
    EXPECT_EQ(exact, 1);
    EXPECT_TRUE(exactReference().exact);
    EXPECT_EQ(findVariantInfo("no-such-variant"), nullptr);

    // The engine runs exactly the catalog, in its order.
    auto engine = makeEngine();
    const auto registered = engine->variants();
    ASSERT_EQ(registered.size(), catalog.size());
    for (std::size_t i = 0; i < catalog.size(); ++i) EXPECT_EQ(registered[i].id, catalog[i].id);
}

TEST(VariantCatalog, TheRunSaysWhichResultIsTheExactReference) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(kHeads, 16, kDim, 92);
    RunRequest request = variantRequest(x, "performer", {});
    EXPECT_EQ(runOk(*engine, request)->exactReference, -1);
    request.variants.push_back(VariantRequest{exactReference().id, {}});
    request.variants.push_back(VariantRequest{exactReference().id, {{"causal", true}}});
    const auto run = runOk(*engine, request);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->exactReference, 1);  // the first exact one
}
