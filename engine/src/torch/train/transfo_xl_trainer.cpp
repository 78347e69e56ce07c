#include "torch/train/transfo_xl_trainer.h"

#include "io/families/transfo_xl/transfo_xl.h"

#include <attnscope/safetensors.h>

#include "torch/tensors/to_plain.h"
#include "torch/forwards/transfo_xl/transfo_xl_forward_positions.h"
#include "base/api/engine_error.h"
#include "torch/train/adam.h"
#include "torch/train/one_thread.h"
#include "torch/train/training_bytes.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>

namespace attnscope::engine {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kVocab = 256;
constexpr double kLayerNormEps = 1e-5;
constexpr std::int64_t kEvalSegments = 8;

// The model's parameters in Hugging Face's TransfoXL names (without "transformer."), untie_r,
// post-LN, no clamp; the output layer is tied to the embedding plus `crit.out_layers.0.bias`.
class TinyTransfoXl {
public:
    TinyTransfoXl(const TrainOptions& o, std::int64_t memory, std::mt19937_64& rng)
        : m_d(o.dim), m_heads(o.heads), m_dh(o.dim / o.heads), m_layers(o.layers), m_memory(memory) {
        std::normal_distribution<float> dist(0.0f, 0.02f);
        auto normal = [&](std::vector<std::int64_t> shape) {
            at::Tensor t = at::empty(shape, at::kFloat);
            float* p = t.data_ptr<float>();
            for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
            return t;
        };
        auto add = [&](const std::string& name, at::Tensor t) { m_params[name] = t.requires_grad_(true); };
        const std::int64_t hd = m_heads * m_dh;
        add("word_emb.emb_layers.0.weight", normal({kVocab, m_d}));
        for (std::int64_t l = 0; l < m_layers; ++l) {
            const std::string p = "layers." + std::to_string(l) + ".";
            add(p + "dec_attn.qkv_net.weight", normal({3 * hd, m_d}));
            add(p + "dec_attn.r_net.weight", normal({hd, m_d}));
            add(p + "dec_attn.o_net.weight", normal({m_d, hd}));
            add(p + "dec_attn.r_w_bias", normal({m_heads, m_dh}));
            add(p + "dec_attn.r_r_bias", normal({m_heads, m_dh}));
            add(p + "dec_attn.layer_norm.weight", at::ones({m_d}, at::kFloat));
            add(p + "dec_attn.layer_norm.bias", at::zeros({m_d}, at::kFloat));
            add(p + "pos_ff.CoreNet.0.weight", normal({4 * m_d, m_d}));
            add(p + "pos_ff.CoreNet.0.bias", at::zeros({4 * m_d}, at::kFloat));
            add(p + "pos_ff.CoreNet.3.weight", normal({m_d, 4 * m_d}));
            add(p + "pos_ff.CoreNet.3.bias", at::zeros({m_d}, at::kFloat));
            add(p + "pos_ff.layer_norm.weight", at::ones({m_d}, at::kFloat));
            add(p + "pos_ff.layer_norm.bias", at::zeros({m_d}, at::kFloat));
        }
        add("crit.out_layers.0.bias", at::zeros({kVocab}, at::kFloat));
    }

    std::map<std::string, at::Tensor>& params() { return m_params; }
    std::int64_t count() const {
        std::int64_t total = 0;
        for (const auto& [name, t] : m_params) total += t.numel();
        return total;
    }

