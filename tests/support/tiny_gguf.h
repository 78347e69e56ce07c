#pragma once
// GGUF files written byte by byte for the tests from the same Hugging Face tensors a LlamaSpec
// folder holds, as llama.cpp's converter writes them: GGUF's tensor names, dimensions listed
// fastest first, q/k rows reordered for the `llama` architecture, experts stacked per layer,
// Gemma's norms stored as 1 + w. Quantized tensors hold random blocks with scales of a sensible
// size; the writer returns the floats each tensor then stands for (Hugging Face's order), which
// a folder written from them must reproduce exactly.

#include "io/checkpoint/ggml_dequant.h"
#include "io/checkpoint/gguf_file.h"
#include "tiny_llama.h"

#include <attnscope/model_tokenizer.h>

#include <functional>
#include <variant>

namespace attnscope::testing {

using engine::GgmlType;

// A GGUF image, field by field (little-endian).
struct GgufBytes {
    std::vector<std::uint8_t> bytes;
    template <class T>
    GgufBytes& put(T v) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
        bytes.insert(bytes.end(), p, p + sizeof(T));
        return *this;
    }
    GgufBytes& str(const std::string& s) {
        put<std::uint64_t>(s.size());
        bytes.insert(bytes.end(), s.begin(), s.end());
        return *this;
    }
};

/// One metadata value: u32, f32, string, bool, or arrays of strings / f32 / i32.
using GgufMeta = std::variant<std::uint32_t, float, std::string, bool, std::vector<std::string>, std::vector<float>, std::vector<std::int32_t>>;

inline void putMeta(GgufBytes& b, const std::string& key, const GgufMeta& value) {
    b.str(key);
    if (const auto* u = std::get_if<std::uint32_t>(&value)) b.put<std::uint32_t>(4).put(*u);
    if (const auto* f = std::get_if<float>(&value)) b.put<std::uint32_t>(6).put(*f);
    if (const auto* s = std::get_if<std::string>(&value)) b.put<std::uint32_t>(8).str(*s);
    if (const auto* x = std::get_if<bool>(&value)) b.put<std::uint32_t>(7).put<std::uint8_t>(*x ? 1 : 0);
    if (const auto* a = std::get_if<std::vector<std::string>>(&value)) {
        b.put<std::uint32_t>(9).put<std::uint32_t>(8).put<std::uint64_t>(a->size());
        for (const auto& s : *a) b.str(s);
    }
    if (const auto* a = std::get_if<std::vector<float>>(&value)) {
        b.put<std::uint32_t>(9).put<std::uint32_t>(6).put<std::uint64_t>(a->size());
        for (float f : *a) b.put(f);
    }
    if (const auto* a = std::get_if<std::vector<std::int32_t>>(&value)) {
        b.put<std::uint32_t>(9).put<std::uint32_t>(5).put<std::uint64_t>(a->size());
        for (auto i : *a) b.put(i);
    }
}

struct GgufTensorOut {
    std::string name;
    std::vector<std::uint64_t> dims;  // fastest first
    GgmlType type;
    std::vector<std::uint8_t> data;
    std::map<std::int64_t, std::vector<std::uint8_t>> experts;  // a stacked tensor's slices by expert
};

// The bytes of `values` (GGUF's order) in a float type.
inline std::vector<std::uint8_t> encodeFloats(const std::vector<float>& values, GgmlType type) {
    std::vector<std::uint8_t> out;
    for (float v : values) {
        if (type == GgmlType::F32) {
            const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
            out.insert(out.end(), p, p + 4);
        } else {
            const std::uint16_t h = type == GgmlType::F16 ? toF16(v) : toBf16(v);
            out.push_back(static_cast<std::uint8_t>(h & 0xFF));
            out.push_back(static_cast<std::uint8_t>(h >> 8));
        }
    }
    return out;
}

