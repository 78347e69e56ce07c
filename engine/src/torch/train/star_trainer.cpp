// The Star-Transformer trainer (star_trainer.h). Parameters live under fastNLP's state-dict names
// (1×1 convolutions as [out, in, 1, 1]) so the folder is written as trained; the cycles are the
// inspection pass's own (torch/model/star_forward.cpp cycle()), so what `star --model` shows is what
// was trained. A linear classifier over the final satellites reads the tags.

#include "torch/train/star_trainer.h"

#include "io/families/star_transformer/star_transformer.h"

#include "torch/tensors/to_plain.h"
#include "torch/model/star_model.h"
#include "base/api/engine_error.h"
#include "torch/train/adam.h"
#include "torch/train/one_thread.h"
#include "torch/train/training_bytes.h"

#include <ATen/Parallel.h>

#include <attnscope/safetensors.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

namespace attnscope::engine {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kVocab = 256, kLetters = 8;  // letters a–h: the tags' classes
constexpr char kFirstLetter = 'a';

using Params = std::map<std::string, at::Tensor>;

Params initialParams(const TrainOptions& o, std::int64_t length, std::mt19937_64& rng) {
    Params p;
    const std::int64_t D = o.dim, inner = o.dim;  // heads × head dim = dim
    const auto normal = [&](std::vector<std::int64_t> shape, double std) {
        at::Tensor t = at::empty(shape, at::kFloat);
        std::normal_distribution<float> dist(0.0f, static_cast<float>(std));
        float* data = t.data_ptr<float>();
        for (std::int64_t i = 0; i < t.numel(); ++i) data[i] = dist(rng);
        return t;
    };
    p["embedding.weight"] = normal({kVocab, D}, 0.5);
    p["pos_emb.weight"] = normal({length, D}, 0.5);
    for (int t = 0; t < o.layers; ++t) {
        const std::string i = std::to_string(t);
        p["norm." + i + ".weight"] = at::ones({D});
        p["norm." + i + ".bias"] = at::zeros({D});
        for (const char* block : {"ring_att.", "star_att."}) {
            for (const char* m : {"WQ", "WK", "WV"}) {
                p[block + i + "." + m + ".weight"] = normal({inner, D, 1, 1}, 1.0 / std::sqrt(static_cast<double>(D)));
                p[block + i + "." + m + ".bias"] = at::zeros({inner});
            }
            p[block + i + ".WO.weight"] = normal({D, inner, 1, 1}, 1.0 / std::sqrt(static_cast<double>(inner)));
            p[block + i + ".WO.bias"] = at::zeros({D});
        }
    }
    p["classifier.weight"] = normal({kLetters, D}, 1.0 / std::sqrt(static_cast<double>(D)));
    p["classifier.bias"] = at::zeros({kLetters});
    for (auto& [name, t] : p) t.requires_grad_(true);
    return p;
}

/// The cycles' view of the parameters (reshaped, still in the graph).
star::Weights weightsOf(const Params& p, const TrainOptions& o, std::int64_t length) {
    star::Weights w;
    w.hidden = o.dim;
    w.heads = o.heads;
    w.headDim = o.dim / o.heads;
    w.cycles = o.layers;
    w.maxLen = length;
    w.vocab = kVocab;
    w.embedding = p.at("embedding.weight");
    w.posEmb = p.at("pos_emb.weight");
    const auto attention = [&](const std::string& prefix) {
        star::Attention a;
        const auto flat = [&](const char* m) { return p.at(prefix + m + ".weight").flatten(1); };
        a.wq = flat("WQ"), a.wk = flat("WK"), a.wv = flat("WV"), a.wo = flat("WO");
        a.bq = p.at(prefix + "WQ.bias"), a.bk = p.at(prefix + "WK.bias"), a.bv = p.at(prefix + "WV.bias"), a.bo = p.at(prefix + "WO.bias");
        return a;
    };
    for (int t = 0; t < o.layers; ++t) {
        const std::string i = std::to_string(t);
        w.normWeight.push_back(p.at("norm." + i + ".weight"));
        w.normBias.push_back(p.at("norm." + i + ".bias"));
        w.ring.push_back(attention("ring_att." + i + "."));
        w.relay.push_back(attention("star_att." + i + "."));
    }
    return w;
}

/// The final satellites [B, n, D] of byte sequences `ids` [B, n].
at::Tensor encode(const star::Weights& w, const at::Tensor& ids, bool useRelay) {
    const at::Tensor e = star::embed(w, at::embedding(w.embedding, ids));
    const at::Tensor padded = at::zeros(ids.sizes(), at::kBool);
    at::Tensor nodes = e, relay = e.mean(1);
    for (std::int64_t t = 0; t < w.cycles; ++t) {
        star::Cycle c = star::cycle(w, t, nodes, relay, e, padded, useRelay);
        nodes = c.nodes;
        relay = c.relay;
    }
    return nodes;
}

/// A batch of the task: letters [B, n] as bytes, and every position's tag (the first letter).
std::pair<at::Tensor, at::Tensor> batchOf(std::int64_t batch, std::int64_t length, std::mt19937_64& rng) {
    at::Tensor ids = at::empty({batch, length}, at::kLong), tags = at::empty({batch, length}, at::kLong);
    auto* x = ids.data_ptr<std::int64_t>();
    auto* y = tags.data_ptr<std::int64_t>();
    for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t i = 0; i < length; ++i) {
            x[b * length + i] = kFirstLetter + static_cast<std::int64_t>(rng() % kLetters);
            y[b * length + i] = x[b * length] - kFirstLetter;
        }
    return {ids, tags};
}

