// measureTransfoXlEvalSpeed (attnscope/transfo_xl_eval_speed.h): two model folders of the same
// random weights in a scratch directory — one reading segments with memory M = the attention
// length, one with a segment of that length and no memory — timed through a scratch Engine.

#include <attnscope/engine.h>
#include <attnscope/safetensors.h>
#include <attnscope/transfo_xl_eval_speed.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <unistd.h>

namespace attnscope::engine {
namespace {

namespace fs = std::filesystem;
using S = EvalSpeedSettings;

std::map<std::string, PlainTensor> randomWeights() {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    std::map<std::string, PlainTensor> t;
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float offset = 0.0f) {
        PlainTensor p = PlainTensor::zeros(DType::F32, std::move(shape));
        for (auto& x : p.f32) x = offset + normal(rng);
        t["transformer." + name] = std::move(p);
    };
    add("word_emb.emb_layers.0.weight", {256, S::kDModel});
    for (std::int64_t l = 0; l < S::kLayers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        add(p + "dec_attn.qkv_net.weight", {3 * S::kHeads * S::kHeadDim, S::kDModel});
        add(p + "dec_attn.r_net.weight", {S::kHeads * S::kHeadDim, S::kDModel});
        add(p + "dec_attn.o_net.weight", {S::kDModel, S::kHeads * S::kHeadDim});
        add(p + "dec_attn.r_w_bias", {S::kHeads, S::kHeadDim});
        add(p + "dec_attn.r_r_bias", {S::kHeads, S::kHeadDim});
        add(p + "dec_attn.layer_norm.weight", {S::kDModel}, 1.0f);
        add(p + "dec_attn.layer_norm.bias", {S::kDModel});
        add(p + "pos_ff.CoreNet.0.weight", {S::kInner, S::kDModel});
        add(p + "pos_ff.CoreNet.0.bias", {S::kInner});
        add(p + "pos_ff.CoreNet.3.weight", {S::kDModel, S::kInner});
        add(p + "pos_ff.CoreNet.3.bias", {S::kDModel});
        add(p + "pos_ff.layer_norm.weight", {S::kDModel}, 1.0f);
        add(p + "pos_ff.layer_norm.bias", {S::kDModel});
    }
    return t;
}

bool writeModel(const fs::path& dir, std::int64_t segment, std::int64_t memory, const std::map<std::string, PlainTensor>& weights) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return false;
    std::ofstream(dir / "config.json") << "{\"model_type\": \"transfo-xl\", \"vocab_size\": 256, \"d_model\": " << S::kDModel
                                       << ", \"d_embed\": " << S::kDModel << ", \"n_head\": " << S::kHeads
                                       << ", \"d_head\": " << S::kHeadDim << ", \"d_inner\": " << S::kInner
                                       << ", \"n_layer\": " << S::kLayers << ", \"mem_len\": " << memory
                                       << ", \"tgt_len\": " << segment << ", \"clamp_len\": -1, \"same_length\": false"
                                       << ", \"untie_r\": true, \"pre_lnorm\": false, \"div_val\": 1, \"cutoffs\": []}";
    std::vector<StWriteItem> items;
    for (const auto& [name, t] : weights) items.push_back(StWriteItem(name, &t));
    return static_cast<bool>(writeSafetensors((dir / "model.safetensors").string(), items, {{"format", "pt"}}));
}

/// Removes the scratch folder however the measurement ends.
struct ScratchDir {
    fs::path path;
    ~ScratchDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::optional<Error> checkSettings(const EvalSpeedSettings& s, std::int64_t length) {
    if (length < 1 || length > S::kMaxLength)
        return makeError(ErrorCode::InvalidArgument,
                         "attention length " + std::to_string(length) + " is outside 1 … " + std::to_string(S::kMaxLength));
    if (s.segment < 1 || s.segment > S::kMaxLength)
        return makeError(ErrorCode::InvalidArgument, "the segment must be 1 … " + std::to_string(S::kMaxLength));
    if (s.tokens < 1 || s.tokens > 16 * S::kMaxLength)
        return makeError(ErrorCode::InvalidArgument, "the tokens read must be 1 … " + std::to_string(16 * S::kMaxLength));
    if (s.windows < 1 || s.windows > 4096) return makeError(ErrorCode::InvalidArgument, "the windows must be 1 … 4096");
    return std::nullopt;
}

}  // namespace

Result<EvalSpeedPoint> measureTransfoXlEvalSpeed(const EvalSpeedSettings& settings, std::int64_t length,
                                                 const ProgressFn& progress) {
    if (auto bad = checkSettings(settings, length)) return *bad;
    auto created = Engine::create();
    if (!created) return created.error();
    Engine& engine = *created.value();
    const auto weights = randomWeights();
    ScratchDir root{fs::temp_directory_path() / ("attnscope-xl-speed-" + std::to_string(::getpid()) + "-" + std::to_string(length))};
    // at least 4 attention lengths read with memory, so most segments see a full memory
    const std::int64_t read = std::max(settings.tokens, 4 * length);
    std::mt19937 rng(3);
    std::vector<std::int64_t> text(static_cast<std::size_t>(read + settings.windows + length));
    for (auto& id : text) id = 32 + static_cast<std::int64_t>(rng() % 90);
    const auto cancelled = [&] { return progress && !progress(Progress{"eval-speed", 0, 1}); };

    EvalSpeedPoint point;
    point.length = length;
    if (!writeModel(root.path / "xl", settings.segment, length, weights))
        return makeError(ErrorCode::Io, "cannot write the scratch model under " + root.path.string());
    if (auto opened = engine.openModel((root.path / "xl").string()); !opened) return opened.error();
    ModelInput all;
    all.ids.assign(text.begin(), text.begin() + read);
    all.keepAttention = false;
    auto start = std::chrono::steady_clock::now();
    if (auto pass = engine.forwardModel(all, progress); !pass) return pass.error();
    point.memorySecondsPerToken = secondsSince(start) / static_cast<double>(read);

    if (!writeModel(root.path / "vanilla", length, 0, weights))
        return makeError(ErrorCode::Io, "cannot write the scratch model under " + root.path.string());
    if (auto opened = engine.openModel((root.path / "vanilla").string()); !opened) return opened.error();
    start = std::chrono::steady_clock::now();
    for (std::int64_t t = 0; t < settings.windows; ++t) {
        if (cancelled()) return makeError(ErrorCode::Cancelled, "cancelled");
        ModelInput window;
        window.ids.assign(text.begin() + t, text.begin() + t + length);
        window.keepAttention = false;
        if (auto pass = engine.forwardModel(window); !pass) return pass.error();
    }
    point.recomputeSecondsPerToken = secondsSince(start) / static_cast<double>(settings.windows);
    return point;
}

}  // namespace attnscope::engine
