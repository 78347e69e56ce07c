#include "torch/model/decoder_step.h"

#include "io/checkpoint/stored_matvec.h"
#include "io/families/llama/decoder.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::engine {
namespace {

Result<std::vector<float>> readVector(const ModelCheckpoint& c, const std::string& name) {
    auto t = c.readF32(name);
    if (!t) return t.error();
    return std::move(t.value().f32);
}

// y = M x (+ bias)
std::vector<float> multiply(const StoredMatrix& m, const std::vector<float>& x, const std::vector<float>& bias = {}) {
    std::vector<float> y(static_cast<std::size_t>(m.rows));
    storedMatMul(m, x.data(), 1, y.data());
    if (!bias.empty())
        for (std::size_t i = 0; i < y.size(); ++i) y[i] += bias[i];
    return y;
}

// x / √(mean(x²) + eps) · w over each `width` values
void rmsNormInPlace(float* x, std::int64_t width, const std::vector<float>& w, double eps) {
    double squares = 0;
    for (std::int64_t i = 0; i < width; ++i) squares += static_cast<double>(x[i]) * x[i];
    const float scale = static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(width) + eps));
    for (std::int64_t i = 0; i < width; ++i) x[i] = x[i] * scale * w[static_cast<std::size_t>(i)];
}

std::vector<float> rmsNorm(const std::vector<float>& x, const std::vector<float>& w, double eps) {
    std::vector<float> out = x;
    rmsNormInPlace(out.data(), static_cast<std::int64_t>(out.size()), w, eps);
    return out;
}

float silu(float v) { return v / (1.0f + std::exp(-v)); }

std::vector<float> swiglu(const StoredMatrix& gate, const StoredMatrix& up, const StoredMatrix& down, const std::vector<float>& x) {
    std::vector<float> g = multiply(gate, x), u = multiply(up, x);
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = silu(g[i]) * u[i];
    return multiply(down, g);
}

}  // namespace

Result<DecoderStepper> DecoderStepper::create(const ModelCheckpoint& checkpoint, RouterOptions router) {
    DecoderStepper s;
    s.m_checkpoint = &checkpoint;
    s.m_config = &checkpoint.config();
    s.m_router = router;
    for (std::int64_t l = 0; l < s.m_config->numLayers; ++l)
        if (auto layer = s.readLayer(l); !layer) return layer.error();
    auto norm = readVector(checkpoint, "norm.weight");
    if (!norm) return norm.error();
    s.m_finalNorm = std::move(norm.value());
    // the LM head: its own weight, else the embedding it is tied to
    auto head = checkpoint.storedMatrix(checkpoint.holds("lm_head.weight") ? "lm_head.weight" : "embed_tokens.weight");
    if (!head) return head.error();
    if (head.value().cols != s.m_config->hiddenSize)
        return Error{ErrorCode::InvalidInput, checkpoint.folder() + ": the LM head has " + std::to_string(head.value().cols) +
                                                  " columns, the model's hidden size is " + std::to_string(s.m_config->hiddenSize)};
    s.m_head = head.value();
    return s;
}

