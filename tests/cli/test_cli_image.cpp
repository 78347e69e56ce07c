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
#include <iterator>

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

namespace {

void writeBytes(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// A 4 × 2 24-bit BMP (uncompressed rows of 12 bytes, padded to 12), written by hand.
std::string smallBmp() {
    std::string b = "BM";
    const auto u32 = [&](std::uint32_t v) { for (int i = 0; i < 4; ++i) b += static_cast<char>((v >> (8 * i)) & 0xFF); };
    const auto u16 = [&](std::uint16_t v) { b += static_cast<char>(v & 0xFF); b += static_cast<char>(v >> 8); };
    u32(54 + 24); u32(0); u32(54);                      // file size, reserved, pixel offset
    u32(40); u32(4); u32(2); u16(1); u16(24); u32(0);   // BITMAPINFOHEADER: 4 × 2, 24 bits, BI_RGB
    u32(24); u32(2835); u32(2835); u32(0); u32(0);
    for (int i = 0; i < 24; ++i) b += static_cast<char>(i * 10);
    return b;
}

}  // namespace

// A picture cut short is refused with the file and what is wrong (not decoded grey): JPEG, GIF,
// PNG and BMP, and a BMP whose pixels would start past its end; the whole files run.
TEST(CliImage, DamagedPicturesAreRefusedNamingTheFile) {
    std::ifstream in(kAirplane, std::ios::binary);
    const std::string jpeg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ifstream pngIn(std::string(ATTNSCOPE_SOURCE_DIR) + "/docs/screenshots/1366x768/heatmap.png", std::ios::binary);
    const std::string png((std::istreambuf_iterator<char>(pngIn)), std::istreambuf_iterator<char>());
    const std::string gif = std::string("\x47\x49\x46\x38\x39\x61\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00\x21"
                                        "\xf9\x04\x01\x00\x00\x00\x00\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00\x3b",
                                        43);
    std::string bmpPastEnd = smallBmp();
    bmpPastEnd[10] = static_cast<char>(200);  // pixel offset 200 of a 78-byte file
    const std::string args = " --image-grid 2x2 --variant full --heads 1 --head-dim 4 --out ";
    struct Case {
        const char* name;
        std::string bytes;
        bool whole;
    } cases[] = {{"whole.gif", gif, true},
                 {"whole.bmp", smallBmp(), true},
                 {"whole.png", png, true},
                 {"cut.jpg", jpeg.substr(0, jpeg.size() / 2), false},
                 {"cut.gif", gif.substr(0, 30), false},
                 {"cut.png", png.substr(0, png.size() * 2 / 3), false},
                 {"cut.bmp", smallBmp().substr(0, 66), false},
                 {"offset.bmp", bmpPastEnd, false}};
    for (const Case& c : cases) {
        const std::string picture = tempPath(c.name), out = tempPath(std::string(c.name) + ".safetensors");
        std::filesystem::remove(out);
        writeBytes(picture, c.bytes);
        auto r = runCli("run --image " + picture + args + out);
        if (c.whole) {
            EXPECT_EQ(r.status, 0) << c.name << ": " << r.stderrText;
            continue;
        }
        EXPECT_NE(r.status, 0) << c.name;
        EXPECT_NE(r.stderrText.find(picture), std::string::npos) << c.name << ": " << r.stderrText;
        EXPECT_EQ(std::count(r.stderrText.begin(), r.stderrText.end(), '\n'), 1) << c.name << ": " << r.stderrText;
        EXPECT_FALSE(std::filesystem::exists(out)) << c.name;
    }
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
