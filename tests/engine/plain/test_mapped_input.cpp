// A mapped file's values let go once a pass is done with them (base/runtime/mapped_pages.h): the
// process's resident memory shrinks, the values read back unchanged, and a run on a mapped input
// computes exactly what it computes on a copy.

#include "base/runtime/mapped_pages.h"

#include <attnscope/result_file.h>
#include <attnscope/safetensors.h>
#include <attnscope/torch_free_run.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace attnscope::engine {
namespace {

constexpr std::int64_t kHeads = 3, kN = 8192, kD = 16;  // a head is 512 KiB: 128 pages
// The kernel maps up to 16 pages around a faulting one (fault-around): pages of a neighbouring
// head, or of the next tensor, may be resident after a drop.
constexpr std::int64_t kFaultAroundBytes = 64 * 1024;

// The resident bytes of the mapping that holds `address` (its "Rss:" line in /proc/self/smaps).
std::int64_t residentBytesOfMapping(const void* address) {
    std::ifstream smaps("/proc/self/smaps");
    const auto at = reinterpret_cast<std::uintptr_t>(address);
    std::string line;
    bool inside = false;
    while (std::getline(smaps, line)) {
        unsigned long long begin = 0, end = 0;
        char dash = 0;
        std::istringstream range(line);
        if (line.find(':') > line.find(' ') && (range >> std::hex >> begin >> dash >> end) && dash == '-') {
            inside = at >= begin && at < end;
            continue;
        }
        if (inside && line.rfind("Rss:", 0) == 0) return std::stoll(line.substr(4)) * 1024;
    }
    return -1;
}

class MappedInput : public ::testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = ::testing::TempDir() + "attnscope-mapped-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        m_dir = tmpl;
        std::mt19937 rng(11);
        std::normal_distribution<float> draw;
        for (auto* t : {&m_q, &m_k, &m_v}) {
            std::vector<float> x(static_cast<std::size_t>(kHeads * kN * kD));
            for (float& value : x) value = draw(rng);
            *t = PlainTensor::fromF32({kHeads, kN, kD}, x);
        }
        ASSERT_TRUE(writeSafetensors(inputPath(), {{"q", &m_q}, {"k", &m_k}, {"v", &m_v}}, {}).ok());
        auto opened = SafetensorsFile::open(inputPath());
        ASSERT_TRUE(opened.ok()) << opened.error().message;
        m_file = std::move(opened.value());
    }
    void TearDown() override {
        m_file.reset();
        for (const char* name : {"qkv.safetensors", "result.safetensors"}) ::unlink((m_dir + "/" + std::string(name)).c_str());
        ::rmdir(m_dir.c_str());
    }
    std::string inputPath() const { return m_dir + "/qkv.safetensors"; }

    // A tensor of the file, read in place and marked as such (as `attnscope-cli run --qkv` does).
    SharedFloats mapped(const char* name) const {
        const StTensorInfo* info = m_file->find(name);
        SharedFloats out;
        out.shape = {kHeads, kN, kD};
        out.data = std::shared_ptr<const float>(m_file, reinterpret_cast<const float*>(m_file->bytes(*info)));
        out.mappedFile = true;
        return out;
    }

    std::string m_dir;
    PlainTensor m_q, m_k, m_v;
    std::shared_ptr<const SafetensorsFile> m_file;
};

double sumOf(const SharedFloats& t) {
    double sum = 0;
    for (std::int64_t i = 0; i < t.numel(); ++i) sum += t.data.get()[i];
    return sum;
}