Result<void> DecoderStepper::readLayer(std::int64_t l) {
    const ModelConfig& c = *m_config;
    const LlamaSettings& ls = c.llama;
    const ModelCheckpoint& ck = *m_checkpoint;
    const std::string p = decoderLayerPrefix(l);
    Layer layer;
    auto matrix = [&](const std::string& name, StoredMatrix& out) -> Result<void> {
        auto m = ck.storedMatrix(name);
        if (!m) return m.error();
        out = m.value();
        return {};
    };
    auto vector = [&](const std::string& name, std::vector<float>& out) -> Result<void> {
        auto v = readVector(ck, name);
        if (!v) return v.error();
        out = std::move(v.value());
        return {};
    };
    std::vector<Result<void>> reads;
    reads.push_back(vector(p + "input_layernorm.weight", layer.inputNorm));
    reads.push_back(vector(p + "post_attention_layernorm.weight", layer.postNorm));
    if (ls.fusedProjections) {
        reads.push_back(matrix(p + "self_attn.qkv_proj.weight", layer.qkv));
        if (ls.qkvBias) reads.push_back(vector(p + "self_attn.qkv_proj.bias", layer.qBias));
    } else {
        reads.push_back(matrix(p + "self_attn.q_proj.weight", layer.q));
        reads.push_back(matrix(p + "self_attn.k_proj.weight", layer.k));
        reads.push_back(matrix(p + "self_attn.v_proj.weight", layer.v));
        if (ls.qkvBias) {
            reads.push_back(vector(p + "self_attn.q_proj.bias", layer.qBias));
            reads.push_back(vector(p + "self_attn.k_proj.bias", layer.kBias));
            reads.push_back(vector(p + "self_attn.v_proj.bias", layer.vBias));
        }
    }
    reads.push_back(matrix(p + "self_attn.o_proj.weight", layer.o));
    if (ls.outputBias) reads.push_back(vector(p + "self_attn.o_proj.bias", layer.oBias));
    if (ls.qkNorm != QkNorm::None) {
        reads.push_back(vector(p + "self_attn.q_norm.weight", layer.qNorm));
        reads.push_back(vector(p + "self_attn.k_norm.weight", layer.kNorm));
    }
    layer.slides = ls.slides(l);
    layer.sparse = c.switchLayer(l);
    if (layer.sparse) {
        reads.push_back(matrix(decoderRouterWeight(c, p), layer.router));
        layer.expertGate.resize(static_cast<std::size_t>(c.moe.experts));
        layer.expertUp.resize(layer.expertGate.size());
        layer.expertDown.resize(layer.expertGate.size());
        for (std::int64_t e = 0; e < c.moe.experts; ++e) {
            const DecoderExpertNames w = decoderExpertNames(c, p, e);
            reads.push_back(matrix(w.gate, layer.expertGate[static_cast<std::size_t>(e)]));
            reads.push_back(matrix(w.up, layer.expertUp[static_cast<std::size_t>(e)]));
            reads.push_back(matrix(w.down, layer.expertDown[static_cast<std::size_t>(e)]));
        }
        if (ls.sharedExpertInner > 0) {
            reads.push_back(matrix(p + "mlp.shared_expert.gate_proj.weight", layer.sharedGate));
            reads.push_back(matrix(p + "mlp.shared_expert.up_proj.weight", layer.sharedUp));
            reads.push_back(matrix(p + "mlp.shared_expert.down_proj.weight", layer.sharedDown));
            reads.push_back(matrix(p + "mlp.shared_expert_gate.weight", layer.sharedExpertGate));
        }
    } else if (ls.fusedProjections) {
        reads.push_back(matrix(p + "mlp.gate_up_proj.weight", layer.gateUp));
        reads.push_back(matrix(p + "mlp.down_proj.weight", layer.down));
    } else {
        reads.push_back(matrix(p + "mlp.gate_proj.weight", layer.gate));
        reads.push_back(matrix(p + "mlp.up_proj.weight", layer.up));
        reads.push_back(matrix(p + "mlp.down_proj.weight", layer.down));
        if (ls.mlpBias) {
            reads.push_back(vector(p + "mlp.gate_proj.bias", layer.gateBias));
            reads.push_back(vector(p + "mlp.up_proj.bias", layer.upBias));
            reads.push_back(vector(p + "mlp.down_proj.bias", layer.downBias));
        }
    }
    for (auto& r : reads)
        if (!r) return r.error();
    m_layers.push_back(std::move(layer));
    return {};
}

DecoderCache DecoderStepper::emptyCache(std::int64_t capacity) const {
    const ModelConfig& c = *m_config;
    DecoderCache cache;
    cache.capacity = capacity;
    const std::size_t size = static_cast<std::size_t>(c.kvHeads * capacity * c.headSize);
    cache.keys.assign(static_cast<std::size_t>(c.numLayers), std::vector<float>(size));
    cache.values.assign(static_cast<std::size_t>(c.numLayers), std::vector<float>(size));
    return cache;
}

