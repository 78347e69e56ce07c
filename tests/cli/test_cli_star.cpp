// attnscope-cli star end to end: the tensors and their shapes, rows of the weights summing to 1,
// the same file for the same seed, and bad input refused without a file.

#include "cli_test_support.h"

#include <attnscope/safetensors.h>

#include <cmath>
#include <filesystem>

using namespace attnscope::engine;

TEST(CliStar, WritesTheCyclesOfTheRandomModel) {
    const std::string out = tempPath("star.safetensors");
    std::remove(out.c_str());
    auto r = runCli("star --text 'the cat sat on the mat' --heads 2 --head-dim 8 --seed 4 --param cycles=3 --param cyclic=true --out " + out);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    EXPECT_NE(r.stderrText.find("6 satellites, 3 cycles, 2 heads (closed ring)"), std::string::npos) << r.stderrText;
    auto file = SafetensorsFile::open(out);
    ASSERT_TRUE(file.ok()) << file.error().message;
    const std::map<std::string, std::vector<std::int64_t>> shapes = {{"star.ring_weights", {3, 2, 6, 5}},
                                                                      {"star.relay_weights", {3, 2, 7}},
                                                                      {"star.nodes", {4, 6, 16}},
                                                                      {"star.relay", {4, 16}},
                                                                      {"star.node_change", {3, 6}}};
    for (const auto& [name, shape] : shapes) {
        auto t = file.value()->read(name);
        ASSERT_TRUE(t.ok()) << name;
        EXPECT_EQ(t->shape, shape) << name;
    }
    auto ring = file.value()->read("star.ring_weights");
    for (std::size_t row = 0; row < ring->f32.size() / 5; ++row) {
        double sum = 0;
        for (std::size_t u = 0; u < 5; ++u) sum += ring->f32[row * 5 + u];
        EXPECT_NEAR(sum, 1.0, 1e-5);
    }
    auto relay = file.value()->read("star.relay_weights");
    for (std::size_t row = 0; row < relay->f32.size() / 7; ++row) {
        double sum = 0;
        for (std::size_t j = 0; j < 7; ++j) sum += relay->f32[row * 7 + j];
        EXPECT_NEAR(sum, 1.0, 1e-5);
    }
    const std::string again = tempPath("star-again.safetensors");
    ASSERT_EQ(runCli("star --text 'the cat sat on the mat' --heads 2 --head-dim 8 --seed 4 --param cycles=3 --param cyclic=true --out " + again).status, 0);
    EXPECT_EQ(slurp(again), slurp(out));  // the seed fixes every draw
}

TEST(CliStar, RefusesBadInputWithoutAFile) {
    const std::string out = tempPath("star-bad.safetensors");
    std::remove(out.c_str());
    struct Case {
        std::string args, says;
        int status;
    };
    const std::vector<Case> cases = {
        {"--text abc --param cycles=0", "cycles=0: expected a whole number from 1 to 64", 2},
        {"--text abc --param ring=3", "takes cycles=T and cyclic=true|false", 2},
        {"--text abc --param cyclic=maybe", "expected true or false", 2},
        {"--text ''", "the text is empty", 2},
        {"--text abc --model /nonexistent-star-folder", "config.json", 1},
    };
    for (const auto& c : cases) {
        auto r = runCli("star " + c.args + " --out " + out);
        EXPECT_EQ(r.status, c.status) << c.args << ": " << r.stderrText;
        EXPECT_NE(r.stderrText.find(c.says), std::string::npos) << c.args << ": " << r.stderrText;
        EXPECT_FALSE(std::filesystem::exists(out)) << c.args;
    }
}
