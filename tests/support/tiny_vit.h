#pragma once
// Vision Transformer folders written in Hugging Face naming for the tests (ViTModel / DeiTModel
// names under "vit." / "deit." or none): config.json, random weights, preprocessor_config.json.

#include <attnscope/safetensors.h>

#include "tiny_model.h"
#include "tiny_switch_transformers.h"

#include <cmath>
#include <filesystem>
#include <random>
#include <string>

namespace attnscope::testing {

struct VitSpec {
    std::string type = "vit";      // "vit" or "deit" (a distillation token after [CLS])
    std::int64_t hidden = 16, heads = 2, inner = 24, layers = 2, image = 8, patch = 4;
    bool cls = true;               // false: no embeddings.cls_token (patches only)
    bool qkvBias = true;
    std::string prefix = "vit.";
    std::int64_t prefixTokens() const { return (cls ? 1 : 0) + (type == "deit" ? 1 : 0); }
    std::int64_t tokens() const { return prefixTokens() + (image / patch) * (image / patch); }
    std::string configJson(const std::string& extra = "") const {
        return "{\"model_type\": \"" + type + "\", \"hidden_size\": " + std::to_string(hidden) +
               ", \"num_hidden_layers\": " + std::to_string(layers) + ", \"num_attention_heads\": " + std::to_string(heads) +
               ", \"intermediate_size\": " + std::to_string(inner) + ", \"image_size\": " + std::to_string(image) +
               ", \"patch_size\": " + std::to_string(patch) + ", \"num_channels\": 3, \"hidden_act\": \"gelu\"" +
               ", \"layer_norm_eps\": 1e-12, \"qkv_bias\": " + (qkvBias ? "true" : "false") + extra + "}";
    }
};

inline TensorMap vitTensors(const VitSpec& s) {
    std::mt19937_64 rng(17);
    TensorMap t;
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, double stddev, double mean = 0.0) {
        std::normal_distribution<float> normal(static_cast<float>(mean), static_cast<float>(stddev));
        engine::PlainTensor x = engine::PlainTensor::zeros(engine::DType::F32, shape);
        for (float& v : x.f32) v = normal(rng);
        t[name] = std::move(x);
    };
    const std::int64_t h = s.hidden;
    add("embeddings.patch_embeddings.projection.weight", {h, 3, s.patch, s.patch}, 1.0 / std::sqrt(3.0 * s.patch * s.patch));
    add("embeddings.patch_embeddings.projection.bias", {h}, 0.1);
    if (s.cls) add("embeddings.cls_token", {1, 1, h}, 1.0);
    if (s.type == "deit") add("embeddings.distillation_token", {1, 1, h}, 1.0);
    add("embeddings.position_embeddings", {1, s.tokens(), h}, 0.5);
    for (std::int64_t l = 0; l < s.layers; ++l) {
        const std::string p = "encoder.layer." + std::to_string(l) + ".";
        for (const char* norm : {"layernorm_before", "layernorm_after"}) {
            add(p + norm + ".weight", {h}, 0.1, 1.0);
            add(p + norm + ".bias", {h}, 0.1);
        }
        for (const char* proj : {"query", "key", "value"}) {
            add(p + "attention.attention." + proj + ".weight", {h, h}, 1.0 / std::sqrt(double(h)));
            if (s.qkvBias) add(p + "attention.attention." + proj + ".bias", {h}, 0.1);
        }
        add(p + "attention.output.dense.weight", {h, h}, 1.0 / std::sqrt(double(h)));
        add(p + "attention.output.dense.bias", {h}, 0.1);
        add(p + "intermediate.dense.weight", {s.inner, h}, 1.0 / std::sqrt(double(h)));
        add(p + "intermediate.dense.bias", {s.inner}, 0.1);
        add(p + "output.dense.weight", {h, s.inner}, 1.0 / std::sqrt(double(s.inner)));
        add(p + "output.dense.bias", {h}, 0.1);
    }
    add("layernorm.weight", {h}, 0.1, 1.0);  // the final norm (not read: hidden states are before it)
    add("layernorm.bias", {h}, 0.1);
    return t;
}

/// Writes the folder; `preprocessor` is preprocessor_config.json's text ("" writes none).
inline TensorMap writeVitFolder(const std::filesystem::path& dir, const VitSpec& s, const std::string& preprocessor,
                                const TensorMap& overrides = {}) {
    std::filesystem::create_directories(dir);
    writeText(dir / "config.json", s.configJson());
    if (!preprocessor.empty()) writeText(dir / "preprocessor_config.json", preprocessor);
    TensorMap tensors = vitTensors(s);
    for (const auto& [name, t] : overrides) tensors[name] = t;
    std::vector<engine::StWriteItem> items;
    for (const auto& [name, t] : tensors) items.push_back(engine::StWriteItem(s.prefix + name, &t));
    auto written = engine::writeSafetensors((dir / "model.safetensors").string(), items, {{"format", "pt"}});
    if (!written) throw std::runtime_error(written.error().message);
    return tensors;
}

}  // namespace attnscope::testing