// Hugging Face's rotate_half: feature i < r/2 pairs with i + r/2; features past r pass unchanged.
void DecoderStepper::rotate(float* head, std::int64_t position, const DecoderRotary& rotary) const {
    const std::int64_t half = static_cast<std::int64_t>(rotary.inverseFrequencies.size());
    for (std::int64_t i = 0; i < half; ++i) {
        const float angle = static_cast<float>(position) * rotary.inverseFrequencies[static_cast<std::size_t>(i)];
        const float cos = std::cos(angle) * rotary.attentionFactor, sin = std::sin(angle) * rotary.attentionFactor;
        const float a = head[i], b = head[i + half];
        head[i] = a * cos - b * sin;
        head[i + half] = b * cos + a * sin;
    }
}

void DecoderStepper::attention(const Layer& layer, std::int64_t l, std::vector<float>& x, DecoderCache& cache,
                               const DecoderRotary& rotary) const {
    const ModelConfig& c = *m_config;
    const LlamaSettings& ls = c.llama;
    const std::int64_t heads = c.numHeads, kvHeads = c.kvHeads, dh = c.headSize, groups = heads / kvHeads;
    const std::vector<float> a = rmsNorm(x, layer.inputNorm, c.layerNormEps);
    std::vector<float> q, k, v;
    if (ls.fusedProjections) {
        const std::vector<float> qkv = multiply(layer.qkv, a, layer.qBias);
        q.assign(qkv.begin(), qkv.begin() + heads * dh);
        k.assign(qkv.begin() + heads * dh, qkv.begin() + (heads + kvHeads) * dh);
        v.assign(qkv.begin() + (heads + kvHeads) * dh, qkv.end());
    } else {
        q = multiply(layer.q, a, layer.qBias);
        k = multiply(layer.k, a, layer.kBias);
        v = multiply(layer.v, a, layer.vBias);
    }
    if (ls.qkNorm == QkNorm::Whole) {
        rmsNormInPlace(q.data(), heads * dh, layer.qNorm, c.layerNormEps);
        rmsNormInPlace(k.data(), kvHeads * dh, layer.kNorm, c.layerNormEps);
    }
    if (ls.clipQkv > 0)
        for (auto* t : {&q, &k, &v})
            for (float& value : *t) value = std::clamp(value, static_cast<float>(-ls.clipQkv), static_cast<float>(ls.clipQkv));
    const std::int64_t position = cache.length;
    for (std::int64_t h = 0; h < heads; ++h) {
        if (ls.qkNorm == QkNorm::PerHead) rmsNormInPlace(q.data() + h * dh, dh, layer.qNorm, c.layerNormEps);
        rotate(q.data() + h * dh, position, rotary);
    }
    std::vector<float>& keys = cache.keys[static_cast<std::size_t>(l)];
    std::vector<float>& values = cache.values[static_cast<std::size_t>(l)];
    for (std::int64_t h = 0; h < kvHeads; ++h) {
        if (ls.qkNorm == QkNorm::PerHead) rmsNormInPlace(k.data() + h * dh, dh, layer.kNorm, c.layerNormEps);
        rotate(k.data() + h * dh, position, rotary);
        std::copy(k.begin() + h * dh, k.begin() + (h + 1) * dh, keys.begin() + (h * cache.capacity + position) * dh);
        std::copy(v.begin() + h * dh, v.begin() + (h + 1) * dh, values.begin() + (h * cache.capacity + position) * dh);
    }
    // the query sees keys up to its own position, the last W on a sliding layer
    const std::int64_t first = layer.slides ? std::max<std::int64_t>(0, position - ls.slidingWindow + 1) : 0;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dh)));
    std::vector<float> context(static_cast<std::size_t>(heads * dh), 0.0f), scores(static_cast<std::size_t>(position + 1));
    const bool watch = l == cache.watchLayer;
    if (watch) cache.watched.assign(static_cast<std::size_t>(heads * (position + 1)), 0.0f);
    for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t kv = h / groups;
        const float* qh = q.data() + h * dh;
        float top = -std::numeric_limits<float>::infinity();
        for (std::int64_t j = first; j <= position; ++j) {
            scores[static_cast<std::size_t>(j)] = dotProduct(qh, keys.data() + (kv * cache.capacity + j) * dh, dh) * scale;
            top = std::max(top, scores[static_cast<std::size_t>(j)]);
        }
        double total = 0;
        for (std::int64_t j = first; j <= position; ++j) total += (scores[static_cast<std::size_t>(j)] = std::exp(scores[static_cast<std::size_t>(j)] - top));
        float* out = context.data() + h * dh;
        for (std::int64_t j = first; j <= position; ++j) {
            const float w = static_cast<float>(scores[static_cast<std::size_t>(j)] / total);
            if (watch) cache.watched[static_cast<std::size_t>(h * (position + 1) + j)] = w;
            const float* vj = values.data() + (kv * cache.capacity + j) * dh;
            for (std::int64_t f = 0; f < dh; ++f) out[f] += w * vj[f];
        }
    }
    const std::vector<float> o = multiply(layer.o, context, layer.oBias);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += o[i];
}

