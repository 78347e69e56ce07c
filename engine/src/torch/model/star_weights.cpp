// The Star-Transformer's weights: read from a folder in fastNLP's state-dict names, or drawn from
// a seed for the random model.

#include "torch/model/star_model.h"

#include "io/families/star_transformer/star_transformer.h"

#include "base/api/engine_error.h"
#include "base/api/strict_json.h"

#include <attnscope/safetensors.h>

#include <cmath>
#include <filesystem>
#include <random>

namespace attnscope::engine::star {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kMaxHidden = 4096, kMaxCycles = 64, kMaxHeads = 64;

[[noreturn]] void refuse(const std::string& where, const std::string& why) {
    throw EngineError(ErrorCode::InvalidInput, where + ": " + why);
}

std::int64_t positiveField(const nlohmann::json& c, const char* name, const std::string& where, std::int64_t max, bool zeroOk = false) {
    const auto it = c.find(name);
    if (it == c.end() || !it->is_number_integer()) refuse(where, std::string("field '") + name + "' must be an integer");
    const std::int64_t v = it->get<std::int64_t>();
    if (v < (zeroOk ? 0 : 1) || v > max)
        refuse(where, std::string("field '") + name + "' is " + std::to_string(v) + ", outside " + (zeroOk ? "0" : "1") + " … " + std::to_string(max));
    return v;
}

/// An optional number field, finite and positive; `fallback` when absent.
double positiveNumber(const nlohmann::json& c, const char* name, const std::string& where, double fallback) {
    const auto it = c.find(name);
    if (it == c.end()) return fallback;
    if (!it->is_number() || !(it->get<double>() > 0) || !std::isfinite(it->get<double>()))
        refuse(where, std::string("field '") + name + "' must be a positive number");
    return it->get<double>();
}

/// vocab.txt (one token per line, id = line number) when the folder has one; otherwise the ids are
/// the bytes, which needs vocab_size 256.
void readVocabulary(const std::string& folder, Weights& w) {
    const fs::path path = fs::path(folder) / "vocab.txt";
    if (!fs::exists(path)) {
        if (w.vocab != 256)
            refuse((fs::path(folder) / "config.json").string(),
                   "vocab_size is " + std::to_string(w.vocab) + " and there is no vocab.txt: without one the tokens are bytes (256)");
        return;
    }
    auto text = readWholeFile(path.string(), 64u << 20);
    if (!text) throw EngineError(text.error().code, text.error().message);
    std::int64_t id = 0;
    std::size_t start = 0;
    while (start < text->size()) {
        std::size_t end = text->find('\n', start);
        if (end == std::string::npos) end = text->size();
        std::string token = text->substr(start, end - start);
        if (!token.empty() && token.back() == '\r') token.pop_back();
        if (!w.vocabulary.emplace(token, id).second) refuse(path.string(), "token '" + token + "' appears twice (line " + std::to_string(id + 1) + ")");
        ++id;
        start = end + 1;
    }
    if (id != w.vocab) refuse(path.string(), std::to_string(id) + " tokens, but config.json's vocab_size is " + std::to_string(w.vocab));
}

at::Tensor toTensor(const PlainTensor& p) {
    return at::from_blob(const_cast<float*>(p.f32.data()), p.shape, at::kFloat).clone();
}

/// The tensor `name` with `shape` (a 1×1 convolution's trailing [1, 1] dropped).
at::Tensor readTensor(const SafetensorsFile& file, const std::string& name, std::vector<std::int64_t> shape, bool conv = false) {
    auto read = file.read(name);
    if (!read) {
        if (read.error().code == ErrorCode::NotFound || !file.find(name))
            throw EngineError(ErrorCode::InvalidInput, file.path() + ": tensor '" + name + "' is missing");
        throw EngineError(read.error().code, read.error().message);
    }
    std::vector<std::int64_t> expected = shape;
    if (conv) expected.insert(expected.end(), {1, 1});
    if (read->dtype != DType::F32 || read->shape != expected) {
        std::string want, got;
        for (auto s : expected) want += (want.empty() ? "" : ", ") + std::to_string(s);
        for (auto s : read->shape) got += (got.empty() ? "" : ", ") + std::to_string(s);
        refuse(file.path(), "tensor '" + name + "' has shape [" + got + "], expected [" + want + "]");
    }
    return toTensor(read.value()).reshape(shape);
}

Attention readAttention(const SafetensorsFile& file, const std::string& prefix, std::int64_t hidden, std::int64_t inner) {
    Attention a;
    a.wq = readTensor(file, prefix + "WQ.weight", {inner, hidden}, true);
    a.bq = readTensor(file, prefix + "WQ.bias", {inner});
    a.wk = readTensor(file, prefix + "WK.weight", {inner, hidden}, true);
    a.bk = readTensor(file, prefix + "WK.bias", {inner});
    a.wv = readTensor(file, prefix + "WV.weight", {inner, hidden}, true);
    a.bv = readTensor(file, prefix + "WV.bias", {inner});
    a.wo = readTensor(file, prefix + "WO.weight", {hidden, inner}, true);
    a.bo = readTensor(file, prefix + "WO.bias", {hidden});
    return a;
}

}  // namespace