// Where each block format keeps its half-precision scales (and minimums), and their size: values
// of a few tenths at most.
inline std::vector<std::pair<int, float>> blockScales(GgmlType type) {
    switch (type) {
        case GgmlType::Q4_0: case GgmlType::Q5_0: return {{0, 0.03f}};
        case GgmlType::Q4_1: case GgmlType::Q5_1: return {{0, 0.02f}, {2, 0.1f}};
        case GgmlType::Q8_0: return {{0, 0.003f}};
        case GgmlType::Q2_K: return {{80, 0.01f}, {82, 0.01f}};
        case GgmlType::Q3_K: return {{108, 0.003f}};
        case GgmlType::Q4_K: return {{0, 0.0005f}, {2, 0.003f}};
        case GgmlType::Q5_K: return {{0, 0.0003f}, {2, 0.003f}};
        case GgmlType::Q6_K: return {{208, 0.0001f}};
        default: return {};
    }
}

// Random blocks of a quantized type for `elements` values, scales set to sensible halves.
inline std::vector<std::uint8_t> randomBlocks(GgmlType type, std::int64_t elements, std::mt19937_64& rng) {
    std::int64_t blockElements = 0, blockBytes = 0;
    engine::ggmlBlockLayout(static_cast<std::uint32_t>(type), blockElements, blockBytes);
    std::vector<std::uint8_t> out(static_cast<std::size_t>(elements / blockElements * blockBytes));
    for (auto& v : out) v = static_cast<std::uint8_t>(rng());
    std::uniform_real_distribution<float> jitter(0.5f, 1.5f);
    for (std::size_t b = 0; b < out.size(); b += static_cast<std::size_t>(blockBytes)) {
        for (const auto& [at, size] : blockScales(type)) {
            const std::uint16_t h = toF16(size * jitter(rng));
            out[b + at] = static_cast<std::uint8_t>(h & 0xFF);
            out[b + at + 1] = static_cast<std::uint8_t>(h >> 8);
        }
    }
    return out;
}

// llama.cpp's converter's permute: Hugging Face's row (h, half, i) of a head of d rows becomes
// row (h, i, half).
inline std::vector<float> llamaCppRowOrder(const std::vector<float>& hf, std::int64_t heads, std::int64_t cols) {
    const std::int64_t rows = static_cast<std::int64_t>(hf.size()) / cols, d = rows / heads;
    std::vector<float> out(hf.size());
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t half = 0; half < 2; ++half)
            for (std::int64_t i = 0; i < d / 2; ++i)
                for (std::int64_t c = 0; c < cols; ++c)
                    out[static_cast<std::size_t>(((h * d) + 2 * i + half) * cols + c)] =
                        hf[static_cast<std::size_t>(((h * d) + half * (d / 2) + i) * cols + c)];
    return out;
}
// Its inverse, for values made in GGUF's order.
inline std::vector<float> huggingFaceRowOrder(const std::vector<float>& gguf, std::int64_t heads, std::int64_t cols) {
    const std::int64_t rows = static_cast<std::int64_t>(gguf.size()) / cols, d = rows / heads;
    std::vector<float> out(gguf.size());
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t half = 0; half < 2; ++half)
            for (std::int64_t i = 0; i < d / 2; ++i)
                for (std::int64_t c = 0; c < cols; ++c)
                    out[static_cast<std::size_t>(((h * d) + half * (d / 2) + i) * cols + c)] =
                        gguf[static_cast<std::size_t>(((h * d) + 2 * i + half) * cols + c)];
    return out;
}

struct GgufModelOptions {
    std::string arch = "llama";
    /// The storage type of each Hugging Face tensor (norms stay F32 whatever it says, as llama.cpp keeps them).
    std::function<GgmlType(const std::string&)> typeOf = [](const std::string&) { return GgmlType::F32; };
    std::map<std::string, GgufMeta> extraMetadata;  // e.g. the tokenizer's keys
    bool stackExperts = true;  // false: one tensor per expert (older Mixtral files)
};

