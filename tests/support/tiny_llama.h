#pragma once
// Llama-family model folders written in Hugging Face naming for the tests: the config of each
// family (LlamaSpec), random weights (F32, or rounded to BF16 / F16 and stored so), the
// safetensors file, and a fixture with a fresh folder and engine per test.

#include <attnscope/engine.h>
#include <attnscope/safetensors.h>

#include "tiny_switch_transformers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

namespace attnscope::testing {

namespace llama_fs = std::filesystem;
using engine::DType;
using engine::PlainTensor;
using engine::StWriteItem;
using engine::writeSafetensors;

struct LlamaSpec {
    std::string type = "llama";
    std::int64_t vocab = 50, hidden = 24, heads = 4, kvHeads = 2, headDim = 8, inner = 40, layers = 2;
    bool bias = false;          // attention_bias
    std::int64_t window = 0;    // sliding_window (mistral: every layer; qwen2: from windowFrom on)
    std::int64_t windowFrom = 0;  // qwen2's max_window_layers
    std::string rope = "null";  // the rope_scaling JSON
    double theta = 10000;
    std::string prefix = "model.";
    std::int64_t experts = 0, topK = 2;  // num_local_experts / num_experts, num_experts_per_tok
    bool normalize = true;               // norm_topk_prob (mixtral: always)
    std::int64_t expertInner = 40, sharedInner = 0, sparseStep = 1;  // qwen2_moe's sizes, decoder_sparse_step
    double clip = 0;                     // olmoe's clip_qkv
    std::string halfType;                // "BF16" or "F16": weights stored so; "": F32
    // Gemma (type gemma2, gemma3_text): query_pre_attn_scalar, attn_logit_softcapping (0: null),
    // every `pattern`-th layer global, Gemma 3's rope_local_base_freq
    double queryScalar = 12, softcap = 0, localBase = 100;
    std::int64_t pattern = 2;
    // Phi-3: partial_rotary_factor, original_max_position_embeddings
    double partial = 1;
    std::int64_t originalContext = 0;
    std::int64_t positions = 64;         // max_position_embeddings
    std::string extraConfig;             // appended to config.json's fields

    bool gemma() const { return type == "gemma2" || type == "gemma3_text"; }
    bool fused() const { return type == "phi3"; }

