#pragma once
// A small random Switch Transformers folder in Hugging Face's layout, written by the tests: the
// encoder (and a decoder tensor and an LM head the reader must ignore), config.json in
// SwitchTransformersConfig names, and a spiece.model trained here on a tiny corpus with T5's
// special ids (pad 0, eos 1, unk 2) by Debian's spm_train (the library is never linked into a
// binary that loads LibTorch: engine/sentencepiece_shim/sentencepiece_shim.h).

#include "tiny_model.h"

#include <attnscope/safetensors.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnscope::testing {

struct TinySwitchSpec {
    std::int64_t vocab = 40, d = 16, dkv = 4, heads = 3, ff = 20, layers = 3, sparseStep = 2;
    std::int64_t experts = 4, capacity = 3, buckets = 8, maxDistance = 20;
    bool sharedEmbedding = true;  ///< false: only encoder.embed_tokens.weight (an encoder-only export)
    std::uint64_t seed = 5;
    bool sparse(std::int64_t l) const { return sparseStep > 0 && (sparseStep == 1 || l % sparseStep == 1); }
    std::string configJson(const std::string& extra = "") const {
        return "{\"model_type\": \"switch_transformers\", \"vocab_size\": " + std::to_string(vocab) +
               ", \"d_model\": " + std::to_string(d) + ", \"d_kv\": " + std::to_string(dkv) +
               ", \"d_ff\": " + std::to_string(ff) + ", \"num_layers\": " + std::to_string(layers) +
               ", \"num_heads\": " + std::to_string(heads) + ", \"num_experts\": " + std::to_string(experts) +
               ", \"expert_capacity\": " + std::to_string(capacity) + ", \"encoder_sparse_step\": " +
               std::to_string(sparseStep) + ", \"relative_attention_num_buckets\": " + std::to_string(buckets) +
               ", \"relative_attention_max_distance\": " + std::to_string(maxDistance) +
               ", \"layer_norm_epsilon\": 1e-06, \"dense_act_fn\": \"relu\"" +
               ", \"router_bias\": false, \"eos_token_id\": 1, \"pad_token_id\": 0" + extra + "}";
    }
};

using TensorMap = std::map<std::string, engine::PlainTensor>;

inline TensorMap tinySwitchTensors(const TinySwitchSpec& s) {
    std::mt19937_64 rng(s.seed);
    TensorMap t;
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, double stddev, double mean = 0.0) {
        std::normal_distribution<float> normal(static_cast<float>(mean), static_cast<float>(stddev));
        engine::PlainTensor x = engine::PlainTensor::zeros(engine::DType::F32, shape);
        for (float& v : x.f32) v = normal(rng);
        t[name] = std::move(x);
    };
    const std::int64_t inner = s.heads * s.dkv;
    add(s.sharedEmbedding ? "shared.weight" : "encoder.embed_tokens.weight", {s.vocab, s.d}, 1.0);
    for (std::int64_t l = 0; l < s.layers; ++l) {
        const std::string a = "encoder.block." + std::to_string(l) + ".layer.0.";
        const std::string f = "encoder.block." + std::to_string(l) + ".layer.1.";
        add(a + "SelfAttention.q.weight", {inner, s.d}, 1.0 / std::sqrt(double(s.d * s.dkv)));
        add(a + "SelfAttention.k.weight", {inner, s.d}, 1.0 / std::sqrt(double(s.d)));
        add(a + "SelfAttention.v.weight", {inner, s.d}, 1.0 / std::sqrt(double(s.d)));
        add(a + "SelfAttention.o.weight", {s.d, inner}, 1.0 / std::sqrt(double(inner)));
        if (l == 0) add(a + "SelfAttention.relative_attention_bias.weight", {s.buckets, s.heads}, 0.5);
        add(a + "layer_norm.weight", {s.d}, 0.1, 1.0);
        add(f + "layer_norm.weight", {s.d}, 0.1, 1.0);
        if (s.sparse(l)) {
            add(f + "mlp.router.classifier.weight", {s.experts, s.d}, 1.0);
            for (std::int64_t e = 0; e < s.experts; ++e) {
                const std::string x = f + "mlp.experts.expert_" + std::to_string(e) + ".";
                add(x + "wi.weight", {s.ff, s.d}, 1.0 / std::sqrt(double(s.d)));
                add(x + "wo.weight", {s.d, s.ff}, 1.0 / std::sqrt(double(s.ff)));
            }
        } else {
            add(f + "mlp.wi.weight", {s.ff, s.d}, 1.0 / std::sqrt(double(s.d)));
            add(f + "mlp.wo.weight", {s.d, s.ff}, 1.0 / std::sqrt(double(s.ff)));
        }
    }
    add("encoder.final_layer_norm.weight", {s.d}, 0.1, 1.0);
    return t;
}

