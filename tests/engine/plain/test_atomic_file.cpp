// writeFileAtomically: the whole file or nothing, an older file untouched on failure.
#include <attnscope/atomic_file.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using attnscope::engine::ErrorCode;
using attnscope::engine::writeFileAtomically;

namespace {

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

fs::path freshFolder(const std::string& name) {
    const fs::path dir = fs::path(::testing::TempDir()) / ("attnscope_atomic_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

}  // namespace

TEST(AtomicFile, WritesTheWholeFileAndReplacesAnOlderOne) {
    const fs::path dir = freshFolder("replace");
    const fs::path path = dir / "table.csv";
    ASSERT_TRUE(writeFileAtomically(path.string(), "old\n"));
    ASSERT_TRUE(writeFileAtomically(path.string(), std::string(100000, 'x')));
    EXPECT_EQ(slurp(path), std::string(100000, 'x'));
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::others_read, fs::perms::others_read);
    // No temporary file is left beside it.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(AtomicFile, AFolderThatIsNotThereIsAnIoErrorNamingThePath) {
    const fs::path path = freshFolder("missing") / "no-such-folder" / "table.csv";
    const auto written = writeFileAtomically(path.string(), "data");
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().code, ErrorCode::Io);
    EXPECT_NE(written.error().message.find(path.string()), std::string::npos) << written.error().message;
    EXPECT_FALSE(fs::exists(path));
}

TEST(AtomicFile, ATargetThatIsAFolderLeavesItAndNoTemporaryFile) {
    const fs::path dir = freshFolder("folder");
    const fs::path target = dir / "out.md";
    fs::create_directories(target);
    const auto written = writeFileAtomically(target.string(), "table");
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().code, ErrorCode::Io);
    EXPECT_TRUE(fs::is_directory(target));
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}
