// The launcher's own runs (attnscope/torch_free_run.h): explicit q, k, v with a torch-free variant
// run without attnscope-cli-torch (so without LibTorch), and write what the engine's run writes.

#include "cli_test_support.h"

#include <attnscope/safetensors.h>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>

using namespace attnscope::engine;

namespace {

// A q, k, v file of 2 heads, n tokens, d = 16; the last `padded` keys padded.
std::string writeQkv(const std::string& name, std::int64_t n, std::int64_t padded) {
    PlainTensor q = randomTensor(2, n, 16, 31), k = randomTensor(2, n, 16, 32), v = randomTensor(2, n, 16, 33);
    std::vector<std::uint8_t> pad(static_cast<std::size_t>(n), 0);
    for (std::int64_t j = n - padded; j < n; ++j) pad[static_cast<std::size_t>(j)] = 1;
    PlainTensor keyPadding = PlainTensor::fromU8({n}, pad);
    const std::string path = tempPath(name);
    std::vector<StWriteItem> tensors{{"q", &q}, {"k", &k}, {"v", &v}};
    if (padded > 0) tensors.push_back({"key_padding", &keyPadding});
    EXPECT_TRUE(writeSafetensors(path, tensors, {}).ok());
    return path;
}

// The result's record without its timings (the only thing two runs may differ in).
nlohmann::json withoutTimings(nlohmann::json j) {
    if (j.is_object()) {
        j.erase("seconds");
        for (auto& [key, value] : j.items()) value = withoutTimings(value);
    } else if (j.is_array()) {
        for (auto& value : j) value = withoutTimings(value);
    }
    return j;
}

}  // namespace

TEST(CliTorchFree, TheLauncherAloneRunsTorchFreeVariantsAndHandsTheOthersOn) {
    const std::string input = writeQkv("tf_alone.safetensors", 64, 0);
    // The launcher copied where no attnscope-cli-torch lies beside it.
    const std::filesystem::path dir = tempPath("tf_alone_dir");
    std::filesystem::create_directories(dir);
    const std::filesystem::path launcher = dir / "attnscope-cli";
    std::filesystem::copy_file(ATTNSCOPE_CLI_PATH, launcher, std::filesystem::copy_options::overwrite_existing);
    const std::string out = tempPath("tf_alone_out.safetensors");
    for (const char* variant : {"longformer --param window=4", "sparse_strided --param stride=8", "sparse_fixed --param block=8",
                                "bigbird --param block=8", "local2d", "linformer --param k=16", "linear", "performer", "reformer --param chunk_len=8", "routing --param window_size=16", "full", "topk --param k=8",
                                "entmax", "transformer_xl --param segment=16 --param memory=16", "star"}) {
        std::remove(out.c_str());
        auto r = runProgram(launcher.string(), std::string("run --variant ") + variant + " --qkv " + input + " --out " + out + " --quiet");
        EXPECT_EQ(r.status, 0) << variant << ": " << r.stderrText;
        EXPECT_TRUE(SafetensorsFile::open(out).ok()) << variant;
    }
    // Text needs LibTorch (its random projections): the launcher hands it on, and says so when it cannot.
    std::remove(out.c_str());
    auto r = runProgram(launcher.string(), "run --variant full --text \"a b c\" --out " + out + " --quiet");
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.stderrText.find("cannot start"), std::string::npos) << r.stderrText;
    EXPECT_NE(r.stderrText.find("attnscope-cli-torch"), std::string::npos) << r.stderrText;
    EXPECT_FALSE(std::filesystem::exists(out));
    std::filesystem::remove_all(dir);
}

TEST(CliTorchFree, WritesExactlyWhatTheEngineWrites) {
    // (odd n, padded keys, causal forms, dense weights within the dense limit, the listed
    // pattern: the launcher's results come without weights, which its writer makes for them)
    const std::string input = writeQkv("tf_same.safetensors", 77, 5);
    const std::string torchProgram = (std::filesystem::path(ATTNSCOPE_CLI_PATH).parent_path() / "attnscope-cli-torch").string();
    const std::string a = tempPath("tf_launcher.safetensors"), b = tempPath("tf_engine.safetensors");
    for (const char* variant : {"longformer --param window=5 --param global=0,3", "longformer --param window=3 --causal",
                                "sparse_strided --param stride=7", "sparse_fixed --param block=8 --param causal=false",
                                "bigbird --param block=8 --param random=2 --param pad=true", "bigbird --param block=7 --param random=1 --write-pattern",
                                "routing --param window_size=16 --write-pattern --dense-limit 10", "local2d --causal --param width=11", "linear", "linear --causal",
                                "performer --param nb_features=24", "performer --causal --param nb_features=24",
                                "linformer --param k=16 --param spectrum=true", "linformer --param k=20 --param sharing=none",
                                "reformer --param n_hashes=2 --param chunk_len=8 --param n_buckets=4",
                                "reformer --param n_hashes=3 --param chunk_len=8 --param n_buckets=4 --causal",
                                "routing --param window_size=16", "routing --param window_size=16 --causal"}) {
        const std::string args = std::string("run --variant ") + variant + " --qkv " + input + " --seed 9 --quiet --out ";
        auto ra = runProgram(ATTNSCOPE_CLI_PATH, args + a);
        auto rb = runProgram("OMP_WAIT_POLICY=PASSIVE " + torchProgram, args + b);  // (no re-run to set it)
        ASSERT_EQ(ra.status, 0) << variant << ": " << ra.stderrText;
        ASSERT_EQ(rb.status, 0) << variant << ": " << rb.stderrText;
        EXPECT_EQ(ra.stderrText, rb.stderrText) << variant;
        auto fa = SafetensorsFile::open(a);
        auto fb = SafetensorsFile::open(b);
        ASSERT_TRUE(fa.ok() && fb.ok()) << variant;
        const auto& ta = (*fa)->header().tensors;
        const auto& tb = (*fb)->header().tensors;
        ASSERT_EQ(ta.size(), tb.size()) << variant;
        for (const auto& info : ta) {
            auto x = (*fa)->read(info.name);
            auto y = (*fb)->read(info.name);
            ASSERT_TRUE(x.ok() && y.ok()) << variant << " " << info.name;
            EXPECT_EQ(x->shape, y->shape) << variant << " " << info.name;
            EXPECT_TRUE(x->f32 == y->f32 && x->i64 == y->i64 && x->i32 == y->i32 && x->u8 == y->u8) << variant << " " << info.name;
        }
        const auto& ma = (*fa)->header().metadata;
        const auto& mb = (*fb)->header().metadata;
        EXPECT_EQ(ma.at("attnscope.request"), mb.at("attnscope.request")) << variant;
        EXPECT_EQ(withoutTimings(nlohmann::json::parse(ma.at("attnscope.result"))),
                  withoutTimings(nlohmann::json::parse(mb.at("attnscope.result"))))
            << variant;
    }
}