void checkOptions(const TrainOptions& o, std::int64_t length) {
    if (o.task != "first")
        throw EngineError(ErrorCode::InvalidArgument, "--arch star-transformer trains the task 'first' (tag every position with the first letter)");
    if (o.layers < 1 || o.layers > 16) throw EngineError(ErrorCode::InvalidArgument, "layers (the cycles T) must be in [1, 16]");
    if (o.heads < 1 || o.dim < 1 || o.dim % o.heads != 0 || o.dim > 1024)
        throw EngineError(ErrorCode::InvalidArgument, "dim must be in [1, 1024] and a multiple of heads");
    if (length < 2 || length > 512) throw EngineError(ErrorCode::InvalidArgument, "length must be in [2, 512]");
    if (o.steps < 1 || o.steps > 10'000'000) throw EngineError(ErrorCode::InvalidArgument, "steps must be in [1, 10000000]");
    if (o.batch < 1 || o.batch > 4096) throw EngineError(ErrorCode::InvalidArgument, "batch must be in [1, 4096]");
    if (!(o.learningRate > 0 && o.learningRate < 1)) throw EngineError(ErrorCode::InvalidArgument, "learning rate must be in (0, 1)");
    if (o.out.empty()) throw EngineError(ErrorCode::InvalidArgument, "no output folder (--out)");
}

void writeFolder(const TrainOptions& o, std::int64_t length, const Params& p, const TrainReport& report) {
    const fs::path dir(o.out);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw EngineError(ErrorCode::Io, o.out + ": cannot create the folder: " + ec.message());
    const nlohmann::json config = {
        {"model_type", families::star_transformer::kModelType}, {"hidden_size", o.dim}, {"num_layers", o.layers}, {"num_head", o.heads},
        {"head_dim", o.dim / o.heads}, {"max_len", length}, {"cyclic", false}, {"vocab_size", kVocab},
        {"attnscope",
         {{"task", "first"}, {"relay", o.starRelay}, {"steps", o.steps}, {"seed", o.seed}, {"sequence_length", length},
          {"final_loss", report.log.empty() ? 0.0 : report.log.back().loss},
          {"final_accuracy", report.log.empty() ? 0.0 : report.log.back().accuracy},
          {"chance_accuracy", report.chanceAccuracy}}}};
    std::ofstream(dir / "config.json", std::ios::trunc) << config.dump(2) << "\n";
    std::vector<std::pair<std::string, PlainTensor>> owned;
    for (const auto& [name, t] : p) owned.emplace_back(name, toPlain(t.detach()));
    std::vector<StWriteItem> items;
    for (const auto& [name, t] : owned) items.push_back({name, &t});
    auto written = writeSafetensors((dir / "model.safetensors").string(), items, {{"format", "pt"}});
    if (!written) throw EngineError(written.error().code, written.error().message);
}

}  // namespace

