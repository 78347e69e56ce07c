#include "torch/train/trainer.h"

#include "io/families/roberta/roberta.h"

#include <attnscope/model_checkpoint.h>
#include <attnscope/model_tokenizer.h>
#include <attnscope/safetensors.h>

#include "base/runtime/run_context.h"
#include "torch/tensors/to_plain.h"
#include "torch/train/adam.h"
#include "torch/train/one_thread.h"
#include "torch/train/switch_ffn.h"
#include "torch/train/training_bytes.h"
#include "torch/train/train_tasks.h"
#include "torch/train/trainable_attention.h"

#include <attnscope/variant_catalog.h>

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

namespace attnscope::engine {
namespace {

namespace fs = std::filesystem;

constexpr double kLayerNormEps = 1e-5;
/// Held-out tokens per evaluation: 256 copy examples, fewer long text windows (the attention of
/// 256 windows of 386 tokens alone would take 600 MB and most of the run's time).
constexpr std::int64_t kEvalTokens = 8192;

/// The parameters in RoBERTa naming (without the "roberta." prefix), so the folder loads as a
/// RoBERTa checkpoint; the output layer is tied to the word embeddings plus `lm_head.bias`. With
/// --arch switch every FFN is a Switch layer (SwitchSettings names its tensors).
/// The Switch layers' balancing losses of one forward pass, summed over layers.
struct RouterLosses {
    at::Tensor aux = at::zeros({}, at::kFloat), z = at::zeros({}, at::kFloat);
    void add(const SwitchFfnOutput& layer) {
        aux = aux + layer.aux;
        z = z + layer.z;
    }
};

class TinyEncoder {
public:
    TinyEncoder(const TrainOptions& o, std::int64_t n, std::mt19937_64& rng) : m_options(o), m_n(n) {
        const std::int64_t d = o.dim;
        auto normal = [&](std::vector<std::int64_t> shape) {
            // Our own generator, so a seed gives the same model on every machine.
            std::normal_distribution<float> dist(0.0f, 0.02f);
            at::Tensor t = at::empty(shape, at::kFloat);
            float* p = t.data_ptr<float>();
            for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
            return t;
        };
        auto add = [&](const std::string& name, at::Tensor t) { m_params[name] = t.requires_grad_(true); };
        add("embeddings.word_embeddings.weight", normal({byte_vocab::kSize, d}));
        add("embeddings.position_embeddings.weight", normal({n + 2, d}));
        add("embeddings.token_type_embeddings.weight", normal({1, d}));
        auto norm = [&](const std::string& base) {
            add(base + ".weight", at::ones({d}, at::kFloat));
            add(base + ".bias", at::zeros({d}, at::kFloat));
        };
        auto linear = [&](const std::string& base, std::int64_t out, std::int64_t in) {
            add(base + ".weight", normal({out, in}));
            add(base + ".bias", at::zeros({out}, at::kFloat));
        };
        norm("embeddings.LayerNorm");
        for (int l = 0; l < o.layers; ++l) {
            const std::string p = "encoder.layer." + std::to_string(l) + ".";
            for (const char* part : {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"})
                linear(p + part, d, d);
            norm(p + "attention.output.LayerNorm");
            if (switchLayers()) {
                add(switchRouterWeight(p), normal({o.experts, d}));
                for (std::int64_t e = 0; e < o.experts; ++e) {
                    const std::string expert = switchExpertPrefix(p, e);
                    linear(expert + "intermediate.dense", 4 * d, d);
                    linear(expert + "output.dense", d, 4 * d);
                }
            } else {
                linear(p + "intermediate.dense", 4 * d, d);
                linear(p + "output.dense", d, 4 * d);
            }
            norm(p + "output.LayerNorm");
        }
        m_params["lm_head.bias"] = at::zeros({byte_vocab::kSize}, at::kFloat).requires_grad_(true);
    }

    bool switchLayers() const { return m_options.arch == "switch"; }
    std::map<std::string, at::Tensor>& params() { return m_params; }
    std::int64_t count() const {
        std::int64_t total = 0;
        for (const auto& [name, t] : m_params) total += t.numel();
        return total;
    }

    /// logits [batch, n, vocab]; a Switch model adds its layers' balancing losses to `router`.
    at::Tensor forward(const at::Tensor& ids, const TrainableAttention& attention, RouterLosses* router = nullptr) const {
        return at::linear(hidden(ids, attention, router), m_params.at("embeddings.word_embeddings.weight"),
                          m_params.at("lm_head.bias"));
    }

    /// last hidden states [batch, n, dim]
    at::Tensor hidden(const at::Tensor& ids, const TrainableAttention& attention, RouterLosses* router = nullptr) const {
        const std::int64_t b = ids.size(0), n = ids.size(1), d = m_options.dim, h = m_options.heads, dh = d / h;
        auto P = [&](const std::string& name) -> const at::Tensor& { return m_params.at(name); };
        // Positions start at pad + 1 = 2, as RoBERTa's do.
        at::Tensor x = at::embedding(P("embeddings.word_embeddings.weight"), ids) +
                       at::embedding(P("embeddings.position_embeddings.weight"), at::arange(2, n + 2, at::kLong)) +
                       P("embeddings.token_type_embeddings.weight")[0];
        x = at::layer_norm(x, {d}, P("embeddings.LayerNorm.weight"), P("embeddings.LayerNorm.bias"), kLayerNormEps);
        for (int l = 0; l < m_options.layers; ++l) {
            const std::string p = "encoder.layer." + std::to_string(l) + ".";
            auto lin = [&](const at::Tensor& in, const std::string& base) {
                return at::linear(in, P(p + base + ".weight"), P(p + base + ".bias"));
            };
            auto heads = [&](const at::Tensor& t) { return t.view({b, n, h, dh}).transpose(1, 2); };
            at::Tensor context = attention(heads(lin(x, "attention.self.query")), heads(lin(x, "attention.self.key")),
                                           heads(lin(x, "attention.self.value")));
            context = context.transpose(1, 2).reshape({b, n, d});
            at::Tensor a = at::layer_norm(x + lin(context, "attention.output.dense"), {d},
                                          P(p + "attention.output.LayerNorm.weight"),
                                          P(p + "attention.output.LayerNorm.bias"), kLayerNormEps);
            at::Tensor ffn;
            if (switchLayers()) {
                SwitchFfnOutput moe = switchFeedForward(a, P, p, m_options.experts, m_options.capacityFactor,
                                                        [](const at::Tensor& t) { return at::gelu(t); });
                if (router) router->add(moe);
                ffn = moe.out;
            } else {
                ffn = lin(at::gelu(lin(a, "intermediate.dense")), "output.dense");
            }
            x = at::layer_norm(a + ffn, {d}, P(p + "output.LayerNorm.weight"), P(p + "output.LayerNorm.bias"), kLayerNormEps);
        }
        return x;
    }

private:
    const TrainOptions& m_options;
    std::int64_t m_n;
    std::map<std::string, at::Tensor> m_params;
};

std::pair<double, double> lossAndAccuracy(const at::Tensor& logits, const at::Tensor& target) {
    const at::Tensor flat = logits.reshape({-1, logits.size(-1)});
    const at::Tensor t = target.reshape({-1});
    const at::Tensor rows = t.ge(0).nonzero().squeeze(1);
    const at::Tensor predicted = flat.index_select(0, rows), expected = t.index_select(0, rows);
    const at::Tensor loss = at::cross_entropy_loss(predicted, expected);
    const double accuracy = predicted.argmax(-1).eq(expected).to(at::kDouble).mean().item<double>();
    return {loss.item<double>(), accuracy};
}

void writeText(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw EngineError(ErrorCode::Io, path.string() + ": cannot write");
}

void writeFolder(const TrainOptions& o, const Variant& variant, const TinyEncoder& model, std::int64_t n,
                 const TrainReport& report) {
    const fs::path dir(o.out);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw EngineError(ErrorCode::Io, o.out + ": cannot create the folder: " + ec.message());

    nlohmann::json params = nlohmann::json::object();
    for (const auto& [name, value] : o.params) params[name] = formatParamValue(value);
    const bool moe = o.arch == "switch";
    nlohmann::json config = {
        {"model_type", moe ? families::roberta::kSwitchModelType : families::roberta::kModelType},
        {"vocab_size", byte_vocab::kSize}, {"hidden_size", o.dim},
        {"num_hidden_layers", o.layers},   {"num_attention_heads", o.heads},
        {"intermediate_size", 4 * o.dim},  {"max_position_embeddings", n + 2},
        {"type_vocab_size", 1},            {"layer_norm_eps", kLayerNormEps},
        {"hidden_act", "gelu"},            {"pad_token_id", byte_vocab::kPad},
        {"bos_token_id", byte_vocab::kBos}, {"eos_token_id", byte_vocab::kEos},
        {"attnscope",
         {{"variant", variant.info().id},
          {"params", params},
          {"seed", o.seed},
          {"task", o.task},
          {"steps", o.steps},
          {"sequence_length", n},
          {"final_loss", report.log.empty() ? 0.0 : report.log.back().loss},
          {"final_accuracy", report.log.empty() ? 0.0 : report.log.back().accuracy},
          {"chance_accuracy", report.chanceAccuracy}}},
    };
    if (moe) {
        // (a model type of its own, so that no RoBERTa loader takes the expert layers for missing FFNs)
        config["num_experts"] = o.experts;
        config["capacity_factor"] = o.capacityFactor;
        config["router_aux_loss_coef"] = o.auxLossCoef;
        config["router_z_loss_coef"] = o.zLossCoef;
    } else {
        config["architectures"] = {"RobertaForMaskedLM"};
    }
    writeText(dir / "config.json", config.dump(2) + "\n");

    // Byte-level vocabulary without merges: every byte is one token, as GPT-2's table spells it.
    nlohmann::json vocab = nlohmann::json::object();
    vocab["<s>"] = byte_vocab::kBos;
    vocab["<pad>"] = byte_vocab::kPad;
    vocab["</s>"] = byte_vocab::kEos;
    vocab["<unk>"] = byte_vocab::kUnk;
    vocab["<mask>"] = byte_vocab::kMask;
    for (int b = 0; b < 256; ++b) {
        std::string s;
        const char32_t c = byteLevelChar(static_cast<unsigned char>(b));
        if (c < 0x80) {
            s += static_cast<char>(c);
        } else {
            s += static_cast<char>(0xC0 | (c >> 6));
            s += static_cast<char>(0x80 | (c & 0x3F));
        }
        vocab[s] = byte_vocab::idOf(static_cast<unsigned char>(b));
    }
    writeText(dir / "vocab.json", vocab.dump() + "\n");
    writeText(dir / "merges.txt", "#version: 0.2\n");

    std::vector<std::pair<std::string, PlainTensor>> owned;
    for (const auto& [name, t] : const_cast<TinyEncoder&>(model).params())
        owned.emplace_back(name == "lm_head.bias" ? name : "roberta." + name, toPlain(t.detach()));
    std::vector<StWriteItem> items;
    for (const auto& [name, t] : owned) items.push_back({name, &t});
    auto written = writeSafetensors((dir / "model.safetensors").string(), items, {{"format", "pt"}});
    if (!written) throw EngineError(written.error().code, written.error().message);
}

}  // namespace

std::vector<std::string> trainableVariants() {
    std::vector<std::string> out;
    for (const VariantInfo& info : variantCatalog())
        if (info.training != Training::None) out.push_back(info.id);
    return out;
}

TrainReport trainModel(const TrainOptions& o, const Variant& variant, const ParamValues& params, BufferPool& pool,
                       const std::function<void(const TrainLogEntry&)>& onLog, const ProgressFn& progress,
                       std::uint64_t memoryBudget) {
    if (o.layers < 1 || o.layers > 48) throw EngineError(ErrorCode::InvalidArgument, "layers must be in [1, 48]");
    if (o.heads < 1 || o.dim < 1 || o.dim % o.heads != 0 || o.dim > 1024)
        throw EngineError(ErrorCode::InvalidArgument, "dim must be in [1, 1024] and a multiple of heads (dim " +
                                                          std::to_string(o.dim) + ", heads " + std::to_string(o.heads) + ")");
    if (o.steps < 1 || o.steps > 10'000'000) throw EngineError(ErrorCode::InvalidArgument, "steps must be in [1, 10000000]");
    if (o.batch < 1 || o.batch > 4096) throw EngineError(ErrorCode::InvalidArgument, "batch must be in [1, 4096]");
    if (!(o.learningRate > 0 && o.learningRate < 1)) throw EngineError(ErrorCode::InvalidArgument, "learning rate must be in (0, 1)");
    if (o.out.empty()) throw EngineError(ErrorCode::InvalidArgument, "no output folder (--out)");
    if (o.arch == "switch") {
        if (o.experts < 1 || o.experts > 64) throw EngineError(ErrorCode::InvalidArgument, "--experts must be in [1, 64]");
        if (!(o.capacityFactor >= 0) || !std::isfinite(o.capacityFactor))
            throw EngineError(ErrorCode::InvalidArgument, "--capacity-factor must be a number >= 0 (0: no capacity)");
        if (!(o.auxLossCoef >= 0) || !(o.zLossCoef >= 0) || !std::isfinite(o.auxLossCoef) || !std::isfinite(o.zLossCoef))
            throw EngineError(ErrorCode::InvalidArgument, "--aux-loss and --z-loss must be numbers >= 0");
    }

    // The trainer's tensors are tiny: with two intra-op threads every op woke the other thread and
    // put it back to sleep (OMP_WAIT_POLICY=PASSIVE), so most of a run went to system time; one
    // thread runs the same steps without it.
    const OneThreadScope oneThread;
    const auto started = std::chrono::steady_clock::now();
    const TaskData data(o);
    const std::int64_t n = data.sequenceLength();
    const TrainableAttention attention(variant, params, o.heads, n, o.dim / o.heads, o.seed, pool);
    std::mt19937_64 rng(o.seed);
    TinyEncoder model(o, n, rng);
    checkTrainingBudget({model.count(), o.batch, n, n, o.layers, o.heads, o.dim}, memoryBudget);
    Adam adam(model.params());
    std::mt19937_64 evalRng(o.seed ^ 0x9E3779B97F4A7C15ull);
    const TrainBatch held = data.next(std::clamp<std::int64_t>(kEvalTokens / n, 8, 256), evalRng);

    TrainReport report;
    report.chanceAccuracy = data.chanceAccuracy();
    report.parameters = model.count();
    report.sequenceLength = n;
    const std::int64_t logEvery = std::max<std::int64_t>(1, o.steps / 20);
    const std::int64_t warmup = std::min<std::int64_t>(100, o.steps / 10 + 1);
    for (std::int64_t step = 1; step <= o.steps; ++step) {
        if (progress && !progress(Progress{"train", step - 1, o.steps})) throw CancelledError();
        const TrainBatch batch = data.next(o.batch, rng);
        RouterLosses router;
        const at::Tensor logits = model.forward(batch.input, attention, &router);
        const at::Tensor flat = logits.reshape({-1, logits.size(-1)});
        const at::Tensor target = batch.target.reshape({-1});
        at::Tensor loss = at::cross_entropy_loss(flat, target, {}, at::Reduction::Mean, /*ignore_index=*/-1);
        // The paper's objective: the task loss plus α times the load-balancing loss (and the
        // z-loss when asked), each summed over the Switch layers.
        if (model.switchLayers()) loss = loss + router.aux * o.auxLossCoef + router.z * o.zLossCoef;
        loss.backward();
        const double lr = o.learningRate * std::min(1.0, static_cast<double>(step) / static_cast<double>(warmup));
        adam.step(lr);
        if (step % logEvery == 0 || step == o.steps) {
            at::NoGradGuard noGrad;
            const auto [heldLoss, accuracy] = lossAndAccuracy(model.forward(held.input, attention), held.target);
            TrainLogEntry entry{step, heldLoss, accuracy};
            report.log.push_back(entry);
            if (onLog) onLog(entry);
            if (!std::isfinite(heldLoss))
                throw EngineError(ErrorCode::InvalidInput, "training diverged (loss is not finite at step " +
                                                               std::to_string(step) + "); try a smaller learning rate");
        }
    }
    {
        at::NoGradGuard noGrad;
        const at::Tensor probe = held.input.narrow(0, 0, 1);
        const at::Tensor states = model.hidden(probe, attention).contiguous();
        report.probeIds.assign(probe.data_ptr<std::int64_t>(), probe.data_ptr<std::int64_t>() + probe.numel());
        report.probeHidden.assign(states.data_ptr<float>(), states.data_ptr<float>() + states.numel());
    }
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    writeFolder(o, variant, model, n, report);
    report.folder = o.out;
    return report;
}

}  // namespace attnscope::engine
