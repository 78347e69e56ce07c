// Every safetensors rule (FORMATS.md §1.2) as a hand-made byte vector, plus writer round trips.
#include <attnscope/safetensors.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace attnscope::engine {
namespace {

using Bytes = std::vector<std::uint8_t>;

/// 8-byte little-endian prefix `n`, then `body` as is (n need not match).
Bytes rawFile(std::uint64_t n, const std::string& body) {
    Bytes out;
    out.reserve(8 + body.size());
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
    for (const char c : body) out.push_back(static_cast<std::uint8_t>(c));
    return out;
}

/// A well-formed prefix for `header`, followed by `bufferBytes` bytes of 0xAB.
Bytes makeFile(const std::string& header, std::size_t bufferBytes) {
    Bytes out = rawFile(header.size(), header);
    out.insert(out.end(), bufferBytes, 0xAB);
    return out;
}

/// Parses `bytes`, expects an InvalidInput error naming `rule` and returns its message.
std::string expectRule(const Bytes& bytes, const std::string& rule) {
    auto result = parseSafetensorsHeader(bytes.data(), bytes.size());
    EXPECT_FALSE(result.ok()) << "expected " << rule;
    if (result.ok()) return {};
    EXPECT_EQ(result.error().code, ErrorCode::InvalidInput);
    EXPECT_EQ(result.error().message.rfind(rule + ":", 0), 0u) << result.error().message;
    return result.error().message;
}

StHeader expectValid(const Bytes& bytes) {
    auto result = parseSafetensorsHeader(bytes.data(), bytes.size());
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
    return result.ok() ? result.value() : StHeader{};
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

const std::string kOneF32 = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";

// ---- malformed containers --------------------------------------------------------------------

TEST(SafetensorsHeader, HeaderTooSmall) {
    expectRule(Bytes{}, "HeaderTooSmall");
    expectRule(Bytes(7, 0), "HeaderTooSmall");
}

TEST(SafetensorsHeader, HeaderTooLarge) {
    expectRule(rawFile(100'000'001, "{}"), "HeaderTooLarge");
    expectRule(rawFile(UINT64_MAX, ""), "HeaderTooLarge");
    // The limit itself is allowed; the file is merely too short for it.
    expectRule(rawFile(100'000'000, "{}"), "InvalidHeaderLength");
}

TEST(SafetensorsHeader, InvalidHeaderLength) {
    const std::string msg = expectRule(rawFile(100, "{}        "), "InvalidHeaderLength");
    EXPECT_TRUE(contains(msg, "100")) << msg;
}

TEST(SafetensorsHeader, InvalidHeaderNonUtf8) {
    for (const std::string bad : {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
        const std::string header = R"({"a)" + bad + R"(":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
        expectRule(makeFile(header, 4), "InvalidHeader");
    }
    // Valid multi-byte names are fine.
    const StHeader h = expectValid(makeFile(R"({"é€😀":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1));
    ASSERT_EQ(h.tensors.size(), 1u);
    EXPECT_EQ(h.tensors[0].name, "é€😀");
}

TEST(SafetensorsHeader, InvalidHeaderEmbeddedNul) {
    // nlohmann alone would return {"a":1} and ignore what follows the NUL.
    const std::string header("{}\0{\"evil\":2}", 13);
    const std::string msg = expectRule(makeFile(header, 0), "InvalidHeader");
    EXPECT_TRUE(contains(msg, "0x00")) << msg;
}

TEST(SafetensorsHeader, NotJson) {
    expectRule(makeFile("{\"test\":", 0), "InvalidHeaderDeserialization");
    expectRule(makeFile("", 0), "InvalidHeaderDeserialization");
    expectRule(makeFile("        ", 0), "InvalidHeaderDeserialization");
    expectRule(makeFile("{} x", 0), "InvalidHeaderDeserialization");       // trailing garbage
    expectRule(makeFile("{}{}", 0), "InvalidHeaderDeserialization");       // two documents
    expectRule(makeFile("\xef\xbb\xbf{}", 0), "InvalidHeaderDeserialization");  // BOM
    expectRule(makeFile("{/*c*/}", 0), "InvalidHeaderDeserialization");    // comments
}

TEST(SafetensorsHeader, WrongTopLevelTypes) {
    expectRule(makeFile("[]", 0), "InvalidHeaderDeserialization");
    expectRule(makeFile("42", 0), "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"a":"F32"})", 0), "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"a":[1]})", 0), "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"a":{"dtype":5,"shape":[1],"data_offsets":[0,4]}})", 4),
               "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"a":{"dtype":"F32","shape":"1","data_offsets":[0,4]}})", 4),
               "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":{"b":0}}})", 4),
               "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"a":{"dtype":"F32","shape":[true],"data_offsets":[0,4]}})", 4),
               "InvalidHeaderDeserialization");
}

