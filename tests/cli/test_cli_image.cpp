// attnscope-cli with a picture as the input: pixels and patches runs write their grid and each
// token's place, the image defaults are announced, and unreadable pictures are one-line errors.

#include "cli_test_support.h"

#include "../support/tiny_vit.h"

#include <attnscope/safetensors.h>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

using attnscope::engine::SafetensorsFile;

namespace {

const std::string kAirplane = std::string(ATTNSCOPE_SOURCE_DIR) + "/samples/airplane.jpg";  // 320 × 224

nlohmann::json metadataJson(const std::string& path, const std::string& key) {
    auto file = SafetensorsFile::open(path);
    EXPECT_TRUE(file.ok());
    if (!file.ok()) return {};
    return nlohmann::json::parse((*file)->header().metadata.at(key));
}

}  // namespace

TEST(CliImage, PixelsRunTakesTheImagesWidthAsStrideAndRecordsTheGrid) {
    const std::string out = tempPath("pixels.safetensors");
    auto r = runCli("run --image " + kAirplane + " --image-grid 6x10 --variant sparse_strided --heads 2 --head-dim 8 --out " + out);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    EXPECT_NE(r.stderrText.find("sparse_strided: stride = 10 (the image's width)"), std::string::npos) << r.stderrText;
    EXPECT_NE(r.stderrText.find("resized from 320 × 224 to 10 × 6"), std::string::npos) << r.stderrText;
    const auto grid = metadataJson(out, "attnscope.image");
    EXPECT_EQ(grid["mode"], "pixels");
    EXPECT_EQ(grid["rows"], 6);
    EXPECT_EQ(grid["cols"], 10);
    const auto tokens = metadataJson(out, "attnscope.tokens");
    ASSERT_EQ(tokens.size(), 60u);
    EXPECT_EQ(tokens[11]["text"], "(1, 1)");
    EXPECT_EQ(tokens[11]["row"], 1);
    EXPECT_EQ(tokens[11]["col"], 1);
    // Cell (1, 1) of a 10 × 6 grid over 320 × 224 pixels: x 32…64, y 37.33…74.67
    EXPECT_DOUBLE_EQ(tokens[11]["box"][0].get<double>(), 32.0);
    EXPECT_DOUBLE_EQ(tokens[11]["box"][2].get<double>(), 64.0);
    EXPECT_NEAR(tokens[11]["box"][1].get<double>(), 224.0 / 6.0, 1e-9);
    const auto request = metadataJson(out, "attnscope.request");
    EXPECT_EQ(request["input"]["source"], "image");
    // The file reads back: a tile of its exact weights
    auto tile = runCli("tile " + out + " --head 0 --rows 11:12 --keys 0:12");
    EXPECT_EQ(tile.status, 0) << tile.stderrText;
}

TEST(CliImage, PatchesWithClsAndLocal2d) {
    const std::string out = tempPath("patches.safetensors");
    auto r = runCli("run --image " + kAirplane + " --image-tokens patches --patch 32 --cls --variant local2d --param window=3 "
                    "--heads 2 --head-dim 8 --out " + out);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    EXPECT_NE(r.stderrText.find("local2d: width = 10 (patches across the image), prefix = 1"), std::string::npos) << r.stderrText;
    const auto tokens = metadataJson(out, "attnscope.tokens");
    ASSERT_EQ(tokens.size(), 1u + 7 * 10);
    EXPECT_EQ(tokens[0]["text"], "[CLS]");
    // A patch that does not divide: 320 × 224 with P = 48 crops, and says so
    auto cropped = runCli("run --image " + kAirplane + " --image-tokens patches --patch 48 --variant full --heads 1 --head-dim 4 --out " +
                          tempPath("cropped.safetensors"));
    ASSERT_EQ(cropped.status, 0) << cropped.stderrText;
    EXPECT_NE(cropped.stderrText.find("the right 32 columns and bottom 32 rows are cropped"), std::string::npos) << cropped.stderrText;
}