Result<void> DecoderStepper::feedForward(const Layer& layer, std::vector<float>& x) const {
    const ModelConfig& c = *m_config;
    const std::vector<float> m = rmsNorm(x, layer.postNorm, c.layerNormEps);
    std::vector<float> out(x.size(), 0.0f);
    if (!layer.sparse && c.llama.fusedProjections) {
        std::vector<float> gateUp = multiply(layer.gateUp, m);
        const std::size_t inner = gateUp.size() / 2;
        std::vector<float> hidden(inner);
        for (std::size_t i = 0; i < inner; ++i) hidden[i] = silu(gateUp[i]) * gateUp[i + inner];
        out = multiply(layer.down, hidden);
    } else if (!layer.sparse) {
        std::vector<float> g = multiply(layer.gate, m, layer.gateBias), u = multiply(layer.up, m, layer.upBias);
        for (std::size_t i = 0; i < g.size(); ++i) g[i] = silu(g[i]) * u[i];
        out = multiply(layer.down, g, layer.downBias);
    } else {
        PlainTensor logits = PlainTensor::zeros(DType::F32, {1, c.moe.experts});
        logits.f32 = multiply(layer.router, m);
        auto routing = routeTokens(logits, m_router);
        if (!routing) return routing.error();
        const Routing& r = routing.value();
        for (std::int64_t choice = 0; choice < r.k; ++choice) {
            if (!r.kept[static_cast<std::size_t>(choice)]) continue;
            const auto e = static_cast<std::size_t>(r.expert[static_cast<std::size_t>(choice)]);
            const std::vector<float> y = swiglu(layer.expertGate[e], layer.expertUp[e], layer.expertDown[e], m);
            const float gate = r.gate[static_cast<std::size_t>(choice)];
            for (std::size_t i = 0; i < out.size(); ++i) out[i] += gate * y[i];
        }
        if (c.llama.sharedExpertInner > 0) {  // Qwen2-MoE: gated by sigmoid(x · w)
            const std::vector<float> y = swiglu(layer.sharedGate, layer.sharedUp, layer.sharedDown, m);
            const float gate = 1.0f / (1.0f + std::exp(-multiply(layer.sharedExpertGate, m)[0]));
            for (std::size_t i = 0; i < out.size(); ++i) out[i] += gate * y[i];
        }
    }
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += out[i];
    return {};
}

Result<std::vector<float>> DecoderStepper::step(std::int64_t id, DecoderCache& cache, const DecoderRotary& rotary) const {
    if (cache.length >= cache.capacity) return Error{ErrorCode::InvalidArgument, "the key/value cache is full"};
    auto row = m_checkpoint->readRowsF32("embed_tokens.weight", {id});
    if (!row) return row.error();
    std::vector<float> x = std::move(row.value().f32);
    for (std::int64_t l = 0; l < m_config->numLayers; ++l) {
        const Layer& layer = m_layers[static_cast<std::size_t>(l)];
        attention(layer, l, x, cache, rotary);
        if (auto ffn = feedForward(layer, x); !ffn) return ffn.error();
    }
    ++cache.length;
    rmsNormInPlace(x.data(), static_cast<std::int64_t>(x.size()), m_finalNorm, m_config->layerNormEps);
    return logits(x.data());
}

std::vector<float> DecoderStepper::logits(const float* finalHidden) const {
    std::vector<float> out(static_cast<std::size_t>(m_head.rows));
    storedMatMul(m_head, finalHidden, 1, out.data());
    return out;
}

}  // namespace attnscope::engine