// ---- wrong numbers ---------------------------------------------------------------------------

TEST(SafetensorsHeader, NegativeOffset) {
    const std::string msg =
        expectRule(makeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[-1,3]}})", 4),
                   "InvalidHeaderDeserialization");
    EXPECT_TRUE(contains(msg, "negative")) << msg;
    expectRule(makeFile(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
               "InvalidHeaderDeserialization");
}

TEST(SafetensorsHeader, FloatOffset) {
    for (const char* offsets : {"[0,4.0]", "[0,4e0]", "[0.5,4]", "[0,18446744073709551616]"}) {
        const std::string header =
            std::string(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":)") + offsets + "}}";
        const std::string msg = expectRule(makeFile(header, 4), "InvalidHeaderDeserialization");
        EXPECT_TRUE(contains(msg, "not an integer")) << msg;
    }
}

TEST(SafetensorsHeader, IntegersAbove2Pow48) {
    expectRule(makeFile(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[281474976710657,281474976710657]}})", 0),
               "InvalidHeaderDeserialization");
    // A huge dim next to a zero dim passes the overflow checks but breaks the 2^48 cap.
    const std::string msg =
        expectRule(makeFile(R"({"a":{"dtype":"U8","shape":[0,281474976710657],"data_offsets":[0,0]}})", 0),
                   "InvalidHeaderDeserialization");
    EXPECT_TRUE(contains(msg, "2^48")) << msg;
    // 2^48 itself is allowed.
    expectValid(makeFile(R"({"a":{"dtype":"U8","shape":[0,281474976710656],"data_offsets":[0,0]}})", 0));
}

TEST(SafetensorsHeader, MissingField) {
    for (const char* header : {R"({"a":{"shape":[1],"data_offsets":[0,4]}})",
                               R"({"a":{"dtype":"F32","data_offsets":[0,4]}})",
                               R"({"a":{"dtype":"F32","shape":[1]}})", R"({"a":{}})"}) {
        const std::string msg = expectRule(makeFile(header, 4), "InvalidHeaderDeserialization");
        EXPECT_TRUE(contains(msg, "missing field")) << msg;
    }
}

TEST(SafetensorsHeader, UnknownDtype) {
    for (const char* dtype : {"F128", "f32", "", "FLOAT"}) {
        const std::string header =
            std::string(R"({"a":{"dtype":")") + dtype + R"(","shape":[1],"data_offsets":[0,4]}})";
        const std::string msg = expectRule(makeFile(header, 4), "InvalidHeaderDeserialization");
        EXPECT_TRUE(contains(msg, "unknown dtype")) << msg;
    }
}

TEST(SafetensorsHeader, DataOffsetsNotTwoElements) {
    expectRule(makeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})", 4),
               "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4]}})", 4),
               "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[]}})", 0),
               "InvalidHeaderDeserialization");
}

TEST(SafetensorsHeader, MetadataMustBeStringToString) {
    expectRule(makeFile(R"({"__metadata__":{"a":1}})", 0), "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"__metadata__":{"a":{"b":"c"}}})", 0), "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"__metadata__":{"a":["b"]}})", 0), "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"__metadata__":"pt"})", 0), "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"__metadata__":["pt"]})", 0), "InvalidHeaderDeserialization");
    // No tensor may be called __metadata__ (safetensors#849).
    expectRule(makeFile(R"({"__metadata__":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4),
               "InvalidHeaderDeserialization");
}

TEST(SafetensorsHeader, NestingDeeperThanThree) {
    const std::string msg =
        expectRule(makeFile(R"({"a":{"dtype":"F32","shape":[[1]],"data_offsets":[0,4]}})", 4),
                   "InvalidHeaderDeserialization");
    EXPECT_TRUE(contains(msg, "nesting")) << msg;
    expectRule(makeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":{"y":{}}}})", 4),
               "InvalidHeaderDeserialization");
    expectRule(makeFile(std::string(1000, '[') + std::string(1000, ']'), 0), "InvalidHeaderDeserialization");
}

