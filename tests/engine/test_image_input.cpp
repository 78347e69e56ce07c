// Images as input: pixel and patch tokens against hand-worked pictures, the image defaults of the
// Sparse Transformer (its Fig. 3 on a 6 × 6 image), `local2d` against its definition, and the
// refusals of bad pictures and grids.

#include "sparse_test_support.h"

#include "io/image/area_resize.h"
#include "io/image/image_tokens.h"

#include <algorithm>

using namespace sparse_test;

namespace {

// A picture whose channel c at (y, x) is (c + 1) · (10 · y + x) / 100: every value distinct and known.
RgbImage countingImage(std::int64_t height, std::int64_t width) {
    RgbImage image;
    image.height = height;
    image.width = width;
    for (int c = 0; c < 3; ++c)
        for (std::int64_t y = 0; y < height; ++y)
            for (std::int64_t x = 0; x < width; ++x) image.rgb.push_back(float((c + 1) * (10 * y + x)) / 100.0f);
    return image;
}

ImageSpec pixelSpec(RgbImage image, std::int64_t rows, std::int64_t cols) {
    ImageSpec spec;
    spec.image = std::move(image);
    spec.name = "test.png";
    spec.mode = ImageTokenMode::Pixels;
    spec.gridRows = rows;
    spec.gridCols = cols;
    return spec;
}

ImageSpec patchSpec(RgbImage image, std::int64_t patch, bool cls, PatchFit fit = PatchFit::Crop) {
    ImageSpec spec;
    spec.image = std::move(image);
    spec.mode = ImageTokenMode::Patches;
    spec.patch = patch;
    spec.cls = cls;
    spec.fit = fit;
    return spec;
}

RunRequest imageRequest(ImageSpec spec, const std::string& variant, ParamValues params = {}) {
    RunRequest request;
    request.source = InputSpec{{}, TokenizerKind::Words, std::move(spec)};
    request.projection.heads = 2;
    request.projection.headDim = 8;
    request.projection.seed = 7;
    request.variants.push_back(VariantRequest{variant, std::move(params)});
    return request;
}

std::vector<float> valuesOf(const SharedFloats& t) { return std::vector<float>(t.data.get(), t.data.get() + t.numel()); }

bool hasWarning(const RunResult& run, const std::string& text) {
    return std::any_of(run.warnings.begin(), run.warnings.end(), [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

}  // namespace

TEST(ImageTokens, PixelsAreAreaAveragesOfTheirCellsInRasterOrder) {
    // 4 × 4 to 2 × 2: each token is the mean of a 2 × 2 block, e.g. cell (0, 1) of channel 0 is
    // (2 + 3 + 12 + 13) / 4 / 100 = 0.075.
    auto tokens = imageTokens(pixelSpec(countingImage(4, 4), 2, 2));
    ASSERT_TRUE(tokens.ok()) << tokens.error().message;
    ASSERT_EQ(tokens->input.tokens.size(), 4u);
    ASSERT_EQ(tokens->valuesPerCell, 3);
    EXPECT_EQ(tokens->input.kind, TokenizerKind::Pixels);
    const double expected[4] = {(0 + 1 + 10 + 11) / 400.0, (2 + 3 + 12 + 13) / 400.0, (20 + 21 + 30 + 31) / 400.0,
                                (22 + 23 + 32 + 33) / 400.0};
    for (int t = 0; t < 4; ++t) {
        const Token& token = tokens->input.tokens[std::size_t(t)];
        EXPECT_EQ(token.row, t / 2);
        EXPECT_EQ(token.col, t % 2);
        EXPECT_EQ(token.text, cellLabel(t / 2, t % 2));
        for (int c = 0; c < 3; ++c) EXPECT_NEAR(tokens->values[std::size_t(t * 3 + c)], (c + 1) * expected[t], 1e-6) << t << " " << c;
    }
    const ImageGrid& grid = *tokens->input.image;
    EXPECT_EQ(grid.rows, 2);
    EXPECT_EQ(grid.cols, 2);
    EXPECT_EQ(grid.prefix, 0);
    // Cell (1, 0) covers source pixels x 0..2, y 2..4
    const ImageBox box = grid.cellBox(1, 0);
    EXPECT_DOUBLE_EQ(box.x0, 0);
    EXPECT_DOUBLE_EQ(box.x1, 2);
    EXPECT_DOUBLE_EQ(box.y0, 2);
    EXPECT_DOUBLE_EQ(box.y1, 4);
    ASSERT_EQ(grid.notes.size(), 1u);
    EXPECT_NE(grid.notes[0].find("resized from 4 × 4 to 2 × 2"), std::string::npos);
}

TEST(ImageTokens, AreaResizeWeighsPartlyCoveredPixels) {
    // One row of 3 pixels to 2: output 0 covers pixel 0 and half of pixel 1 (1.5 pixels).
    RgbImage image;
    image.height = 1;
    image.width = 3;
    image.rgb = {0.3f, 0.6f, 0.9f, 0, 0, 0, 1, 1, 1};
    const RgbImage out = resizeArea(image, 1, 2);
    EXPECT_NEAR(out.at(0, 0, 0), (0.3 + 0.5 * 0.6) / 1.5, 1e-6);
    EXPECT_NEAR(out.at(0, 0, 1), (0.5 * 0.6 + 0.9) / 1.5, 1e-6);
    EXPECT_NEAR(out.at(2, 0, 1), 1.0, 1e-6);
    // Enlarging: 3 pixels to 6, each source pixel twice
    const RgbImage big = resizeArea(image, 2, 6);
    for (std::int64_t y = 0; y < 2; ++y)
        for (std::int64_t x = 0; x < 6; ++x) EXPECT_NEAR(big.at(0, y, x), image.at(0, 0, x / 2), 1e-6);
}

TEST(ImageTokens, PatchesAreCutChannelMajorAfterTheClsToken) {
    auto tokens = imageTokens(patchSpec(countingImage(4, 6), 2, /*cls=*/true));
    ASSERT_TRUE(tokens.ok()) << tokens.error().message;
    const auto& list = tokens->input.tokens;
    ASSERT_EQ(list.size(), 1u + 2 * 3);
    EXPECT_EQ(list[0].text, "[CLS]");
    EXPECT_EQ(list[0].row, -1);
    EXPECT_EQ(tokens->input.kind, TokenizerKind::Patches);
    const ImageGrid& grid = *tokens->input.image;
    EXPECT_EQ(grid.prefix, 1);
    EXPECT_EQ(grid.rows, 2);
    EXPECT_EQ(grid.cols, 3);
    EXPECT_EQ(list[1 + 5].row, 1);
    EXPECT_EQ(list[1 + 5].col, 2);
    ASSERT_EQ(tokens->valuesPerCell, 12);
    // Patch (1, 2) = pixels y 2..3, x 4..5; channel 1 at (y 3, x 4) is 2 · 34 / 100
    const float* patch = tokens->values.data() + 5 * 12;
    EXPECT_FLOAT_EQ(patch[0], 0.24f);            // channel 0, (2, 4)
    EXPECT_FLOAT_EQ(patch[4 + 1 * 2 + 0], 0.68f);  // channel 1 (offset P·P), row 1 of the patch, column 0: (3, 4)
    EXPECT_FLOAT_EQ(patch[8 + 3], 3 * 0.35f);      // channel 2, (3, 5)
    const ImageBox box = grid.cellBox(1, 2);
    EXPECT_DOUBLE_EQ(box.x0, 4);
    EXPECT_DOUBLE_EQ(box.y0, 2);
    EXPECT_DOUBLE_EQ(box.x1, 6);
    EXPECT_DOUBLE_EQ(box.y1, 4);
    EXPECT_TRUE(grid.notes.empty());
}

TEST(ImageTokens, APatchThatDoesNotDivideCropsOrPadsAndSaysSo) {
    auto cropped = imageTokens(patchSpec(countingImage(5, 7), 2, false, PatchFit::Crop));
    ASSERT_TRUE(cropped.ok());
    EXPECT_EQ(cropped->input.image->rows, 2);
    EXPECT_EQ(cropped->input.image->cols, 3);
    ASSERT_EQ(cropped->input.image->notes.size(), 1u);
    EXPECT_NE(cropped->input.image->notes[0].find("right 1 columns and bottom 1 rows are cropped"), std::string::npos)
        << cropped->input.image->notes[0];

    auto padded = imageTokens(patchSpec(countingImage(5, 7), 2, false, PatchFit::Pad));
    ASSERT_TRUE(padded.ok());
    const ImageGrid& grid = *padded->input.image;
    EXPECT_EQ(grid.rows, 3);
    EXPECT_EQ(grid.cols, 4);
    EXPECT_NE(grid.notes[0].find("padded with black"), std::string::npos);
    // The last patch (2, 3) holds source pixel (4, 6) and black elsewhere
    const float* last = padded->values.data() + 11 * 12;
    EXPECT_FLOAT_EQ(last[0], 0.46f);
    EXPECT_FLOAT_EQ(last[1], 0.0f);
    EXPECT_FLOAT_EQ(last[2], 0.0f);
    // Its box is clipped to the picture
    const ImageBox box = grid.cellBox(2, 3);
    EXPECT_DOUBLE_EQ(box.x1, 7);
    EXPECT_DOUBLE_EQ(box.y1, 5);
}

TEST(ImageTokens, BadPicturesAndGridsAreRefusedNamingTheField) {
    RgbImage empty;
    auto e = imageTokens(pixelSpec(empty, 2, 2));
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message.find("the image is empty"), std::string::npos);

    RgbImage short_ = countingImage(2, 2);
    short_.rgb.pop_back();
    auto s = imageTokens(pixelSpec(short_, 2, 2));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("expected 3 × 2 × 2"), std::string::npos) << s.error().message;

    RgbImage nan = countingImage(2, 2);
    nan.rgb[3] = std::nanf("");
    EXPECT_FALSE(imageTokens(pixelSpec(nan, 2, 2)).ok());

    auto zero = imageTokens(pixelSpec(countingImage(2, 2), 0, 4));
    ASSERT_FALSE(zero.ok());
    EXPECT_EQ(zero.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(zero.error().message.find("image grid"), std::string::npos);

    auto patch0 = imageTokens(patchSpec(countingImage(4, 4), 0, false));
    ASSERT_FALSE(patch0.ok());
    EXPECT_NE(patch0.error().message.find("patch size must be at least 1"), std::string::npos);
    auto tooBig = imageTokens(patchSpec(countingImage(4, 4), 8, false));
    ASSERT_FALSE(tooBig.ok());
    EXPECT_NE(tooBig.error().message.find("larger than the image"), std::string::npos);
    // padding makes one patch of a small picture
    EXPECT_TRUE(imageTokens(patchSpec(countingImage(4, 4), 8, false, PatchFit::Pad)).ok());
}

// Child et al. 2019, Fig. 3 on a 6 × 6 image in raster order: strided with l = 6 (the width)
// attends the previous l positions (the row so far and the end of the row above) and every l-th
// position before it (the column); fixed with l = 6 attends its own row so far and the summary
// cells, the last c positions of every row.
TEST(ImageInput, SparseTransformerPatternsOnA6x6ImageTakeTheImagesWidth) {
    auto engine = makeEngine();
    auto strided = runOk(*engine, imageRequest(pixelSpec(countingImage(6, 6), 6, 6), "sparse_strided"));
    ASSERT_TRUE(strided);
    EXPECT_TRUE(hasWarning(*strided, "sparse_strided: stride = 6 (the image's width)"));
    EXPECT_EQ(std::get<std::int64_t>(strided->results[0].params.at("stride")), 6);
    ASSERT_EQ(strided->results[0].n, 36);
    expectPatternEquals(strided->results[0], [](int, std::int64_t i, std::int64_t j) {
        if (j > i) return false;
        return i - j <= 6 || (i - j) % 6 == 0;  // A1: t = max(0, i − l) … i; A2: (i − j) mod l = 0
    });
    EXPECT_EQ(strided->input.tokens[7].text, "(1, 1)");
    ASSERT_TRUE(strided->input.image);
    EXPECT_EQ(strided->input.image->cols, 6);

    auto fixed = runOk(*engine, imageRequest(pixelSpec(countingImage(6, 6), 6, 6), "sparse_fixed", {{"summary", std::int64_t{1}}}));
    ASSERT_TRUE(fixed);
    EXPECT_TRUE(hasWarning(*fixed, "sparse_fixed: block = 6 (the image's width)"));
    expectPatternEquals(fixed->results[0], [](int, std::int64_t i, std::int64_t j) {
        if (j > i) return false;
        return j / 6 == i / 6 || j % 6 == 5;  // A1: ⌊j/l⌋ = ⌊i/l⌋; A2: j mod l ∈ {l − c … l − 1}, c = 1
    });
    // A stride the user gives wins, without a notice
    auto given = runOk(*engine, imageRequest(pixelSpec(countingImage(6, 6), 6, 6), "sparse_strided", {{"stride", std::int64_t{3}}}));
    ASSERT_TRUE(given);
    EXPECT_EQ(std::get<std::int64_t>(given->results[0].params.at("stride")), 3);
    EXPECT_FALSE(hasWarning(*given, "stride = "));
}

TEST(ImageInput, TheSameImageAndSeedGiveTheSameQueriesAndTheRequestRecordsTheImage) {
    auto engine = makeEngine();
    auto a = runOk(*engine, imageRequest(patchSpec(countingImage(8, 8), 4, true), "full"));
    ASSERT_TRUE(a);
    const std::vector<float> q = valuesOf(a->q);
    auto b = runOk(*engine, imageRequest(patchSpec(countingImage(8, 8), 4, true), "full"));
    ASSERT_TRUE(b);
    EXPECT_EQ(q, valuesOf(b->q));
    EXPECT_EQ(a->n, 5);
    EXPECT_NE(a->requestJson.find("\"source\":\"image\""), std::string::npos) << a->requestJson;
    EXPECT_NE(a->requestJson.find("\"patch\":4"), std::string::npos);
    // Two cells of different colour at the same place in two pictures get different queries
    RgbImage other = countingImage(8, 8);
    for (float& v : other.rgb) v = 1.0f - v;
    auto c = runOk(*engine, imageRequest(patchSpec(other, 4, true), "full"));
    ASSERT_TRUE(c);
    const std::vector<float> qc = valuesOf(c->q);
    EXPECT_EQ(std::vector<float>(q.begin(), q.begin() + 8), std::vector<float>(qc.begin(), qc.begin() + 8));  // the CLS token
    EXPECT_NE(std::vector<float>(q.begin() + 8, q.end()), std::vector<float>(qc.begin() + 8, qc.end()));
}

// local2d from its definition: prefix tokens are global both ways; grid cells (r, c), (r', c')
// with |r − r'| ≤ h and |c − c'| ≤ h; causal keeps j ≤ i.
bool local2dAllows(std::int64_t i, std::int64_t j, std::int64_t width, std::int64_t prefix, std::int64_t k, bool causal) {
    if (causal && j > i) return false;
    if (i < prefix || j < prefix) return true;
    const std::int64_t h = (k - 1) / 2;
    const std::int64_t ri = (i - prefix) / width, ci = (i - prefix) % width, rj = (j - prefix) / width, cj = (j - prefix) % width;
    return std::abs(ri - rj) <= h && std::abs(ci - cj) <= h;
}

TEST(Local2d, MatchesItsDefinitionAndAMaskedSoftmax) {
    auto engine = makeEngine();
    // widths dividing n and not (a partial last row), windows 1 to wider than the grid, CLS prefixes
    for (std::int64_t n : {std::int64_t{30}, std::int64_t{37}})
        for (std::int64_t width : {std::int64_t{1}, std::int64_t{5}, std::int64_t{6}, std::int64_t{70}})
            for (std::int64_t k : {std::int64_t{1}, std::int64_t{3}, std::int64_t{5}, std::int64_t{9}})
                for (std::int64_t prefix : {std::int64_t{0}, std::int64_t{2}})
                    for (bool causal : {false, true}) {
                        SCOPED_TRACE(testing::Message() << "n=" << n << " width=" << width << " k=" << k << " prefix=" << prefix
                                                        << " causal=" << causal);
                        auto x = randomQkv(2, n, 4, unsigned(n + width + k));
                        auto r = runOk(*engine, variantRequest(x, "local2d",
                                                               {{"window", k}, {"width", width}, {"prefix", prefix}, {"causal", causal}}));
                        ASSERT_TRUE(r);
                        expectPatternEquals(r->results[0], [&](int, std::int64_t i, std::int64_t j) {
                            return local2dAllows(i, j, width, prefix, k, causal);
                        });
                        expectMatchesMaskedSoftmax(r->results[0], x.q, x.k, x.v);
                    }
}

TEST(Local2d, HandWorkedThreeByThreeNeighbourhoodWithAClsToken) {
    // 1 CLS + a 3 × 3 grid, k = 3: the centre (1, 1) = token 5 sees all; the corner (0, 0) = token
    // 1 sees (0, 0), (0, 1), (1, 0), (1, 1) and CLS.
    auto engine = makeEngine();
    auto x = randomQkv(1, 10, 4, 3);
    auto r = runOk(*engine, variantRequest(x, "local2d", {{"window", std::int64_t{3}}, {"width", std::int64_t{3}}, {"prefix", std::int64_t{1}}}));
    ASSERT_TRUE(r);
    const std::vector<std::string> expected = {"GGGGGGGGGG", "GLL.LL....", "GLLLLLL...", "G.LL.LL...", "GLL.LL.LL.",
                                               "GLLLLLLLLL", "G.LL.LL.LL", "G...LL.LL.", "G...LLLLLL", "G....LL.LL"};
    EXPECT_EQ(maskGrid(r->results[0], 0), expected);
}

TEST(Local2d, OnAnImageTakesItsWidthAndClsElseASquareAndRefusesAnEvenWindow) {
    auto engine = makeEngine();
    auto r = runOk(*engine, imageRequest(patchSpec(countingImage(8, 12), 4, true), "local2d", {{"window", std::int64_t{3}}}));
    ASSERT_TRUE(r);
    EXPECT_EQ(std::get<std::int64_t>(r->results[0].params.at("width")), 3);
    EXPECT_EQ(std::get<std::int64_t>(r->results[0].params.at("prefix")), 1);
    EXPECT_TRUE(hasWarning(*r, "local2d: width = 3 (patches across the image), prefix = 1 (tokens before the grid)"));
    expectPatternEquals(r->results[0], [](int, std::int64_t i, std::int64_t j) { return local2dAllows(i, j, 3, 1, 3, false); });

    auto x = randomQkv(1, 12, 4, 5);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "local2d", {{"window", std::int64_t{4}}, {"width", std::int64_t{3}}}))
                  .find("'window' must be odd"),
              std::string::npos);
    // Not an image and no width: 12 tokens as a square of ⌈√12⌉ = 4 a row
    auto square = runOk(*engine, variantRequest(x, "local2d", {{"window", std::int64_t{3}}}));
    ASSERT_TRUE(square);
    expectPatternEquals(square->results[0], [](int, std::int64_t i, std::int64_t j) { return local2dAllows(i, j, 4, 0, 3, false); });
}