// HF name (without "model.") → GGUF name, and the expert it belongs to (-1: none).
inline std::pair<std::string, std::int64_t> ggufNameOf(const std::string& hf, const std::string& arch) {
    if (hf == "embed_tokens.weight") return {"token_embd.weight", -1};
    if (hf == "norm.weight") return {"output_norm.weight", -1};
    const auto dot = hf.find('.', 7);
    const std::string block = "blk." + hf.substr(7, dot - 7) + ".", suffix = hf.substr(dot + 1);
    const bool gemma = arch == "gemma2" || arch == "gemma3";
    static const std::map<std::string, std::string> names = {
        {"input_layernorm.weight", "attn_norm"}, {"self_attn.q_proj.weight", "attn_q"}, {"self_attn.q_proj.bias", "attn_q.bias"},
        {"self_attn.k_proj.weight", "attn_k"}, {"self_attn.k_proj.bias", "attn_k.bias"}, {"self_attn.v_proj.weight", "attn_v"},
        {"self_attn.v_proj.bias", "attn_v.bias"}, {"self_attn.o_proj.weight", "attn_output"}, {"self_attn.o_proj.bias", "attn_output.bias"},
        {"self_attn.q_norm.weight", "attn_q_norm"}, {"self_attn.k_norm.weight", "attn_k_norm"}, {"mlp.gate_proj.weight", "ffn_gate"},
        {"mlp.up_proj.weight", "ffn_up"}, {"mlp.down_proj.weight", "ffn_down"}, {"mlp.gate.weight", "ffn_gate_inp"},
        {"block_sparse_moe.gate.weight", "ffn_gate_inp"}, {"mlp.shared_expert.gate_proj.weight", "ffn_gate_shexp"},
        {"mlp.shared_expert.up_proj.weight", "ffn_up_shexp"}, {"mlp.shared_expert.down_proj.weight", "ffn_down_shexp"},
        {"mlp.shared_expert_gate.weight", "ffn_gate_inp_shexp"},
    };
    static const std::map<std::string, std::string> gemmaNames = {
        {"post_attention_layernorm.weight", "post_attention_norm"}, {"pre_feedforward_layernorm.weight", "ffn_norm"},
        {"post_feedforward_layernorm.weight", "post_ffw_norm"}};
    if (gemma && gemmaNames.count(suffix)) return {block + gemmaNames.at(suffix) + ".weight", -1};
    if (suffix == "post_attention_layernorm.weight") return {block + "ffn_norm.weight", -1};
    if (names.count(suffix)) {
        const std::string n = names.at(suffix);
        return {block + n + (n.find('.') == std::string::npos ? ".weight" : ""), -1};
    }
    // experts: mlp.experts.E.gate_proj.weight / block_sparse_moe.experts.E.w1.weight
    const auto experts = suffix.find("experts.");
    const std::string rest = suffix.substr(experts + 8);
    const std::int64_t e = std::stoll(rest.substr(0, rest.find('.')));
    const std::string m = rest.substr(rest.find('.') + 1);
    const std::string which = (m == "gate_proj.weight" || m == "w1.weight") ? "gate" : (m == "up_proj.weight" || m == "w3.weight") ? "up" : "down";
    return {block + "ffn_" + which + "_exps.weight", e};
}