/// Trains a unigram spiece.model of `vocab` pieces with T5's special ids into `folder`.
inline void writeTinySpiece(const std::filesystem::path& folder, int vocab = 30) {
    const std::filesystem::path corpus = folder / "corpus.txt";
    std::string text;
    const char* words[] = {"the", "cat", "sat", "on", "a", "mat", "hello", "world", "dog", "ran", "far", "and", "fast"};
    std::mt19937 rng(3);
    for (int line = 0; line < 200; ++line) {
        for (int w = 0; w < 8; ++w) text += std::string(w ? " " : "") + words[rng() % 13];
        text += "\n";
    }
    writeText(corpus, text);
    const std::string command = "spm_train --input='" + corpus.string() + "' --model_prefix='" + (folder / "spiece").string() +
                                "' --vocab_size=" + std::to_string(vocab) +
                                " --hard_vocab_limit=false --model_type=unigram --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 --minloglevel=2 "
                                ">/dev/null 2>&1";
    if (std::system(command.c_str()) != 0) throw std::runtime_error("spm_train failed: " + command);
    std::filesystem::remove(corpus);
    std::filesystem::remove(folder / "spiece.vocab");
}

inline TensorMap writeTinySwitchFolder(const std::filesystem::path& folder, const TinySwitchSpec& s = {},
                                       const std::string& configExtra = "", const TensorMap& extraTensors = {}) {
    std::filesystem::create_directories(folder);
    writeText(folder / "config.json", s.configJson(configExtra));
    TensorMap tensors = tinySwitchTensors(s);
    std::vector<engine::StWriteItem> items;
    // A seq2seq checkpoint's decoder and LM head: present in the file, not read by the encoder.
    const engine::PlainTensor decoderQ = engine::PlainTensor::zeros(engine::DType::F32, {s.heads * s.dkv, s.d});
    const engine::PlainTensor lmHead = engine::PlainTensor::zeros(engine::DType::F32, {s.vocab, s.d});
    items.push_back(engine::StWriteItem("decoder.block.0.layer.0.SelfAttention.q.weight", &decoderQ));
    items.push_back(engine::StWriteItem("lm_head.weight", &lmHead));
    for (const auto& [name, t] : tensors) items.push_back(engine::StWriteItem(name, &t));
    for (const auto& [name, t] : extraTensors) items.push_back(engine::StWriteItem(name, &t));
    auto written = engine::writeSafetensors((folder / "model.safetensors").string(), items, {{"format", "pt"}});
    if (!written) throw std::runtime_error(written.error().message);
    writeTinySpiece(folder);
    return tensors;
}

}  // namespace attnscope::testing

namespace attnscope::testing {

/// The ids Debian's spm_encode gives `text` with the folder's `model` file (the reference).
inline std::vector<std::int64_t> spmEncodeIds(const std::filesystem::path& folder, const std::string& text,
                                              const std::string& model = "spiece.model") {
    const std::filesystem::path in = folder / "spm-in.txt", out = folder / "spm-out.txt";
    writeText(in, text + "\n");
    const std::string command = "spm_encode --model='" + (folder / model).string() + "' --output_format=id < '" +
                                in.string() + "' > '" + out.string() + "' 2>/dev/null";
    if (std::system(command.c_str()) != 0) throw std::runtime_error("spm_encode failed: " + command);
    std::ifstream read(out);
    std::vector<std::int64_t> ids;
    for (std::int64_t id = 0; read >> id;) ids.push_back(id);
    std::filesystem::remove(in);
    std::filesystem::remove(out);
    return ids;
}

}  // namespace attnscope::testing
