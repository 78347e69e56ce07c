// Transformer-XL's evaluation speed (Dai et al. 2019, Table 9): per predicted token, a model
// that reads the text in segments with cached memory against the same model recomputing a sliding
// window of the same attention length from scratch for every token (a vanilla model's
// evaluation). Both through the engine's forward pass, in this process, one thread per op as set.
//
//   bench_transfo_xl_eval [--lengths 64,128,256,512] [--segment 16] [--tokens 1024] [--windows 32]
//
// The text read with memory is at least 4 attention lengths long (most segments see a full memory).
//
// Prints a Markdown table: attention length, ms per token for each, the ratio.

#include <attnscope/engine.h>
#include <attnscope/safetensors.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace attnscope::engine;

namespace {

constexpr std::int64_t kD = 128, kHeads = 4, kHeadDim = 32, kInner = 512, kLayers = 4;

std::map<std::string, PlainTensor> randomWeights() {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    std::map<std::string, PlainTensor> t;
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float offset = 0.0f) {
        PlainTensor p = PlainTensor::zeros(DType::F32, shape);
        for (auto& x : p.f32) x = offset + normal(rng);
        t["transformer." + name] = std::move(p);
    };
    add("word_emb.emb_layers.0.weight", {256, kD});
    for (std::int64_t l = 0; l < kLayers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        add(p + "dec_attn.qkv_net.weight", {3 * kHeads * kHeadDim, kD});
        add(p + "dec_attn.r_net.weight", {kHeads * kHeadDim, kD});
        add(p + "dec_attn.o_net.weight", {kD, kHeads * kHeadDim});
        add(p + "dec_attn.r_w_bias", {kHeads, kHeadDim});
        add(p + "dec_attn.r_r_bias", {kHeads, kHeadDim});
        add(p + "dec_attn.layer_norm.weight", {kD}, 1.0f);
        add(p + "dec_attn.layer_norm.bias", {kD});
        add(p + "pos_ff.CoreNet.0.weight", {kInner, kD});
        add(p + "pos_ff.CoreNet.0.bias", {kInner});
        add(p + "pos_ff.CoreNet.3.weight", {kD, kInner});
        add(p + "pos_ff.CoreNet.3.bias", {kD});
        add(p + "pos_ff.layer_norm.weight", {kD}, 1.0f);
        add(p + "pos_ff.layer_norm.bias", {kD});
    }
    return t;
}

void writeModel(const fs::path& dir, std::int64_t segment, std::int64_t memory, const std::map<std::string, PlainTensor>& weights) {
    fs::create_directories(dir);
    std::ofstream(dir / "config.json") << "{\"model_type\": \"transfo-xl\", \"vocab_size\": 256, \"d_model\": " << kD
                                       << ", \"d_embed\": " << kD << ", \"n_head\": " << kHeads << ", \"d_head\": " << kHeadDim
                                       << ", \"d_inner\": " << kInner << ", \"n_layer\": " << kLayers << ", \"mem_len\": " << memory
                                       << ", \"tgt_len\": " << segment << ", \"clamp_len\": -1, \"same_length\": false"
                                       << ", \"untie_r\": true, \"pre_lnorm\": false, \"div_val\": 1, \"cutoffs\": []}";
    std::vector<StWriteItem> items;
    for (const auto& [name, t] : weights) items.push_back(StWriteItem(name, &t));
    if (!writeSafetensors((dir / "model.safetensors").string(), items, {{"format", "pt"}}))
        throw std::runtime_error("cannot write " + dir.string());
}

double seconds(const std::function<void()>& work) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<std::int64_t> parseList(const std::string& text) {
    std::vector<std::int64_t> out;
    std::stringstream s(text);
    for (std::string item; std::getline(s, item, ',');) out.push_back(std::stoll(item));
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::int64_t> lengths = {64, 128, 256, 512};
    std::int64_t segment = 16, tokens = 1024, windows = 32;
    bool smoke = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--lengths") lengths = parseList(next());
        else if (a == "--segment") segment = std::stoll(next());
        else if (a == "--tokens") tokens = std::stoll(next());
        else if (a == "--windows") windows = std::stoll(next());
        else if (a == "--smoke") smoke = true;
        else {
            std::fprintf(stderr, "usage: bench_transfo_xl_eval [--lengths A,B] [--segment L] [--tokens N] [--windows K] [--smoke]\n");
            return 2;
        }
    }
    if (smoke) lengths = {32}, tokens = 64, windows = 4;
    auto engine = Engine::create();
    if (!engine) return 1;
    const auto weights = randomWeights();
    const fs::path root = fs::temp_directory_path() / ("attnscope-bench-xl-" + std::to_string(::getpid()));
    std::mt19937 rng(3);
    // (at least 4 attention lengths of text, so that most segments see a full memory)
    const std::int64_t longest = *std::max_element(lengths.begin(), lengths.end());
    std::vector<std::int64_t> text(static_cast<std::size_t>(std::max(tokens, 4 * longest) + longest));
    for (auto& id : text) id = 32 + static_cast<std::int64_t>(rng() % 90);

    std::printf("| attention length | Transformer-XL ms/token (segment %lld, memory = length) | vanilla ms/token (window recomputed) | vanilla / XL |\n",
                static_cast<long long>(segment));
    std::printf("|---:|---:|---:|---:|\n");
    for (std::int64_t length : lengths) {
        // Transformer-XL: the text once, in segments, memory M = attention length
        writeModel(root / "xl", segment, length, weights);
        if (!engine.value()->openModel((root / "xl").string())) return 1;
        const std::int64_t read = std::max(tokens, 4 * length);
        ModelInput all;
        all.ids.assign(text.begin(), text.begin() + read);
        all.keepAttention = false;
        const double xl = seconds([&] {
            if (!engine.value()->forwardModel(all)) std::exit(1);
        }) / static_cast<double>(read);
        // vanilla: for each predicted token, the window of `length` tokens before it from scratch
        writeModel(root / "vanilla", length, 0, weights);
        if (!engine.value()->openModel((root / "vanilla").string())) return 1;
        const double vanilla = seconds([&] {
            for (std::int64_t t = 0; t < windows; ++t) {
                ModelInput window;
                window.ids.assign(text.begin() + t, text.begin() + t + length);
                window.keepAttention = false;
                if (!engine.value()->forwardModel(window)) std::exit(1);
            }
        }) / static_cast<double>(windows);
        std::printf("| %lld | %.3f | %.3f | %.1f× |\n", static_cast<long long>(length), 1e3 * xl, 1e3 * vanilla, vanilla / xl);
    }
    fs::remove_all(root);
    return 0;
}