TEST(SafetensorsHeader, DuplicateKeysRejectedByName) {
    const std::string msg = expectRule(
        makeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                 R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                 8),
        "InvalidHeaderDeserialization");
    EXPECT_TRUE(contains(msg, "duplicate tensor name 'a'")) << msg;
    const std::string field = expectRule(
        makeFile(R"({"a":{"dtype":"F32","dtype":"I32","shape":[1],"data_offsets":[0,4]}})", 4),
        "InvalidHeaderDeserialization");
    EXPECT_TRUE(contains(field, "duplicate key 'dtype'")) << field;
    expectRule(makeFile(R"({"__metadata__":{"k":"1","k":"2"}})", 0), "InvalidHeaderDeserialization");
    expectRule(makeFile(R"({"__metadata__":{},"__metadata__":{}})", 0), "InvalidHeaderDeserialization");
}

// ---- hostile offsets and sizes ---------------------------------------------------------------

TEST(SafetensorsHeader, InvalidOffsetGap) {
    const std::string msg = expectRule(
        makeFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                 R"("b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
                 16),
        "InvalidOffset");
    EXPECT_TRUE(contains(msg, "tensor 'b' begins at 12 but the previous tensor ends at 8")) << msg;
    expectRule(makeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8), "InvalidOffset");
}

TEST(SafetensorsHeader, InvalidOffsetOverlap) {
    const std::string msg = expectRule(
        makeFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                 R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                 12),
        "InvalidOffset");
    EXPECT_TRUE(contains(msg, "'b'")) << msg;
    // The same range twice (tied weights saved twice).
    expectRule(makeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                        R"("b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                        4),
               "InvalidOffset");
}

TEST(SafetensorsHeader, InvalidOffsetEndBeforeBegin) {
    const std::string msg = expectRule(
        makeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                 R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})",
                 4),
        "InvalidOffset");
    EXPECT_TRUE(contains(msg, "'b'")) << msg;
}

TEST(SafetensorsHeader, ValidationOverflow) {
    // The reference reader's test_validation_overflow vectors.
    expectRule(makeFile(R"({"test":{"dtype":"I32","shape":[2,18446744073709551614],"data_offsets":[0,16]}})", 16),
               "ValidationOverflow");
    expectRule(makeFile(R"({"test":{"dtype":"I32","shape":[2,9223372036854775807],"data_offsets":[0,16]}})", 16),
               "ValidationOverflow");
}

