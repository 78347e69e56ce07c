// Parameter schema: text parsing, type and range checks, defaults.

#include <attnscope/variant_info.h>

#include <gtest/gtest.h>

using namespace attnscope::engine;

namespace {

VariantInfo sampleInfo() {
    VariantInfo info;
    info.id = "demo";
    ParamSpec window{"window", ParamType::Int, std::int64_t{4}, 1, 512, {}, "one-sided window"};
    ParamSpec alpha{"alpha", ParamType::FloatList, std::vector<double>{1.5}, 1.0, 4.0, {}, "entmax alpha"};
    ParamSpec causal{"causal", ParamType::Bool, false, 0, 1, {}, "causal"};
    ParamSpec local{"local", ParamType::Choice, std::string("paper"), 0, 0, {"paper", "openai"}, "band"};
    ParamSpec global{"global", ParamType::IntList, std::vector<std::int64_t>{}, 0, 1e9, {}, "global tokens"};
    ParamSpec temp{"temperature", ParamType::Float, 1.0, 0.01, 100.0, {}, "scale"};
    info.params = {window, alpha, causal, local, global, temp};
    return info;
}

}  // namespace

TEST(VariantInfo, ParsesEachTypeFromText) {
    const auto info = sampleInfo();
    EXPECT_EQ(std::get<std::int64_t>(parseParamValue(*info.findParam("window"), "64").value()), 64);
    EXPECT_EQ(std::get<bool>(parseParamValue(*info.findParam("causal"), "true").value()), true);
    EXPECT_EQ(std::get<bool>(parseParamValue(*info.findParam("causal"), "0").value()), false);
    EXPECT_EQ(std::get<std::string>(parseParamValue(*info.findParam("local"), "openai").value()), "openai");
    EXPECT_EQ(std::get<std::vector<double>>(parseParamValue(*info.findParam("alpha"), "1,1.5, 2").value()),
              (std::vector<double>{1.0, 1.5, 2.0}));
    EXPECT_EQ(std::get<std::vector<std::int64_t>>(parseParamValue(*info.findParam("global"), "0,5,9").value()),
              (std::vector<std::int64_t>{0, 5, 9}));
    EXPECT_TRUE(std::get<std::vector<std::int64_t>>(parseParamValue(*info.findParam("global"), "").value()).empty());
    EXPECT_DOUBLE_EQ(std::get<double>(parseParamValue(*info.findParam("temperature"), "0.5").value()), 0.5);
}

TEST(VariantInfo, RejectsWithTheAllowedRange) {
    const auto info = sampleInfo();
    struct Case {
        const char* param;
        const char* text;
        const char* needle;
    };
    const Case cases[] = {
        {"window", "0", "integers in [1, 512]"},  {"window", "513", "integers in [1, 512]"},
        {"window", "4.5", "integers in [1, 512]"}, {"window", "", "integers"},
        {"window", "99999999999999999999", "integers"}, {"causal", "maybe", "true or false"},
        {"local", "both", "one of: paper, openai"}, {"alpha", "0.5", "numbers in [1, 4]"},
        {"alpha", "1,nan", "numbers in [1, 4]"},   {"global", "1,x", "integers"},
        {"temperature", "inf", "numbers in [0.01, 100]"},
    };
    for (const auto& c : cases) {
        auto r = parseParamValue(*info.findParam(c.param), c.text);
        ASSERT_FALSE(r.ok()) << c.param << "=" << c.text;
        EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument);
        EXPECT_NE(r.error().message.find(std::string("parameter '") + c.param + "'"), std::string::npos);
        EXPECT_NE(r.error().message.find(c.needle), std::string::npos) << r.error().message;
    }
}

TEST(VariantInfo, ResolveFillsDefaultsAndRejectsUnknownNames) {
    const auto info = sampleInfo();
    auto resolved = resolveParams(info, {{"window", std::int64_t{8}}, {"alpha", 2.0}});
    ASSERT_TRUE(resolved.ok()) << resolved.error().message;
    EXPECT_EQ(std::get<std::int64_t>(resolved->at("window")), 8);
    // A single number for a list parameter becomes a one-element list.
    EXPECT_EQ(std::get<std::vector<double>>(resolved->at("alpha")), (std::vector<double>{2.0}));
    EXPECT_EQ(std::get<std::string>(resolved->at("local")), "paper");
    EXPECT_EQ(resolved->size(), info.params.size());

    auto unknown = resolveParams(info, {{"windw", std::int64_t{8}}});
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().message.find("no parameter 'windw'"), std::string::npos);
    EXPECT_NE(unknown.error().message.find("window"), std::string::npos);

    auto wrongType = resolveParams(info, {{"causal", std::int64_t{1}}});
    ASSERT_FALSE(wrongType.ok());
    auto outOfRange = resolveParams(info, {{"window", std::int64_t{1000}}});
    ASSERT_FALSE(outOfRange.ok());
}

TEST(VariantInfo, FormatsValuesForDisplay) {
    EXPECT_EQ(formatParamValue(ParamValue{true}), "true");
    EXPECT_EQ(formatParamValue(ParamValue{std::int64_t{-3}}), "-3");
    EXPECT_EQ(formatParamValue(ParamValue{std::vector<std::int64_t>{1, 2}}), "1,2");
    EXPECT_EQ(formatParamValue(ParamValue{std::vector<double>{1.5, 2}}), "1.5,2");
    EXPECT_EQ(formatParamValue(ParamValue{std::string("union")}), "union");
}