TrainReport trainStarTransformer(const TrainOptions& o, const std::function<void(const TrainLogEntry&)>& onLog,
                                 const ProgressFn& progress, std::uint64_t memoryBudget) {
    const std::int64_t length = o.length > 0 ? o.length : 16;
    checkOptions(o, length);
    const OneThreadScope oneThread;  // (tiny tensors: see trainer.cpp)
    const auto started = std::chrono::steady_clock::now();
    std::mt19937_64 rng(o.seed);
    Params params = initialParams(o, length, rng);
    std::int64_t parameters = 0;
    for (const auto& [name, t] : params) parameters += t.numel();
    // (a satellite attends its two neighbours, its embedding and the relay: 5 keys a cycle)
    checkTrainingBudget({parameters, o.batch, length, 5, o.layers, o.heads, o.dim}, memoryBudget);
    Adam adam(params);
    std::mt19937_64 heldRng(o.seed ^ 0x48454c44ull);  // ("HELD": one fixed held-out batch)
    const auto [heldIds, heldTags] = batchOf(256, length, heldRng);
    TrainReport report;
    report.chanceAccuracy = 1.0 / static_cast<double>(kLetters);
    for (const auto& [name, t] : params) report.parameters += t.numel();
    report.sequenceLength = length;
    const std::int64_t logEvery = std::max<std::int64_t>(1, o.steps / 20);
    const auto logits = [&](const at::Tensor& ids) {
        const star::Weights w = weightsOf(params, o, length);
        return at::linear(encode(w, ids, o.starRelay), params.at("classifier.weight"), params.at("classifier.bias"));
    };
    for (std::int64_t step = 1; step <= o.steps; ++step) {
        if (progress && !progress(Progress{"train", step - 1, o.steps})) throw CancelledError();
        const auto [ids, tags] = batchOf(o.batch, length, rng);
        at::Tensor loss = at::cross_entropy_loss(logits(ids).reshape({-1, kLetters}), tags.reshape({-1}));
        loss.backward();
        adam.step(o.learningRate);
        if (step % logEvery == 0 || step == o.steps) {
            at::NoGradGuard noGrad;
            const at::Tensor heldLogits = logits(heldIds);
            const double heldLoss = at::cross_entropy_loss(heldLogits.reshape({-1, kLetters}), heldTags.reshape({-1})).item<double>();
            const double accuracy = heldLogits.argmax(-1).eq(heldTags).to(at::kDouble).mean().item<double>();
            report.log.push_back(TrainLogEntry{step, heldLoss, accuracy});
            if (onLog) onLog(report.log.back());
            if (!std::isfinite(heldLoss))
                throw EngineError(ErrorCode::InvalidInput, "training diverged (loss is not finite at step " + std::to_string(step) +
                                                               "); try a smaller learning rate");
        }
    }
    {
        // The reload check's probe: one held-out sequence and its final satellites.
        at::NoGradGuard noGrad;
        const at::Tensor probe = heldIds.narrow(0, 0, 1);
        const at::Tensor states = encode(weightsOf(params, o, length), probe, o.starRelay)[0].contiguous();
        report.probeIds.assign(probe.data_ptr<std::int64_t>(), probe.data_ptr<std::int64_t>() + probe.numel());
        report.probeHidden.assign(states.data_ptr<float>(), states.data_ptr<float>() + states.numel());
    }
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    writeFolder(o, length, params, report);
    report.folder = o.out;
    return report;
}

}  // namespace attnscope::engine