TEST(SafetensorsHeader, TensorInvalidInfo) {
    const std::string msg =
        expectRule(makeFile(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", 12),
                   "TensorInvalidInfo");
    EXPECT_TRUE(contains(msg, "needs 16")) << msg;
}

TEST(SafetensorsHeader, MisalignedSlice) {
    expectRule(makeFile(R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", 2), "MisalignedSlice");
    expectRule(makeFile(R"({"a":{"dtype":"F6_E2M3","shape":[1],"data_offsets":[0,1]}})", 1), "MisalignedSlice");
    // Four F4 values are two whole bytes.
    expectValid(makeFile(R"({"a":{"dtype":"F4","shape":[4],"data_offsets":[0,2]}})", 2));
}

TEST(SafetensorsHeader, MetadataIncompleteBuffer) {
    const std::string header = R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
    const std::string truncated = expectRule(makeFile(header, 15), "MetadataIncompleteBuffer");
    EXPECT_TRUE(contains(truncated, "truncated")) << truncated;
    const std::string trailing = expectRule(makeFile(header, 17), "MetadataIncompleteBuffer");
    EXPECT_TRUE(contains(trailing, "trailing")) << trailing;
    expectRule(makeFile("{}", 1), "MetadataIncompleteBuffer");
    expectValid(makeFile(header, 16));
}

// ---- valid headers -------------------------------------------------------------------------

TEST(SafetensorsHeader, EmptyHeaderAndNullMetadata) {
    EXPECT_TRUE(expectValid(makeFile("{}", 0)).tensors.empty());
    const StHeader h = expectValid(makeFile(R"({"__metadata__":null})", 0));
    EXPECT_TRUE(h.metadata.empty());
}

TEST(SafetensorsHeader, ZeroSizedAndScalarTensors) {
    const StHeader h = expectValid(makeFile(
        R"({"z":{"dtype":"U8","shape":[2,0],"data_offsets":[0,0]},)"
        R"("y":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)"
        R"("s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})",
        4));
    ASSERT_EQ(h.tensors.size(), 3u);
    // Sorted by data_offsets, ties by name.
    EXPECT_EQ(h.tensors[0].name, "y");
    EXPECT_EQ(h.tensors[1].name, "z");
    EXPECT_EQ(h.tensors[1].shape, (std::vector<std::uint64_t>{2, 0}));
    EXPECT_EQ(h.tensors[2].name, "s");
    EXPECT_TRUE(h.tensors[2].shape.empty());
}

TEST(SafetensorsHeader, LeadingAndTrailingWhitespace) {
    const StHeader h = expectValid(makeFile(" \t\r\n" + kOneF32 + "\n  \t", 4));
    ASSERT_EQ(h.tensors.size(), 1u);
    EXPECT_EQ(h.headerLength, kOneF32.size() + 8);
    EXPECT_TRUE(h.warnings.empty());
}

TEST(SafetensorsHeader, OrderIndependentAndOffsetsSorted) {
    const StHeader h = expectValid(makeFile(R"({"b":{"dtype":"U8","shape":[1],"data_offsets":[4,5]},)"
                                            R"("a":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})",
                                            5));
    ASSERT_EQ(h.tensors.size(), 2u);
    EXPECT_EQ(h.tensors[0].name, "a");
    EXPECT_EQ(h.tensors[0].dtype, StDType::I32);
    EXPECT_EQ(h.tensors[1].begin, 4u);
    EXPECT_EQ(h.tensors[1].end, 5u);
}

TEST(SafetensorsHeader, MetadataAndWarnings) {
    const StHeader h = expectValid(makeFile(
        R"({"__metadata__":{"format":"pt","note":"x\"y\u00e9"},)"
        R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":{"k":1}}})",
        4));
    EXPECT_EQ(h.metadata.at("format"), "pt");
    EXPECT_EQ(h.metadata.at("note"), "x\"y\xc3\xa9");
    ASSERT_EQ(h.warnings.size(), 1u);
    EXPECT_TRUE(contains(h.warnings[0], "'extra'")) << h.warnings[0];

    const StHeader odd = expectValid(makeFile(R"({"__metadata__":{"format":"onnx"}})", 0));
    ASSERT_EQ(odd.warnings.size(), 1u);
    EXPECT_TRUE(contains(odd.warnings[0], "format")) << odd.warnings[0];
    EXPECT_TRUE(expectValid(makeFile(R"({"__metadata__":{"other":"1"}})", 0)).warnings.empty());
}

TEST(SafetensorsHeader, DTypeNamesAndBits) {
    EXPECT_STREQ(stDTypeName(StDType::F8_E4M3FNUZ), "F8_E4M3FNUZ");
    EXPECT_EQ(stDTypeBits(StDType::F4), 4);
    EXPECT_EQ(stDTypeBits(StDType::F6_E3M2), 6);
    EXPECT_EQ(stDTypeBits(StDType::BF16), 16);
    EXPECT_EQ(stDTypeBits(StDType::C64), 64);
}

// ---- files -----------------------------------------------------------------------------------

class SafetensorsFileTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = ::testing::TempDir() + "attnscope-st-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        m_dir = tmpl;
    }
    void TearDown() override {
        for (const std::string& f : m_files) ::unlink(f.c_str());
        ::rmdir(m_dir.c_str());
    }
    std::string path(const std::string& name) {
        m_files.push_back(m_dir + "/" + name);
        return m_files.back();
    }
    std::string writeBytes(const std::string& name, const Bytes& bytes) {
        const std::string p = path(name);
        std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                  static_cast<std::streamsize>(bytes.size()));
        return p;
    }
    std::unique_ptr<SafetensorsFile> openOk(const std::string& p) {
        auto file = SafetensorsFile::open(p);
        EXPECT_TRUE(file.ok()) << (file.ok() ? "" : file.error().message);
        return file.ok() ? std::move(file.value()) : nullptr;
    }

    std::string m_dir;
    std::vector<std::string> m_files;
};