Weights loadWeights(const std::string& folder) {
    const std::string configPath = (fs::path(folder) / "config.json").string();
    auto config = readStrictJsonFile(configPath);
    if (!config) throw EngineError(config.error().code, config.error().message);
    const nlohmann::json& c = config.value();
    if (!c.is_object() || c.value("model_type", std::string()) != families::star_transformer::kModelType)
        refuse(configPath, std::string("model_type must be \"") + families::star_transformer::kModelType + "\"");
    Weights w;
    w.hidden = positiveField(c, "hidden_size", configPath, kMaxHidden);
    w.cycles = positiveField(c, "num_layers", configPath, kMaxCycles);
    w.heads = positiveField(c, "num_head", configPath, kMaxHeads);
    w.headDim = positiveField(c, "head_dim", configPath, kMaxHidden);
    w.maxLen = positiveField(c, "max_len", configPath, 1 << 20, true);
    w.vocab = positiveField(c, "vocab_size", configPath, 1 << 20);
    w.layerNormEps = positiveNumber(c, "layer_norm_eps", configPath, w.layerNormEps);
    w.negativeSlope = positiveNumber(c, "negative_slope", configPath, w.negativeSlope);
    readVocabulary(folder, w);
    if (const auto it = c.find("cyclic"); it != c.end()) {
        if (!it->is_boolean()) refuse(configPath, "field 'cyclic' must be true or false");
        w.cyclic = it->get<bool>();
    }
    auto file = SafetensorsFile::open((fs::path(folder) / "model.safetensors").string());
    if (!file) throw EngineError(file.error().code, file.error().message);
    const SafetensorsFile& f = *file.value();
    const std::int64_t inner = w.heads * w.headDim;
    w.embedding = readTensor(f, "embedding.weight", {w.vocab, w.hidden});
    if (w.maxLen > 0) w.posEmb = readTensor(f, "pos_emb.weight", {w.maxLen, w.hidden});
    for (std::int64_t t = 0; t < w.cycles; ++t) {
        const std::string i = std::to_string(t);
        w.normWeight.push_back(readTensor(f, "norm." + i + ".weight", {w.hidden}));
        w.normBias.push_back(readTensor(f, "norm." + i + ".bias", {w.hidden}));
        w.ring.push_back(readAttention(f, "ring_att." + i + ".", w.hidden, inner));
        w.relay.push_back(readAttention(f, "star_att." + i + ".", w.hidden, inner));
    }
    return w;
}

Weights randomWeights(std::int64_t heads, std::int64_t headDim, std::int64_t cycles, bool cyclic, std::uint64_t seed) {
    if (heads < 1 || heads > kMaxHeads || headDim < 1 || heads * headDim > kMaxHidden || cycles < 1 || cycles > kMaxCycles)
        throw EngineError(ErrorCode::InvalidArgument, "the Star-Transformer needs 1 … 64 heads, heads × head dim up to 4096 and 1 … 64 cycles");
    Weights w;
    w.heads = heads;
    w.headDim = headDim;
    w.hidden = heads * headDim;
    w.cycles = cycles;
    w.cyclic = cyclic;
    std::mt19937_64 rng(seed ^ 0x5354415254ull);  // ("STAR": apart from the projections' draws)
    const auto matrix = [&](std::int64_t out, std::int64_t in) {
        std::normal_distribution<float> normal(0.0f, static_cast<float>(1.0 / std::sqrt(static_cast<double>(in))));
        at::Tensor m = at::empty({out, in}, at::kFloat);
        float* p = m.data_ptr<float>();
        for (std::int64_t i = 0; i < out * in; ++i) p[i] = normal(rng);
        return m;
    };
    const auto attention = [&] {
        Attention a;
        const std::int64_t inner = heads * headDim;
        a.wq = matrix(inner, w.hidden), a.wk = matrix(inner, w.hidden), a.wv = matrix(inner, w.hidden);
        a.wo = matrix(w.hidden, inner);
        a.bq = at::zeros({inner}), a.bk = at::zeros({inner}), a.bv = at::zeros({inner}), a.bo = at::zeros({w.hidden});
        return a;
    };
    for (std::int64_t t = 0; t < cycles; ++t) {
        w.normWeight.push_back(at::ones({w.hidden}));
        w.normBias.push_back(at::zeros({w.hidden}));
        w.ring.push_back(attention());
        w.relay.push_back(attention());
    }
    return w;
}

}  // namespace attnscope::engine::star