    bool qwenLayout() const { return type == "qwen2_moe" || type == "qwen3_moe" || type == "olmoe"; }
    bool qkvBias() const { return bias || type == "qwen2" || type == "qwen2_moe"; }
    bool outputBias() const { return bias && type != "qwen2" && type != "qwen2_moe"; }
    bool perHeadNorm() const { return type == "qwen3" || type == "qwen3_moe" || type == "gemma3_text"; }
    bool wholeNorm() const { return type == "olmoe"; }
    bool sparse(std::int64_t layer) const { return experts > 0 && (layer + 1) % sparseStep == 0; }
    bool slides(std::int64_t layer) const {
        if (gemma()) return window > 0 && (layer + 1) % pattern != 0;
        return window > 0 && layer >= windowFrom;
    }
    std::string routerName(const std::string& p) const { return p + (qwenLayout() ? "mlp.gate.weight" : "block_sparse_moe.gate.weight"); }
    // gate, up, down of expert e
    std::array<std::string, 3> expertNames(const std::string& p, std::int64_t e) const {
        if (qwenLayout()) {
            const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
            return {x + "gate_proj.weight", x + "up_proj.weight", x + "down_proj.weight"};
        }
        const std::string x = p + "block_sparse_moe.experts." + std::to_string(e) + ".";
        return {x + "w1.weight", x + "w3.weight", x + "w2.weight"};
    }
    std::string configJson(const std::string& extra = "") const {
        std::string moe;
        if (experts > 0 && type == "mixtral")
            moe = ", \"num_local_experts\": " + std::to_string(experts) + ", \"num_experts_per_tok\": " + std::to_string(topK);
        else if (experts > 0)
            moe = ", \"num_experts\": " + std::to_string(experts) + ", \"num_experts_per_tok\": " + std::to_string(topK) +
                  ", \"norm_topk_prob\": " + (normalize ? "true" : "false") + ", \"moe_intermediate_size\": " +
                  std::to_string(expertInner) + ", \"shared_expert_intermediate_size\": " + std::to_string(sharedInner) +
                  ", \"decoder_sparse_step\": " + std::to_string(sparseStep) + ", \"mlp_only_layers\": []";
        std::string sliding;
        if (window > 0 && (type == "qwen2" || type == "qwen3"))
            sliding = ", \"use_sliding_window\": true, \"sliding_window\": " + std::to_string(window) +
                      ", \"max_window_layers\": " + std::to_string(windowFrom);
        else if (window > 0)
            sliding = ", \"sliding_window\": " + std::to_string(window);
        else if (gemma())
            sliding = ", \"sliding_window\": null";
        std::string own = ", \"hidden_act\": \"silu\"";
        if (gemma())
            own = ", \"hidden_activation\": \"gelu_pytorch_tanh\", \"query_pre_attn_scalar\": " + std::to_string(queryScalar) +
                  ", \"attn_logit_softcapping\": " + (softcap > 0 ? std::to_string(softcap) : std::string("null")) +
                  ", \"final_logit_softcapping\": null" +
                  (type == "gemma3_text" ? ", \"sliding_window_pattern\": " + std::to_string(pattern) +
                                               ", \"rope_local_base_freq\": " + std::to_string(localBase)
                                         : std::string());
        if (fused())
            own += ", \"partial_rotary_factor\": " + std::to_string(partial) +
                   (originalContext > 0 ? ", \"original_max_position_embeddings\": " + std::to_string(originalContext) : std::string());
        return "{\"model_type\": \"" + type + "\", \"vocab_size\": " + std::to_string(vocab) + ", \"hidden_size\": " +
               std::to_string(hidden) + ", \"num_attention_heads\": " + std::to_string(heads) +
               ", \"num_key_value_heads\": " + std::to_string(kvHeads) + ", \"head_dim\": " + std::to_string(headDim) +
               ", \"intermediate_size\": " + std::to_string(type == "olmoe" ? expertInner : inner) +
               ", \"num_hidden_layers\": " + std::to_string(layers) +
               ", \"max_position_embeddings\": " + std::to_string(positions) + ", \"rms_norm_eps\": 1e-05, \"rope_theta\": " +
               std::to_string(theta) + ", \"rope_scaling\": " + rope + ", \"attention_bias\": " + (bias ? "true" : "false") + own +
               ", \"bos_token_id\": 1, \"eos_token_id\": 2" + sliding + moe +
               (clip > 0 ? ", \"clip_qkv\": " + std::to_string(clip) : std::string()) + extraConfig + extra + "}";
    }
};

// Rounds to the nearest BF16 (ties to even), as the stored weight holds it.
inline std::uint16_t toBf16(float value) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, 4);
    bits += 0x7FFF + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>(bits >> 16);
}
inline float fromBf16(std::uint16_t h) {
    const std::uint32_t bits = std::uint32_t{h} << 16;
    float value = 0;
    std::memcpy(&value, &bits, 4);
    return value;
}

// IEEE half, nearest (ties to even); values below its normal range become 0 (the weights here
// are never near 65504).
inline std::uint16_t toF16(float value) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, 4);
    const std::uint32_t sign = (bits >> 16) & 0x8000;
    const int exponent = static_cast<int>((bits >> 23) & 0xFF) - 127 + 15;
    if (exponent <= 0) return static_cast<std::uint16_t>(sign);
    const std::uint32_t mantissa = bits & 0x7FFFFF, rest = mantissa & 0x1FFF;
    std::uint32_t half = sign | (static_cast<std::uint32_t>(exponent) << 10) | (mantissa >> 13);
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
    return static_cast<std::uint16_t>(half);
}
inline float fromF16(std::uint16_t h) {
    const std::uint32_t exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
    if (exponent == 0) return (h & 0x8000) ? -0.0f : 0.0f;  // (toF16 writes no subnormals)
    const std::uint32_t bits = (std::uint32_t{h} & 0x8000) << 16 | (exponent - 15 + 127) << 23 | mantissa << 13;
    float value = 0;
    std::memcpy(&value, &bits, 4);
    return value;
}