/// One tensor of `dtype` and `shape` whose bytes are `data`.
Bytes singleTensor(const std::string& dtype, const std::string& shape, const Bytes& data) {
    const std::string header = R"({"t":{"dtype":")" + dtype + R"(","shape":)" + shape +
                               R"(,"data_offsets":[0,)" + std::to_string(data.size()) + "]}}";
    Bytes out = rawFile(header.size(), header);
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

TEST_F(SafetensorsFileTest, MissingFileIsNotFoundWithPath) {
    const std::string p = m_dir + "/does-not-exist.safetensors";
    auto file = SafetensorsFile::open(p);
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.error().code, ErrorCode::NotFound);
    EXPECT_EQ(file.error().message.rfind(p + ": ", 0), 0u) << file.error().message;
}

TEST_F(SafetensorsFileTest, DirectoryIsIoError) {
    auto file = SafetensorsFile::open(m_dir);
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.error().code, ErrorCode::Io);
}

TEST_F(SafetensorsFileTest, MalformedFileNamesPathAndRule) {
    const std::string p = writeBytes("model.safetensors",
                                     makeFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
                                              16));
    auto file = SafetensorsFile::open(p);
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.error().code, ErrorCode::InvalidInput);
    EXPECT_EQ(file.error().message,
              p + ": InvalidOffset: tensor 'b' begins at 12 but the previous tensor ends at 8 "
                  "(gaps and overlaps are not allowed)");

    auto empty = SafetensorsFile::open(writeBytes("empty.safetensors", {}));
    ASSERT_FALSE(empty.ok());
    EXPECT_TRUE(contains(empty.error().message, "HeaderTooSmall")) << empty.error().message;
}

TEST_F(SafetensorsFileTest, ReadsConvertedDtypes) {
    // F16: 1.0, -2.5, 65504 (max), 2^-24 (smallest subnormal), 2^-14 (smallest normal), -0, +Inf.
    const Bytes f16 = {0x00, 0x3C, 0x00, 0xC1, 0xFF, 0x7B, 0x01, 0x00, 0x00, 0x04, 0x00, 0x80, 0x00, 0x7C,
                       0x00, 0x7E};
    auto f = openOk(writeBytes("f16.safetensors", singleTensor("F16", "[8]", f16)));
    ASSERT_TRUE(f);
    auto t = f->read("t");
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->dtype, DType::F32);
    EXPECT_EQ(t->shape, (std::vector<std::int64_t>{8}));
    ASSERT_EQ(t->f32.size(), 8u);
    EXPECT_EQ(t->f32[0], 1.0f);
    EXPECT_EQ(t->f32[1], -2.5f);
    EXPECT_EQ(t->f32[2], 65504.0f);
    EXPECT_EQ(t->f32[3], std::ldexp(1.0f, -24));
    EXPECT_EQ(t->f32[4], std::ldexp(1.0f, -14));
    EXPECT_EQ(t->f32[5], 0.0f);
    EXPECT_TRUE(std::signbit(t->f32[5]));
    EXPECT_TRUE(std::isinf(t->f32[6]) && t->f32[6] > 0);
    EXPECT_TRUE(std::isnan(t->f32[7]));

    // BF16: 1.0, -2.5, 3.140625, -Inf.
    const Bytes bf16 = {0x80, 0x3F, 0x20, 0xC0, 0x49, 0x40, 0x80, 0xFF};
    auto b = openOk(writeBytes("bf16.safetensors", singleTensor("BF16", "[2,2]", bf16)));
    ASSERT_TRUE(b);
    auto bt = b->read("t");
    ASSERT_TRUE(bt.ok()) << bt.error().message;
    EXPECT_EQ(bt->shape, (std::vector<std::int64_t>{2, 2}));
    EXPECT_EQ(bt->f32, (std::vector<float>{1.0f, -2.5f, 3.140625f, -INFINITY}));

    // F64 -0.5 and 1e300 (overflows float to +Inf).
    Bytes f64(16);
    const double values[2] = {-0.5, 1e300};
    std::memcpy(f64.data(), values, sizeof values);
    auto d = openOk(writeBytes("f64.safetensors", singleTensor("F64", "[2]", f64)));
    ASSERT_TRUE(d);
    auto dt = d->read("t");
    ASSERT_TRUE(dt.ok()) << dt.error().message;
    EXPECT_EQ(dt->f32[0], -0.5f);
    EXPECT_TRUE(std::isinf(dt->f32[1]));

    // BOOL becomes U8; a scalar keeps an empty shape.
    auto bo = openOk(writeBytes("bool.safetensors", singleTensor("BOOL", "[]", {1})));
    ASSERT_TRUE(bo);
    auto bot = bo->read("t");
    ASSERT_TRUE(bot.ok()) << bot.error().message;
    EXPECT_EQ(bot->dtype, DType::U8);
    EXPECT_TRUE(bot->shape.empty());
    EXPECT_EQ(bot->u8, (std::vector<std::uint8_t>{1}));
}

