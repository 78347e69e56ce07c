// The atlas's coverage settings: the catalog's defaults fitted to short inputs, and their text form.

#include <attnscope/coverage_settings.h>
#include <attnscope/variant_catalog.h>

#include <gtest/gtest.h>

#include <string>

using namespace attnscope::engine;

namespace {

/// The fitted setting of `variant` at position `nth` among that variant's settings.
const CoverageSetting& settingOf(const std::vector<CoverageSetting>& settings, const std::string& variant, int nth = 0) {
    for (const auto& s : settings)
        if (s.variantId == variant && nth-- == 0) return s;
    throw std::runtime_error("no setting " + variant);
}

std::int64_t intOf(const CoverageSetting& s, const std::string& name) { return std::get<std::int64_t>(s.params.at(name)); }

}  // namespace

TEST(CoverageSettings, AtTheReferenceLengthAndAboveTheyAreTheCatalogs) {
    const auto defaults = defaultCoverageSettings();
    for (std::int64_t n : {kCoverageReferenceLength, std::int64_t{4096}}) {
        const auto fitted = coverageSettingsFor(n);
        ASSERT_EQ(fitted.size(), defaults.size());
        for (std::size_t i = 0; i < fitted.size(); ++i) {
            EXPECT_EQ(fitted[i].variantId, defaults[i].variantId);
            EXPECT_EQ(fitted[i].params, defaults[i].params);
        }
    }
    // Written for 128 tokens: Longformer's windows are 16 and 64 there.
    EXPECT_EQ(intOf(settingOf(defaults, "longformer", 0), "window"), 16);
    EXPECT_EQ(intOf(settingOf(defaults, "longformer", 1), "window"), 64);
}

TEST(CoverageSettings, TokenCountsShrinkInProportionOnShortInputs) {
    // n = 19 (the sample model's length): round(v · 19 / 128).
    const auto fitted = coverageSettingsFor(19);
    EXPECT_EQ(intOf(settingOf(fitted, "longformer", 0), "window"), 2);   // 16 · 19/128 = 2.38
    EXPECT_EQ(intOf(settingOf(fitted, "longformer", 1), "window"), 10);  // 64 · 19/128 = 9.5
    EXPECT_EQ(intOf(settingOf(fitted, "sparse_strided"), "stride"), 2);
    EXPECT_EQ(intOf(settingOf(fitted, "sparse_fixed"), "block"), 2);
    EXPECT_EQ(intOf(settingOf(fitted, "sparse_fixed"), "summary"), 1);  // 0.59, at least 1
    EXPECT_EQ(intOf(settingOf(fitted, "bigbird"), "block"), 2);
    EXPECT_EQ(intOf(settingOf(fitted, "bigbird"), "random"), 2);  // a number of blocks, not of tokens
    EXPECT_TRUE(std::get<bool>(settingOf(fitted, "bigbird").params.at("pad")));
    EXPECT_EQ(intOf(settingOf(fitted, "topk"), "k"), 2);
    EXPECT_EQ(intOf(settingOf(fitted, "linformer"), "k"), 10);
    EXPECT_EQ(intOf(settingOf(fitted, "performer"), "nb_features"), 64);  // features are not tokens
}

TEST(CoverageSettings, SettingsThatBecomeEqualAreKeptOnce) {
    // n = 1: both Longformer windows become 1.
    const auto fitted = coverageSettingsFor(1);
    int longformers = 0;
    for (const auto& s : fitted) longformers += s.variantId == "longformer";
    EXPECT_EQ(longformers, 1);
    EXPECT_EQ(fitted.size() + 1, defaultCoverageSettings().size());
}

TEST(CoverageSettings, TextFormReadsBackAndErrorsNameThePartAtFault) {
    auto parsed = parseCoverageSetting("  longformer : window = 8 , causal=true ");
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(parsed->variantId, "longformer");
    EXPECT_EQ(intOf(*parsed, "window"), 8);
    EXPECT_EQ(coverageSettingText(*parsed), "longformer:causal=true,window=8");
    auto again = parseCoverageSetting(coverageSettingText(*parsed));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->params, parsed->params);
    EXPECT_EQ(coverageSettingText(*parseCoverageSetting("star")), "star");

    auto unknown = parseCoverageSetting("nonesuch:window=3");
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().message.find("unknown variant 'nonesuch'"), std::string::npos);
    auto badName = parseCoverageSetting("longformer:size=3");
    ASSERT_FALSE(badName.ok());
    EXPECT_NE(badName.error().message.find("'size=3' is not NAME=VALUE of a parameter of longformer"), std::string::npos);
    auto badValue = parseCoverageSetting("longformer:window=many");
    ASSERT_FALSE(badValue.ok());
    EXPECT_NE(badValue.error().message.find("window"), std::string::npos) << badValue.error().message;
    EXPECT_FALSE(parseCoverageSetting(":window=3").ok());
}