inline std::uint16_t toHalf(const std::string& type, float v) { return type == "F16" ? toF16(v) : toBf16(v); }
inline float roundedAs(const std::string& type, float v) {
    if (type.empty()) return v;
    return type == "F16" ? fromF16(toF16(v)) : fromBf16(toBf16(v));
}

inline TensorMap llamaTensors(const LlamaSpec& s) {
    std::mt19937_64 rng(9);
    TensorMap t;
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, double stddev, double mean = 0.0) {
        std::normal_distribution<float> normal(static_cast<float>(mean), static_cast<float>(stddev));
        PlainTensor x = PlainTensor::zeros(DType::F32, shape);
        for (float& v : x.f32) v = roundedAs(s.halfType, normal(rng));
        t[name] = std::move(x);
    };
    auto swiglu = [&](const std::array<std::string, 3>& names, std::int64_t width) {
        add(names[0], {width, s.hidden}, 1.0 / std::sqrt(double(s.hidden)));
        add(names[1], {width, s.hidden}, 1.0 / std::sqrt(double(s.hidden)));
        add(names[2], {s.hidden, width}, 1.0 / std::sqrt(double(width)));
    };
    const std::int64_t q = s.heads * s.headDim, kv = s.kvHeads * s.headDim;
    add("embed_tokens.weight", {s.vocab, s.hidden}, 1.0);
    for (std::int64_t l = 0; l < s.layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        // Gemma's norms scale by (1 + w): weights near 0
        const double normMean = s.gemma() ? 0.0 : 1.0;
        add(p + "input_layernorm.weight", {s.hidden}, 0.1, normMean);
        add(p + "post_attention_layernorm.weight", {s.hidden}, 0.1, normMean);
        if (s.gemma()) {
            add(p + "pre_feedforward_layernorm.weight", {s.hidden}, 0.1, normMean);
            add(p + "post_feedforward_layernorm.weight", {s.hidden}, 0.1, normMean);
        }
        using Projection = std::tuple<const char*, std::int64_t, std::int64_t>;
        const std::vector<Projection> projections =
            s.fused() ? std::vector<Projection>{{"self_attn.qkv_proj", q + 2 * kv, s.hidden}, {"self_attn.o_proj", s.hidden, q}}
                      : std::vector<Projection>{{"self_attn.q_proj", q, s.hidden}, {"self_attn.k_proj", kv, s.hidden},
                                                {"self_attn.v_proj", kv, s.hidden}, {"self_attn.o_proj", s.hidden, q}};
        for (const auto& [name, rows, cols] : projections) {
            add(p + name + ".weight", {rows, cols}, 1.0 / std::sqrt(double(cols)));
            const bool output = std::string(name) == "self_attn.o_proj";
            if (output ? s.outputBias() : s.qkvBias()) add(p + name + ".bias", {rows}, 0.1);
        }
        if (s.perHeadNorm() || s.wholeNorm()) {
            add(p + "self_attn.q_norm.weight", {s.perHeadNorm() ? s.headDim : q}, 0.1, normMean);
            add(p + "self_attn.k_norm.weight", {s.perHeadNorm() ? s.headDim : kv}, 0.1, normMean);
        }
        if (s.sparse(l)) {
            add(s.routerName(p), {s.experts, s.hidden}, 1.0);
            for (std::int64_t e = 0; e < s.experts; ++e) swiglu(s.expertNames(p, e), s.qwenLayout() ? s.expertInner : s.inner);
            if (s.sharedInner > 0) {
                swiglu({p + "mlp.shared_expert.gate_proj.weight", p + "mlp.shared_expert.up_proj.weight",
                        p + "mlp.shared_expert.down_proj.weight"},
                       s.sharedInner);
                add(p + "mlp.shared_expert_gate.weight", {1, s.hidden}, 1.0);
            }
            continue;
        }
        if (s.fused()) {
            add(p + "mlp.gate_up_proj.weight", {2 * s.inner, s.hidden}, 1.0 / std::sqrt(double(s.hidden)));
            add(p + "mlp.down_proj.weight", {s.hidden, s.inner}, 1.0 / std::sqrt(double(s.inner)));
            continue;
        }
        swiglu({p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight", p + "mlp.down_proj.weight"}, s.inner);
    }
    add("norm.weight", {s.hidden}, 0.1, s.gemma() ? 0.0 : 1.0);
    return t;
}

// A safetensors file of BF16 or F16 tensors written byte by byte (the writer keeps F32).
inline void writeHalfSafetensors(const llama_fs::path& path, const std::string& type, const std::map<std::string, const PlainTensor*>& tensors) {
    std::string header = "{";
    std::string data;
    for (const auto& [name, t] : tensors) {
        std::string shape;
        for (auto d : t->shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
        const std::size_t begin = data.size();
        for (float v : t->f32) {
            const std::uint16_t h = toHalf(type, v);
            data.push_back(static_cast<char>(h & 0xFF));
            data.push_back(static_cast<char>(h >> 8));
        }
        header += (header.size() > 1 ? "," : "") + ("\"" + name + "\":{\"dtype\":\"" + type + "\",\"shape\":[" + shape +
                                                    "],\"data_offsets\":[" + std::to_string(begin) + "," +
                                                    std::to_string(data.size()) + "]}");
    }
    header += "}";
    while (header.size() % 8 != 0) header += ' ';
    std::ofstream out(path, std::ios::binary);
    const std::uint64_t size = header.size();
    for (int b = 0; b < 8; ++b) out.put(static_cast<char>((size >> (8 * b)) & 0xFF));
    out << header << data;
}

inline TensorMap writeLlamaFolder(const llama_fs::path& dir, const LlamaSpec& s) {
    llama_fs::create_directories(dir);
    writeText(dir / "config.json", s.configJson());
    TensorMap tensors = llamaTensors(s);
    const PlainTensor head = PlainTensor::zeros(DType::F32, {s.vocab, s.hidden});  // the LM head, not read
    if (!s.halfType.empty()) {
        std::map<std::string, const PlainTensor*> named{{"lm_head.weight", &head}};
        for (const auto& [name, t] : tensors) named[s.prefix + name] = &t;
        writeHalfSafetensors(dir / "model.safetensors", s.halfType, named);
        return tensors;
    }
    std::vector<StWriteItem> items{StWriteItem("lm_head.weight", &head)};
    for (const auto& [name, t] : tensors) items.push_back(StWriteItem(s.prefix + name, &t));
    auto written = writeSafetensors((dir / "model.safetensors").string(), items, {{"format", "pt"}});
    if (!written) throw std::runtime_error(written.error().message);
    return tensors;
}


// A fresh folder and engine per test (`Base`: plain or parameterised).
template <typename Base>
class LlamaFolder : public Base {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string name = std::string(info->test_suite_name()) + "-" + info->name();
        std::replace(name.begin(), name.end(), '/', '-');
        m_dir = llama_fs::temp_directory_path() / ("attnscope-llama-" + std::to_string(::getpid()) + "-" + name);
        llama_fs::remove_all(m_dir);
        auto engine = engine::Engine::create();
        ASSERT_TRUE(engine.ok());
        m_engine = std::move(engine.value());
    }
    void TearDown() override { llama_fs::remove_all(m_dir); }
    llama_fs::path m_dir;
    std::unique_ptr<engine::Engine> m_engine;
};
class LlamaModel : public LlamaFolder<::testing::TestWithParam<int>> {};
class LlamaWeights : public LlamaFolder<::testing::Test> {};

}  // namespace attnscope::testing