    /// The last hidden states [batch, q, d] of one segment `ids` [batch, q]; `mems` (one per layer,
    /// [batch, ≤ M, d], empty at first) are replaced by the new memories, detached.
    at::Tensor segment(const at::Tensor& ids, std::vector<at::Tensor>& mems) const {
        const std::int64_t batch = ids.size(0), q = ids.size(1), hd = m_heads * m_dh;
        const double scale = 1.0 / std::sqrt(static_cast<double>(m_dh));
        auto P = [&](const std::string& name) -> const at::Tensor& { return m_params.at(name); };
        at::Tensor h = at::embedding(P("word_emb.emb_layers.0.weight"), ids) * std::sqrt(static_cast<double>(m_d));
        std::vector<at::Tensor> inputs;
        if (mems.empty()) mems.assign(static_cast<std::size_t>(m_layers), at::Tensor());
        for (std::int64_t l = 0; l < m_layers; ++l) {
            const std::string p = "layers." + std::to_string(l) + ".";
            const at::Tensor& mem = mems[static_cast<std::size_t>(l)];
            inputs.push_back(h);
            const at::Tensor cat = mem.defined() ? at::cat({mem, h}, 1) : h;
            const std::int64_t klen = cat.size(1), mlen = klen - q;
            auto parts = at::linear(cat, P(p + "dec_attn.qkv_net.weight")).split(hd, 2);
            auto perHead = [&](const at::Tensor& t) { return t.reshape({batch, t.size(1), m_heads, m_dh}).transpose(1, 2); };
            const at::Tensor query = perHead(parts[0].narrow(1, mlen, q)), key = perHead(parts[1]), value = perHead(parts[2]);
            const at::Tensor r = at::linear(families::transfo_xl::segmentEncoding(klen, m_d, -1), P(p + "dec_attn.r_net.weight"))
                                     .reshape({klen, m_heads, m_dh})
                                     .transpose(0, 1);
            const at::Tensor ac = at::matmul(query + P(p + "dec_attn.r_w_bias").unsqueeze(1), key.transpose(2, 3));
            const at::Tensor bd = at::matmul(query + P(p + "dec_attn.r_r_bias").unsqueeze(1), r.transpose(1, 2))
                                      .gather(3, families::transfo_xl::relativeColumns(q, mlen).expand({batch, m_heads, q, klen}));
            const at::Tensor scores = ((ac + bd) * scale)
                                          .masked_fill(families::transfo_xl::segmentMask(q, mlen, m_memory, false),
                                                       -std::numeric_limits<float>::infinity());
            const at::Tensor context = at::matmul(at::softmax(scores, 3), value).transpose(1, 2).reshape({batch, q, hd});
            const at::Tensor out = at::layer_norm(h + at::linear(context, P(p + "dec_attn.o_net.weight")), {m_d},
                                                  P(p + "dec_attn.layer_norm.weight"), P(p + "dec_attn.layer_norm.bias"),
                                                  kLayerNormEps);
            const at::Tensor inner = at::relu(at::linear(out, P(p + "pos_ff.CoreNet.0.weight"), P(p + "pos_ff.CoreNet.0.bias")));
            h = at::layer_norm(out + at::linear(inner, P(p + "pos_ff.CoreNet.3.weight"), P(p + "pos_ff.CoreNet.3.bias")),
                               {m_d}, P(p + "pos_ff.layer_norm.weight"), P(p + "pos_ff.layer_norm.bias"), kLayerNormEps);
        }
        // new_mem = cat(mem, hids)[−M:] under stop-gradient (_update_mems)
        for (std::int64_t l = 0; l < m_layers; ++l) {
            at::Tensor& mem = mems[static_cast<std::size_t>(l)];
            const at::Tensor all = mem.defined() ? at::cat({mem, inputs[static_cast<std::size_t>(l)].detach()}, 1)
                                                 : inputs[static_cast<std::size_t>(l)].detach();
            mem = m_memory > 0 ? all.narrow(1, std::max<std::int64_t>(0, all.size(1) - m_memory),
                                            std::min(all.size(1), m_memory))
                               : at::Tensor();
        }
        return h;
    }