TEST_F(SafetensorsFileTest, UnsupportedDtypeAndUnknownName) {
    auto f = openOk(writeBytes("i8.safetensors", singleTensor("I8", "[2]", {0x80, 0x7F})));
    ASSERT_TRUE(f);
    auto t = f->read("t");
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().code, ErrorCode::Unsupported);
    EXPECT_TRUE(contains(t.error().message, "dtype I8 not supported")) << t.error().message;
    auto missing = f->read("nope");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
    EXPECT_TRUE(contains(missing.error().message, "'nope'")) << missing.error().message;
    EXPECT_EQ(f->find("nope"), nullptr);
}

TEST_F(SafetensorsFileTest, ZeroSizedTensorReads) {
    auto f = openOk(writeBytes("zero.safetensors",
                               makeFile(R"({"z":{"dtype":"F32","shape":[2,0],"data_offsets":[0,0]}})", 0)));
    ASSERT_TRUE(f);
    auto t = f->read("z");
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->shape, (std::vector<std::int64_t>{2, 0}));
    EXPECT_TRUE(t->f32.empty());
}

// ---- writer ----------------------------------------------------------------------------------

PlainTensor makeI32(std::vector<std::int64_t> shape, std::vector<std::int32_t> values) {
    PlainTensor t;
    t.dtype = DType::I32;
    t.shape = std::move(shape);
    t.i32 = std::move(values);
    return t;
}

TEST(SafetensorsWriter, ExactBytesOfASmallFile) {
    const PlainTensor a = PlainTensor::fromF32({2}, {1.0f, -2.0f});
    auto bytes = encodeSafetensors({{"a", &a}}, {{"format", "pt"}});
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    std::string header = R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    header.append((8 - header.size() % 8) % 8, ' ');
    Bytes expected = rawFile(header.size(), header);
    const float values[2] = {1.0f, -2.0f};
    const auto* raw = reinterpret_cast<const std::uint8_t*>(values);
    expected.insert(expected.end(), raw, raw + sizeof values);
    EXPECT_EQ(bytes.value(), expected);
}

TEST(SafetensorsWriter, LayoutSortedByAlignmentThenName) {
    const PlainTensor u = PlainTensor::fromU8({3}, {1, 2, 3});
    const PlainTensor f = PlainTensor::fromF32({1}, {0.5f});
    const PlainTensor i = PlainTensor::fromI64({1}, {-7});
    const PlainTensor j = makeI32({1}, {9});
    const PlainTensor f2 = PlainTensor::fromF32({}, {2.0f});
    auto bytes = encodeSafetensors({{"u", &u}, {"z_f", &f}, {"i", &i}, {"j", &j}, {"a_f", &f2}}, {});
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    const StHeader h = expectValid(bytes.value());
    EXPECT_EQ(h.headerLength % 8, 0u);
    ASSERT_EQ(h.tensors.size(), 5u);
    const char* order[] = {"i", "a_f", "z_f", "j", "u"};
    for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ(h.tensors[k].name, order[k]);
    for (const StTensorInfo& t : h.tensors) {
        EXPECT_EQ((8 + h.headerLength + t.begin) % (stDTypeBits(t.dtype) / 8), 0u) << t.name;
    }
    EXPECT_TRUE(h.metadata.empty());
}

TEST(SafetensorsWriter, RejectsBadInput) {
    const PlainTensor a = PlainTensor::fromF32({2}, {1.0f, 2.0f});
    const PlainTensor wrong = PlainTensor::fromF32({2, 2}, {1.0f, 2.0f, 3.0f});
    const PlainTensor negative = PlainTensor::fromF32({-1}, {});
    const auto expectArg = [](const Result<std::vector<std::uint8_t>>& r, const std::string& text) {
        ASSERT_FALSE(r.ok()) << text;
        EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument);
        EXPECT_TRUE(contains(r.error().message, text)) << r.error().message;
    };
    expectArg(encodeSafetensors({{"a", &a}, {"a", &a}}, {}), "duplicate tensor name 'a'");
    expectArg(encodeSafetensors({{"__metadata__", &a}}, {}), "__metadata__");
    expectArg(encodeSafetensors({{"", &a}}, {}), "empty");
    expectArg(encodeSafetensors({{"w", &wrong}}, {}), "needs 4 elements but the tensor holds 3");
    expectArg(encodeSafetensors({{"n", &negative}}, {}), "negative");
    expectArg(encodeSafetensors({{"x", nullptr}}, {}), "'x'");
    expectArg(encodeSafetensors({{"bad\xff", &a}}, {}), "UTF-8");
    expectArg(encodeSafetensors({}, {{"k", "\xc0"}}), "UTF-8");
}

