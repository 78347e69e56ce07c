// AtomicFile over kDirectWorthyBytes: written straight to the disk (base/api/direct_writes.h) where
// the filesystem allows it. The file must hold exactly the bytes written, whatever their count and
// however they were split, and an abandoned one must leave nothing behind.
#include "base/api/atomic_file.h"
#include "base/api/direct_writes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace fs = std::filesystem;
using attnscope::engine::AtomicFile;
using attnscope::engine::DirectWrites;

namespace {

fs::path freshFolder(const std::string& name) {
    const fs::path dir = fs::path(::testing::TempDir()) / ("attnscope_large_atomic_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// Bytes that differ at every offset of a block, so that a block written twice or out of place shows.
std::vector<std::uint8_t> patternBytes(std::size_t count) {
    std::vector<std::uint8_t> bytes(count);
    std::uint32_t x = 12345;
    for (auto& b : bytes) {
        x = x * 1664525u + 1013904223u;
        b = static_cast<std::uint8_t>(x >> 24);
    }
    return bytes;
}

std::vector<std::uint8_t> slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(LargeAtomicFile, HoldsExactlyTheBytesWrittenInUnevenPieces) {
    const fs::path dir = freshFolder("exact");
    const fs::path path = dir / "result.safetensors";
    // Two whole 8 MiB buffers, then a tail that is not a multiple of any block.
    const std::size_t total = (17u << 20) + 12345;
    const std::vector<std::uint8_t> bytes = patternBytes(total);
    auto file = AtomicFile::create(path.string(), total);
    ASSERT_TRUE(file) << file.error().message;
    const std::size_t pieces[] = {8, 1, 4093, 3u << 20, 7u << 20, 5u << 20};  // (15 MiB + 4102)
    std::size_t at = 0;
    for (std::size_t piece : pieces) {
        ASSERT_TRUE(file.value().write(bytes.data() + at, piece));
        at += piece;
    }
    ASSERT_TRUE(file.value().write(bytes.data() + at, total - at));
    ASSERT_TRUE(file.value().commit());
    EXPECT_EQ(fs::file_size(path), total);
    EXPECT_TRUE(slurp(path) == bytes);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(LargeAtomicFile, ReplacesALargerOlderFileWithNoTailOfIt) {
    const fs::path dir = freshFolder("shorter");
    const fs::path path = dir / "result.safetensors";
    for (std::size_t total : {std::size_t{(20u << 20) + 3}, std::size_t{(16u << 20) + 1}}) {
        const std::vector<std::uint8_t> bytes = patternBytes(total);
        auto file = AtomicFile::create(path.string(), total);
        ASSERT_TRUE(file);
        ASSERT_TRUE(file.value().write(bytes.data(), bytes.size()));
        ASSERT_TRUE(file.value().commit());
        EXPECT_EQ(fs::file_size(path), total);
        EXPECT_TRUE(slurp(path) == bytes);
    }
}

TEST(LargeAtomicFile, AnAbandonedFileLeavesNothingAndTheOlderFileUntouched) {
    const fs::path dir = freshFolder("abandon");
    const fs::path path = dir / "result.safetensors";
    { std::ofstream(path) << "older"; }
    {
        auto file = AtomicFile::create(path.string(), 32u << 20);
        ASSERT_TRUE(file);
        const std::vector<std::uint8_t> bytes = patternBytes(9u << 20);
        ASSERT_TRUE(file.value().write(bytes.data(), bytes.size()));
    }  // (destroyed without commit, as a cancelled run is)
    EXPECT_EQ(fs::file_size(path), 5u);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(DirectWrites, PadsTheLastBlockAndCountsOnlyTheBytesAppended) {
    const fs::path path = freshFolder("direct") / "blocks.bin";
    { std::ofstream(path.string()); }
    auto direct = DirectWrites::open(path.string());
    if (!direct) GTEST_SKIP() << "this filesystem takes no direct writes (AtomicFile writes through the cache)";
    const std::vector<std::uint8_t> bytes = patternBytes(5000);
    ASSERT_TRUE(direct->append(bytes.data(), bytes.size()));
    EXPECT_EQ(direct->total(), 5000u);
    ASSERT_TRUE(direct->finish());
    EXPECT_EQ(direct->total(), 5000u);
    direct.reset();
    // The padding reaches the next whole 4 KiB block; the caller truncates it.
    const std::vector<std::uint8_t> onDisk = slurp(path);
    ASSERT_EQ(onDisk.size(), 8192u);
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), onDisk.begin()));
    EXPECT_TRUE(std::all_of(onDisk.begin() + 5000, onDisk.end(), [](std::uint8_t b) { return b == 0; }));
}