// The metadata llama.cpp's converter writes for a LlamaSpec.
inline std::map<std::string, GgufMeta> ggufMetadataOf(const LlamaSpec& s, const std::string& arch) {
    std::map<std::string, GgufMeta> m;
    const auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    m["general.architecture"] = arch;
    m[arch + ".context_length"] = u(s.positions);
    m[arch + ".embedding_length"] = u(s.hidden);
    m[arch + ".block_count"] = u(s.layers);
    m[arch + ".feed_forward_length"] = u(s.inner);
    m[arch + ".attention.head_count"] = u(s.heads);
    m[arch + ".attention.head_count_kv"] = u(s.kvHeads);
    m[arch + ".attention.key_length"] = u(s.headDim);
    m[arch + ".attention.value_length"] = u(s.headDim);
    m[arch + ".attention.layer_norm_rms_epsilon"] = 1e-5f;
    m[arch + ".rope.freq_base"] = static_cast<float>(s.theta);
    m[arch + ".vocab_size"] = u(s.vocab);
    if (s.experts > 0) {
        m[arch + ".expert_count"] = u(s.experts);
        m[arch + ".expert_used_count"] = u(s.topK);
        if (arch != "llama") m[arch + ".expert_feed_forward_length"] = u(s.expertInner);
        if (s.sharedInner > 0) m[arch + ".expert_shared_feed_forward_length"] = u(s.sharedInner);
    }
    if (s.window > 0) m[arch + ".attention.sliding_window"] = u(s.window);
    if (s.softcap > 0) m[arch + ".attn_logit_softcapping"] = static_cast<float>(s.softcap);
    m["tokenizer.ggml.bos_token_id"] = 1u;
    m["tokenizer.ggml.eos_token_id"] = 2u;
    return m;
}

inline bool isNormName(const std::string& hf) { return hf.size() >= 11 && hf.compare(hf.size() - 11, 11, "norm.weight") == 0; }

/// Writes `hf` (Hugging Face tensors without "model.") as a GGUF file; returns what each tensor
/// then stands for in Hugging Face's order.
inline TensorMap writeGgufModel(const llama_fs::path& path, const LlamaSpec& s, const TensorMap& hf, const GgufModelOptions& o = {}) {
    std::mt19937_64 rng(17);
    const bool gemma = o.arch == "gemma2" || o.arch == "gemma3";
    TensorMap represented;
    std::map<std::string, GgufTensorOut> out;  // by GGUF name
    for (const auto& [name, t] : hf) {
        auto [ggufName, expert] = ggufNameOf(name, o.arch);
        if (expert >= 0 && !o.stackExperts) {
            ggufName = ggufName.substr(0, ggufName.size() - std::string("_exps.weight").size()) + "." + std::to_string(expert) + ".weight";
            expert = -1;
        }
        const GgmlType type = isNormName(name) || t.shape.size() == 1 ? GgmlType::F32 : o.typeOf(name);
        const std::int64_t cols = t.shape.back(), rows = static_cast<std::int64_t>(t.f32.size()) / cols;
        const bool qk = o.arch == "llama" && (name.find("q_proj") != std::string::npos || name.find("k_proj") != std::string::npos);
        const std::int64_t heads = name.find("q_proj") != std::string::npos ? s.heads : s.kvHeads;
        std::vector<float> values;  // what the file stands for, in HF's order
        std::vector<std::uint8_t> bytes;
        if (type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16) {
            std::vector<float> stored = t.f32;
            if (gemma && isNormName(name))
                for (float& v : stored) v += 1.0f;
            if (qk) stored = llamaCppRowOrder(stored, heads, t.shape.size() == 1 ? 1 : cols);
            bytes = encodeFloats(stored, type);
            std::vector<float> back(stored.size());
            engine::dequantizeGgml(static_cast<std::uint32_t>(type), bytes.data(), static_cast<std::int64_t>(back.size()), back.data());
            if (qk) back = huggingFaceRowOrder(back, heads, t.shape.size() == 1 ? 1 : cols);
            if (gemma && isNormName(name))
                for (float& v : back) v -= 1.0f;
            values = back;
        } else {
            bytes = randomBlocks(type, rows * cols, rng);
            std::vector<float> back(static_cast<std::size_t>(rows * cols));
            engine::dequantizeGgml(static_cast<std::uint32_t>(type), bytes.data(), rows * cols, back.data());
            values = qk ? huggingFaceRowOrder(back, heads, cols) : back;
        }
        PlainTensor r = t;
        r.f32 = values;
        represented[name] = std::move(r);
        std::vector<std::uint64_t> dims(t.shape.rbegin(), t.shape.rend());
        GgufTensorOut& slot = out[ggufName];
        if (expert < 0) {
            slot = GgufTensorOut{ggufName, dims, type, std::move(bytes), {}};
            continue;
        }
        // stacked experts: the slowest dimension counts them
        if (slot.name.empty()) slot = GgufTensorOut{ggufName, dims, type, {}, {}};
        slot.experts[expert] = std::move(bytes);
    }
    for (auto& [name, t] : out) {
        if (t.experts.empty()) continue;
        for (const auto& [e, bytes] : t.experts) t.data.insert(t.data.end(), bytes.begin(), bytes.end());
        t.dims.push_back(t.experts.size());
    }
    std::map<std::string, GgufMeta> metadata = ggufMetadataOf(s, o.arch);
    for (const auto& [k, v] : o.extraMetadata) metadata[k] = v;
    GgufBytes b;
    b.put<std::uint32_t>(0x46554747).put<std::uint32_t>(3).put<std::uint64_t>(out.size()).put<std::uint64_t>(metadata.size());
    for (const auto& [k, v] : metadata) putMeta(b, k, v);
    std::uint64_t offset = 0;
    for (const auto& [name, t] : out) {
        b.str(name).put<std::uint32_t>(static_cast<std::uint32_t>(t.dims.size()));
        for (auto d : t.dims) b.put(d);
        b.put(static_cast<std::uint32_t>(t.type)).put(offset);
        offset += (t.data.size() + 31) / 32 * 32;
    }
    while (b.bytes.size() % 32 != 0) b.bytes.push_back(0);
    for (const auto& [name, t] : out) {
        b.bytes.insert(b.bytes.end(), t.data.begin(), t.data.end());
        while (b.bytes.size() % 32 != 0) b.bytes.push_back(0);
    }
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.bytes.data()), static_cast<std::streamsize>(b.bytes.size()));
    return represented;
}