TEST_F(MappedInput, DroppedPagesLeaveTheProcessAndReadBackUnchanged) {
    const SharedFloats q = mapped("q");
    const double before = sumOf(q);  // (every page read)
    const std::int64_t bytes = q.numel() * 4, perHead = kN * kD * 4;
    const std::int64_t resident = residentBytesOfMapping(q.data.get());
    ASSERT_GE(resident, bytes);

    dropMappedHead(q, 1);  // the middle head: its pages go, the rest stay
    const std::int64_t afterHead = residentBytesOfMapping(q.data.get());
    EXPECT_LE(resident - afterHead, perHead);
    EXPECT_GE(resident - afterHead, perHead - 4096);  // (the page it shares with head 2 stays)

    dropMappedPages(q, 0, q.numel());
    // (what fault-around mapped before q, the header, and after it, k's first pages)
    EXPECT_LE(residentBytesOfMapping(q.data.get()), 2 * kFaultAroundBytes + 8192);
    EXPECT_EQ(sumOf(q), before);  // faulted back from the file, bit for bit
}

TEST_F(MappedInput, OwnedValuesAreNeverDropped) {
    std::vector<float> owned(static_cast<std::size_t>(kHeads * kN * kD), 1.5f);
    SharedFloats t{{kHeads, kN, kD}, std::shared_ptr<const float>(owned.data(), [](const float*) {})};
    dropMappedPages(t, 0, t.numel());  // (not a mapped file: a no-op, the values are kept)
    EXPECT_EQ(sumOf(t), 1.5 * static_cast<double>(t.numel()));
}

// Each variant family's head loop lets a head go when done (forEachHead: linear; the pattern
// kernel's items: longformer); the outputs equal those of a run on copies, bit for bit, and the
// result file written from the mapped q and k holds them unchanged.
TEST_F(MappedInput, RunsOnAMappedInputEqualRunsOnCopiesAndLetTheHeadsGo) {
    for (const char* variant : {"linear", "longformer"}) {
        SCOPED_TRACE(variant);
        RunRequest onCopies;
        onCopies.source = QkvTensors{m_q, m_k, m_v};
        onCopies.variants.push_back(VariantRequest{variant, {}});
        RunRequest onMapping = onCopies;
        onMapping.source = SharedQkv{mapped("q"), mapped("k"), mapped("v")};
        TorchFreeRunOptions options;
        options.threads = 2;
        options.weightsOnDemand = true;
        auto expected = runTorchFree(onCopies, options);
        ASSERT_TRUE(expected.ok()) << expected.error().message;
        auto got = runTorchFree(onMapping, options);
        ASSERT_TRUE(got.ok()) << got.error().message;
        const AttentionResult& a = (*expected)->results.at(0);
        const AttentionResult& b = (*got)->results.at(0);
        ASSERT_EQ(a.output.numel(), b.output.numel());
        for (std::int64_t i = 0; i < a.output.numel(); ++i)
            ASSERT_EQ(a.output[static_cast<std::size_t>(i)], b.output[static_cast<std::size_t>(i)]) << "at " << i;
        // every head was let go after its run (at most fault-around pages at the heads' borders)
        const std::int64_t mappedBytes = 3 * kHeads * kN * kD * 4, allowance = 3 * kHeads * kFaultAroundBytes + 8192;
        EXPECT_LE(residentBytesOfMapping((*got)->q.data.get()), allowance) << "of a mapping of " << mappedBytes << " bytes";

        const std::string resultPath = m_dir + "/result.safetensors";
        ASSERT_TRUE(writeResultFile(resultPath, **got, 0, ResultFileOptions{0}).ok());
        EXPECT_LE(residentBytesOfMapping((*got)->q.data.get()), allowance);  // (q and k written a chunk at a time)
        auto reread = readResultFile(resultPath);
        ASSERT_TRUE(reread.ok()) << reread.error().message;
        const SharedFloats& q = (*reread)->q;
        ASSERT_EQ(q.numel(), kHeads * kN * kD);
        EXPECT_TRUE(q.mappedFile);
        for (std::int64_t i = 0; i < q.numel(); ++i) ASSERT_EQ(q.data.get()[i], m_q.f32[static_cast<std::size_t>(i)]) << "at " << i;
    }
}

}  // namespace
}  // namespace attnscope::engine