TEST(CliImage, UnreadablePicturesAndBadGridsAreOneLineErrors) {
    const std::string fake = tempPath("not-an-image.png");
    std::ofstream(fake) << "this is text, not a picture\n";
    auto r = runCli("run --image " + fake + " --variant full --out " + tempPath("x.safetensors"));
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.stderrText.find("not an image"), std::string::npos) << r.stderrText;
    EXPECT_EQ(std::count(r.stderrText.begin(), r.stderrText.end(), '\n'), 1) << r.stderrText;

    auto grid = runCli("run --image " + kAirplane + " --image-grid 0x8 --variant full --out " + tempPath("y.safetensors"));
    EXPECT_NE(grid.status, 0);
    EXPECT_NE(grid.stderrText.find("--image-grid must look like ROWSxCOLS"), std::string::npos) << grid.stderrText;
    auto both = runCli("run --image " + kAirplane + " --text hello --variant full --out " + tempPath("z.safetensors"));
    EXPECT_NE(both.status, 0);
}

// The LibTorch command line opens the image decoder module only for a picture: without the
// module beside it, text runs work and `--image` is a one-line error naming the module.
TEST(CliImage, TheTorchCommandLineNeedsTheImageDecoderOnlyForPictures) {
    const std::filesystem::path built = std::filesystem::path(ATTNSCOPE_CLI_PATH).parent_path() / "attnscope-cli-torch";
    const std::filesystem::path lonelyDir = tempPath("lonely-cli");
    std::filesystem::remove_all(lonelyDir);
    std::filesystem::create_directories(lonelyDir);
    const std::filesystem::path lonely = lonelyDir / "attnscope-cli-torch";
    std::filesystem::copy_file(built, lonely);

    auto text = runProgram(lonely.string(), "run --text \"a picture of words\" --variant full --heads 1 --head-dim 4 --out " +
                                                (lonelyDir / "text.safetensors").string());
    EXPECT_EQ(text.status, 0) << text.stderrText;

    const std::string out = (lonelyDir / "image.safetensors").string();
    auto image = runProgram(lonely.string(), "run --image " + kAirplane + " --variant full --out " + out);
    EXPECT_NE(image.status, 0);
    EXPECT_NE(image.stderrText.find("cannot open the image decoder"), std::string::npos) << image.stderrText;
    EXPECT_NE(image.stderrText.find("libattnscope-image-decoder.so"), std::string::npos) << image.stderrText;
    EXPECT_EQ(std::count(image.stderrText.begin(), image.stderrText.end(), '\n'), 1) << image.stderrText;
    EXPECT_FALSE(std::filesystem::exists(out));

    // Nothing links Qt into it again by accident (each Qt library slows every command's start).
    auto needed = runProgram("/usr/bin/env", "readelf -d " + built.string());
    ASSERT_EQ(needed.status, 0) << needed.stderrText;
    EXPECT_NE(needed.stdoutText.find("libtorch"), std::string::npos) << needed.stdoutText;
    EXPECT_EQ(needed.stdoutText.find("libQt6"), std::string::npos) << needed.stdoutText;
}

TEST(CliImage, AVisionModelsAtlasOfAPictureHasRolloutFlowAndDinosView) {
    attnscope::testing::VitSpec spec;
    spec.image = 32;
    spec.patch = 16;
    const std::string folder = tempPath("vit");
    std::filesystem::remove_all(folder);
    attnscope::testing::writeVitFolder(folder, spec, R"({"size": {"height": 32, "width": 32}, "resample": 3})");
    const std::string out = tempPath("vit-atlas.json");
    auto r = runCli("analyze --model " + folder + " --image " + kAirplane + " --head-fusion min --discard-ratio 0.5 --out " + out);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    EXPECT_NE(r.stderrText.find("resized from 320 × 224 to 32 × 32 (bicubic"), std::string::npos) << r.stderrText;
    const auto atlas = nlohmann::json::parse(slurp(out));
    const auto& image = atlas["image"];
    EXPECT_EQ(image["grid"]["rows"], 2);
    EXPECT_EQ(image["grid"]["prefix"], 1);
    EXPECT_EQ(image["options"]["head_fusion"], "min");
    ASSERT_EQ(image["rollout"].size(), 4u);
    ASSERT_EQ(image["flow"].size(), 4u);
    ASSERT_EQ(image["query_attention"].size(), 2u);     // layers
    ASSERT_EQ(image["query_attention"][0].size(), 2u);  // heads
    EXPECT_EQ(image["mass_cells"][0].size(), 4u);
    // A text is no input for a vision model
    auto text = runCli("analyze --model " + folder + " --text 'a cat' --out " + tempPath("text-atlas.json"));
    EXPECT_NE(text.status, 0);
    EXPECT_NE(text.stderrText.find("it reads pictures, not text"), std::string::npos) << text.stderrText;
    std::filesystem::remove_all(folder);
}