    at::Tensor logits(const at::Tensor& hidden) const {
        return at::linear(hidden, m_params.at("word_emb.emb_layers.0.weight"), m_params.at("crit.out_layers.0.bias"));
    }

private:
    std::int64_t m_d, m_heads, m_dh, m_layers, m_memory;
    std::map<std::string, at::Tensor> m_params;
};

at::Tensor bytesOf(const std::string& text, std::size_t begin, std::size_t count) {
    at::Tensor t = at::empty({static_cast<std::int64_t>(count)}, at::kLong);
    auto* p = t.data_ptr<std::int64_t>();
    for (std::size_t i = 0; i < count; ++i) p[i] = static_cast<unsigned char>(text[begin + i]);
    return t;
}

// Loss and accuracy over up to kEvalSegments segments of the held-out text, read with memory.
std::pair<double, double> evaluate(const TinyTransfoXl& model, const std::string& held, std::int64_t L) {
    at::NoGradGuard noGrad;
    std::vector<at::Tensor> mems;
    double lossSum = 0, right = 0, count = 0;
    for (std::int64_t s = 0; s < kEvalSegments && (s + 1) * L + 1 <= static_cast<std::int64_t>(held.size()); ++s) {
        const at::Tensor input = bytesOf(held, static_cast<std::size_t>(s * L), static_cast<std::size_t>(L)).unsqueeze(0);
        const at::Tensor target = bytesOf(held, static_cast<std::size_t>(s * L + 1), static_cast<std::size_t>(L));
        const at::Tensor logits = model.logits(model.segment(input, mems)).squeeze(0);
        lossSum += at::cross_entropy_loss(logits, target).item<double>() * static_cast<double>(L);
        right += logits.argmax(1).eq(target).sum().item<double>();
        count += static_cast<double>(L);
    }
    return {lossSum / std::max(count, 1.0), right / std::max(count, 1.0)};
}

void writeText(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw EngineError(ErrorCode::Io, path.string() + ": cannot write");
}

void writeFolder(const TrainOptions& o, std::int64_t memory, TinyTransfoXl& model, const TrainReport& report) {
    const fs::path dir(o.out);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw EngineError(ErrorCode::Io, o.out + ": cannot create the folder: " + ec.message());
    const nlohmann::json config = {
        {"model_type", families::transfo_xl::kModelType}, {"architectures", {"TransfoXLLMHeadModel"}},
        {"vocab_size", kVocab}, {"d_model", o.dim}, {"d_embed", o.dim}, {"n_head", o.heads},
        {"d_head", o.dim / o.heads}, {"d_inner", 4 * o.dim}, {"n_layer", o.layers},
        {"mem_len", memory}, {"tgt_len", o.segment}, {"clamp_len", -1}, {"same_length", false},
        {"untie_r", true}, {"pre_lnorm", false}, {"div_val", 1}, {"cutoffs", nlohmann::json::array()},
        {"attn_type", 0}, {"layer_norm_epsilon", kLayerNormEps}, {"tie_word_embeddings", true},
        {"attnscope",
         {{"variant", "transformer_xl"},
          {"params", {{"segment", std::to_string(o.segment)}, {"memory", std::to_string(memory)}}},
          {"seed", o.seed}, {"task", "text"}, {"steps", o.steps}, {"sequence_length", o.segment},
          {"final_loss", report.log.empty() ? 0.0 : report.log.back().loss},
          {"final_accuracy", report.log.empty() ? 0.0 : report.log.back().accuracy},
          {"chance_accuracy", report.chanceAccuracy}}},
    };
    writeText(dir / "config.json", config.dump(2) + "\n");
    std::vector<std::pair<std::string, PlainTensor>> owned;
    for (const auto& [name, t] : model.params())
        owned.emplace_back(name.rfind("crit.", 0) == 0 ? name : "transformer." + name, toPlain(t.detach()));
    owned.emplace_back("crit.out_layers.0.weight", toPlain(model.params().at("word_emb.emb_layers.0.weight").detach()));
    std::vector<StWriteItem> items;
    for (const auto& [name, t] : owned) items.push_back({name, &t});
    auto written = writeSafetensors((dir / "model.safetensors").string(), items, {{"format", "pt"}});
    if (!written) throw EngineError(written.error().code, written.error().message);
}

void checkOptions(const TrainOptions& o, std::int64_t memory) {
    if (o.task != "text") throw EngineError(ErrorCode::InvalidArgument, "--arch transfo-xl trains a language model: use --task text");
    if (o.layers < 1 || o.layers > 48) throw EngineError(ErrorCode::InvalidArgument, "layers must be in [1, 48]");
    if (o.heads < 1 || o.dim < 2 || o.dim % o.heads != 0 || o.dim % 2 != 0 || o.dim > 1024)
        throw EngineError(ErrorCode::InvalidArgument, "dim must be even, in [2, 1024] and a multiple of heads (dim " +
                                                          std::to_string(o.dim) + ", heads " + std::to_string(o.heads) + ")");
    if (o.segment < 1 || o.segment > 4096) throw EngineError(ErrorCode::InvalidArgument, "segment must be in [1, 4096]");
    if (memory < 0 || memory > 16384) throw EngineError(ErrorCode::InvalidArgument, "memory must be in [0, 16384]");
    if (o.steps < 1 || o.steps > 10'000'000) throw EngineError(ErrorCode::InvalidArgument, "steps must be in [1, 10000000]");
    if (o.batch < 1 || o.batch > 4096) throw EngineError(ErrorCode::InvalidArgument, "batch must be in [1, 4096]");
    if (!(o.learningRate > 0 && o.learningRate < 1)) throw EngineError(ErrorCode::InvalidArgument, "learning rate must be in (0, 1)");
    if (o.out.empty()) throw EngineError(ErrorCode::InvalidArgument, "no output folder (--out)");
    const auto needed = static_cast<std::size_t>(4 * (o.segment + 1));
    if (o.text.size() < needed)
        throw EngineError(ErrorCode::InvalidArgument, "the training text has " + std::to_string(o.text.size()) +
                                                          " bytes; segment " + std::to_string(o.segment) +
                                                          " needs at least " + std::to_string(needed));
}

}  // namespace