/// A byte-level tokenizer as GGUF metadata: the 256 byte symbols (id = byte), then "ab" 256,
/// "Ġa" 257 and the control token "<|end|>" 258 (end of text); merges "a b", "Ġ a".
inline std::map<std::string, GgufMeta> byteLevelTokenizerMetadata() {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) {
        const char32_t c = engine::byteLevelChar(static_cast<unsigned char>(b));
        tokens.push_back(c < 0x80 ? std::string(1, static_cast<char>(c))
                                  : std::string{static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))});
    }
    tokens.insert(tokens.end(), {"ab", "\u0120a", "<|end|>"});
    std::vector<std::int32_t> types(tokens.size(), 1);
    types.back() = 3;
    return {{"tokenizer.ggml.model", std::string("gpt2")},
            {"tokenizer.ggml.pre", std::string("gpt-2")},
            {"tokenizer.ggml.tokens", tokens},
            {"tokenizer.ggml.token_type", types},
            {"tokenizer.ggml.merges", std::vector<std::string>{"a b", "\u0120 a"}},
            {"tokenizer.ggml.eos_token_id", 258u}};
}

/// A folder of `tensors` (F32) with `spec`'s config.json: the Hugging Face twin of a GGUF file.
inline void writeLlamaFolderWith(const llama_fs::path& dir, const LlamaSpec& s, const TensorMap& tensors) {
    llama_fs::create_directories(dir);
    writeText(dir / "config.json", s.configJson());
    std::vector<StWriteItem> items;
    for (const auto& [name, t] : tensors) items.push_back(StWriteItem(s.prefix + name, &t));
    auto written = writeSafetensors((dir / "model.safetensors").string(), items, {{"format", "pt"}});
    if (!written) throw std::runtime_error(written.error().message);
}

}  // namespace attnscope::testing