TEST_F(SafetensorsFileTest, RoundTripIsBitExact) {
    const PlainTensor f = PlainTensor::fromF32({2, 3}, {1.0f, -0.0f, NAN, INFINITY, 1e-42f, 3.25f});
    const PlainTensor i = PlainTensor::fromI64({3}, {INT64_MIN, -1, INT64_MAX});
    const PlainTensor u = PlainTensor::fromU8({2, 2}, {0, 1, 254, 255});
    const PlainTensor j = makeI32({1, 1, 2}, {INT32_MIN, 123456});
    const PlainTensor e = PlainTensor::fromF32({0, 5}, {});
    const std::map<std::string, std::string> meta = {
        {"format", "pt"}, {"attnscope.request", R"({"n":3,"s":"q\"\n"})"}, {"ctl", std::string("a\x01\x1f", 3)}};
    const std::vector<StWriteItem> items = {
        {"f32", &f}, {"i64", &i}, {"u8", &u}, {"i32", &j}, {"empty", &e}, {"we\"ird\nname é", &f}};

    auto encoded = encodeSafetensors(items, meta);
    ASSERT_TRUE(encoded.ok()) << encoded.error().message;
    const std::string p = path("round.safetensors");
    auto written = writeSafetensors(p, items, meta);
    ASSERT_TRUE(written.ok()) << written.error().message;
    std::ifstream in(p, std::ios::binary);
    const Bytes onDisk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(onDisk, encoded.value());
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);

    auto file = openOk(p);
    ASSERT_TRUE(file);
    EXPECT_EQ(file->header().metadata, meta);
    EXPECT_TRUE(file->header().warnings.empty());
    for (const StWriteItem& item : items) {
        auto t = file->read(item.name);
        ASSERT_TRUE(t.ok()) << t.error().message;
        EXPECT_EQ(t->dtype, item.tensor->dtype) << item.name;
        EXPECT_EQ(t->shape, item.tensor->shape) << item.name;
        ASSERT_EQ(t->byteSize(), item.tensor->byteSize()) << item.name;
        if (t->byteSize() > 0) {
            EXPECT_EQ(std::memcmp(t->data(), item.tensor->data(), t->byteSize()), 0) << item.name;
        }
    }
}

TEST_F(SafetensorsFileTest, WriteFailureNamesPathAndLeavesNothing) {
    const PlainTensor a = PlainTensor::fromF32({1}, {1.0f});
    const std::string p = m_dir + "/no-such-dir/out.safetensors";
    auto r = writeSafetensors(p, {{"a", &a}}, {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::Io);
    EXPECT_EQ(r.error().message.rfind(p + ": ", 0), 0u) << r.error().message;
    EXPECT_TRUE(contains(r.error().message, "No such file or directory")) << r.error().message;

    auto bad = writeSafetensors(path("x.safetensors"), {{"a", &a}, {"a", &a}}, {});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(::access((m_dir + "/x.safetensors").c_str(), F_OK), -1);
}

TEST(SafetensorsResult, ErrorCodeNames) {
    EXPECT_STREQ(errorCodeName(ErrorCode::InvalidArgument), "invalid argument");
    EXPECT_STREQ(errorCodeName(ErrorCode::InvalidInput), "invalid input");
    EXPECT_STREQ(errorCodeName(ErrorCode::NotFound), "not found");
    EXPECT_STREQ(errorCodeName(ErrorCode::OutOfBudget), "out of budget");
    EXPECT_STREQ(errorCodeName(ErrorCode::Cancelled), "cancelled");
    EXPECT_STREQ(errorCodeName(ErrorCode::Io), "I/O error");
    EXPECT_STREQ(errorCodeName(ErrorCode::Unsupported), "unsupported");
    EXPECT_STREQ(errorCodeName(ErrorCode::Internal), "internal error");
}

}  // namespace
}  // namespace attnscope::engine