TrainReport trainTransfoXl(const TrainOptions& o, const std::function<void(const TrainLogEntry&)>& onLog,
                           const ProgressFn& progress, std::uint64_t memoryBudget) {
    const std::int64_t memory = o.memory < 0 ? o.segment : o.memory;
    checkOptions(o, memory);
    const OneThreadScope oneThread;  // (tiny tensors: see trainer.cpp)
    const auto started = std::chrono::steady_clock::now();

    // The last tenth is held out; the rest is cut into `streams` contiguous streams read in
    // parallel, segment after segment, each with its own memory (as the reference's iterator).
    const std::int64_t L = o.segment;
    const std::size_t heldBytes = std::max<std::size_t>(o.text.size() / 10, static_cast<std::size_t>(2 * L + 1));
    const std::string train = o.text.substr(0, o.text.size() - heldBytes), held = o.text.substr(o.text.size() - heldBytes);
    const std::int64_t streams = std::clamp<std::int64_t>(static_cast<std::int64_t>(train.size()) / (L + 1), 1, o.batch);
    const std::int64_t streamLength = static_cast<std::int64_t>(train.size()) / streams;
    const std::int64_t segmentsPerStream = (streamLength - 1) / L;

    std::mt19937_64 rng(o.seed);
    TinyTransfoXl model(o, memory, rng);
    checkTrainingBudget({model.count(), streams, L, L + memory, o.layers, o.heads, o.dim}, memoryBudget);
    Adam adam(model.params());
    TrainReport report;
    report.chanceAccuracy = 1.0 / static_cast<double>(kVocab);
    report.parameters = model.count() - kVocab * o.dim;  // (the output layer is the embedding)
    report.sequenceLength = L;
    const std::int64_t logEvery = std::max<std::int64_t>(1, o.steps / 20);
    const std::int64_t warmup = std::min<std::int64_t>(100, o.steps / 10 + 1);
    std::vector<at::Tensor> mems;
    for (std::int64_t step = 1; step <= o.steps; ++step) {
        if (progress && !progress(Progress{"train", step - 1, o.steps})) throw CancelledError();
        const std::int64_t s = (step - 1) % segmentsPerStream;
        if (s == 0) mems.clear();  // back at the streams' start: no memory
        at::Tensor input = at::empty({streams, L}, at::kLong), target = at::empty({streams, L}, at::kLong);
        for (std::int64_t b = 0; b < streams; ++b) {
            const auto begin = static_cast<std::size_t>(b * streamLength + s * L);
            input[b].copy_(bytesOf(train, begin, static_cast<std::size_t>(L)));
            target[b].copy_(bytesOf(train, begin + 1, static_cast<std::size_t>(L)));
        }
        const at::Tensor logits = model.logits(model.segment(input, mems));
        at::Tensor loss = at::cross_entropy_loss(logits.reshape({-1, kVocab}), target.reshape({-1}));
        loss.backward();
        adam.step(o.learningRate * std::min(1.0, static_cast<double>(step) / static_cast<double>(warmup)));
        if (step % logEvery == 0 || step == o.steps) {
            const auto [heldLoss, accuracy] = evaluate(model, held, L);
            report.log.push_back(TrainLogEntry{step, heldLoss, accuracy});
            if (onLog) onLog(report.log.back());
            if (!std::isfinite(heldLoss))
                throw EngineError(ErrorCode::InvalidInput, "training diverged (loss is not finite at step " +
                                                               std::to_string(step) + "); try a smaller learning rate");
        }
    }
    {
        // The reload check's probe: the held-out text's first three segments, read with memory.
        at::NoGradGuard noGrad;
        const std::size_t count = std::min(held.size(), static_cast<std::size_t>(3 * L));
        const at::Tensor probe = bytesOf(held, 0, count);
        std::vector<at::Tensor> probeMems;
        std::vector<at::Tensor> states;
        for (std::int64_t start = 0; start < static_cast<std::int64_t>(count); start += L)
            states.push_back(model.segment(probe.narrow(0, start, std::min<std::int64_t>(L, static_cast<std::int64_t>(count) - start)).unsqueeze(0), probeMems).squeeze(0));
        const at::Tensor all = at::cat(states, 0).contiguous();
        report.probeIds.assign(probe.data_ptr<std::int64_t>(), probe.data_ptr<std::int64_t>() + probe.numel());
        report.probeHidden.assign(all.data_ptr<float>(), all.data_ptr<float>() + all.numel());
    }
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    writeFolder(o, memory, model, report);
    report.folder = o.out;
    return report;
}

}  // namespace attnscope::engine
