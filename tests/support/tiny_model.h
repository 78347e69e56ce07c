#pragma once
// Tiny random checkpoints in the Hugging Face naming (BERT, RoBERTa, GPT-2), written as real
// model folders so tests go through the same loader as users' files.

#include <attnscope/safetensors.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace attnscope::testing {

struct TinyModelSpec {
    std::string arch = "bert";  ///< "bert", "roberta", "gpt2"
    std::int64_t vocab = 40, hidden = 16, layers = 2, heads = 4, inter = 32, positions = 24, types = 2;
    std::int64_t pad = 1;       ///< RoBERTa: positions start at pad + 1
    std::string activation;     ///< empty: the architecture's default
    std::uint32_t seed = 7;
};

struct TinyModel {
    TinyModelSpec spec;
    std::map<std::string, engine::PlainTensor> tensors;  ///< names without the base-model prefix

    const std::vector<float>& at(const std::string& name) const { return tensors.at(name).f32; }

    std::string configJson() const {
        const auto& s = spec;
        if (s.arch == "gpt2") {
            return "{\"model_type\": \"gpt2\", \"vocab_size\": " + std::to_string(s.vocab) +
                   ", \"n_embd\": " + std::to_string(s.hidden) + ", \"n_layer\": " + std::to_string(s.layers) +
                   ", \"n_head\": " + std::to_string(s.heads) + ", \"n_inner\": " + std::to_string(s.inter) +
                   ", \"n_positions\": " + std::to_string(s.positions) +
                   ", \"layer_norm_epsilon\": 1e-05, \"activation_function\": \"" +
                   (s.activation.empty() ? "gelu_new" : s.activation) + "\", \"architectures\": [\"GPT2LMHeadModel\"]}";
        }
        return "{\"model_type\": \"" + s.arch + "\", \"vocab_size\": " + std::to_string(s.vocab) +
               ", \"hidden_size\": " + std::to_string(s.hidden) + ", \"num_hidden_layers\": " +
               std::to_string(s.layers) + ", \"num_attention_heads\": " + std::to_string(s.heads) +
               ", \"intermediate_size\": " + std::to_string(s.inter) + ", \"max_position_embeddings\": " +
               std::to_string(s.positions) + ", \"type_vocab_size\": " + std::to_string(s.types) +
               ", \"layer_norm_eps\": 1e-12, \"pad_token_id\": " + std::to_string(s.arch == "roberta" ? s.pad : 0) +
               ", \"hidden_act\": \"" + (s.activation.empty() ? "gelu" : s.activation) + "\"}";
    }
};

inline TinyModel makeTinyModel(const TinyModelSpec& spec) {
    TinyModel m;
    m.spec = spec;
    std::mt19937 rng(spec.seed);
    std::normal_distribution<float> normal(0.0f, 0.3f);
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float offset = 0.0f) {
        engine::PlainTensor t = engine::PlainTensor::zeros(engine::DType::F32, shape);
        for (auto& x : t.f32) x = offset + normal(rng);
        m.tensors[name] = std::move(t);
    };
    const auto h = spec.hidden, in = spec.inter;
    auto norm = [&](const std::string& base) {
        add(base + ".weight", {h}, 1.0f);
        add(base + ".bias", {h});
    };
    if (spec.arch == "gpt2") {
        add("wte.weight", {spec.vocab, h});
        add("wpe.weight", {spec.positions, h});
        for (std::int64_t l = 0; l < spec.layers; ++l) {
            const std::string p = "h." + std::to_string(l) + ".";
            norm(p + "ln_1");
            add(p + "attn.c_attn.weight", {h, 3 * h});
            add(p + "attn.c_attn.bias", {3 * h});
            add(p + "attn.c_proj.weight", {h, h});
            add(p + "attn.c_proj.bias", {h});
            norm(p + "ln_2");
            add(p + "mlp.c_fc.weight", {h, in});
            add(p + "mlp.c_fc.bias", {in});
            add(p + "mlp.c_proj.weight", {in, h});
            add(p + "mlp.c_proj.bias", {h});
        }
        norm("ln_f");
        return m;
    }
    add("embeddings.word_embeddings.weight", {spec.vocab, h});
    add("embeddings.position_embeddings.weight", {spec.positions, h});
    add("embeddings.token_type_embeddings.weight", {spec.types, h});
    norm("embeddings.LayerNorm");
    for (std::int64_t l = 0; l < spec.layers; ++l) {
        const std::string p = "encoder.layer." + std::to_string(l) + ".";
        for (const char* part : {"attention.self.query", "attention.self.key", "attention.self.value",
                                 "attention.output.dense"}) {
            add(p + part + ".weight", {h, h});
            add(p + part + ".bias", {h});
        }
        norm(p + "attention.output.LayerNorm");
        add(p + "intermediate.dense.weight", {in, h});
        add(p + "intermediate.dense.bias", {in});
        add(p + "output.dense.weight", {h, in});
        add(p + "output.dense.bias", {h});
        norm(p + "output.LayerNorm");
    }
    return m;
}

inline std::string defaultPrefix(const std::string& arch) {
    return arch == "gpt2" ? "" : arch + ".";
}

inline void writeText(const std::filesystem::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

/// Writes config.json and model.safetensors (tensor names get `prefix`) into `folder`.
inline void writeTinyModel(const TinyModel& model, const std::filesystem::path& folder, const std::string& prefix) {
    std::filesystem::create_directories(folder);
    writeText(folder / "config.json", model.configJson());
    std::vector<engine::StWriteItem> items;
    std::vector<std::string> names;
    for (const auto& [name, t] : model.tensors) items.push_back(engine::StWriteItem(prefix + name, &t));
    auto written = engine::writeSafetensors((folder / "model.safetensors").string(), items, {{"format", "pt"}});
    if (!written) throw std::runtime_error(written.error().message);
}

/// A 40-entry WordPiece vocabulary (ids fit the tiny models' vocab of 40), as vocab.txt.
/// The 40 tokens of the tiny vocabularies below (ids 0 … 39).
inline const std::vector<std::string>& tinyWordPieceTokens() {
    static const std::vector<std::string> tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat",
                                                    "a", "dog", "ran", "to", "park", ".", ",", "and", "##s", "##ing",
                                                    "is", "was", "it", "he", "she", "they", "big", "small", "red", "blue",
                                                    "in", "of", "for", "with", "at", "by", "from", "up", "down", "out"};
    return tokens;
}

inline void writeTinyWordPieceVocab(const std::filesystem::path& folder) {
    std::string text;
    for (const auto& t : tinyWordPieceTokens()) text += t + "\n";
    writeText(folder / "vocab.txt", text);
}

/// The same vocabulary as a WordPiece tokenizer.json ([CLS] text [SEP]): read by every family that
/// reads tokenizer.json, so any model folder of a test can take text.
inline void writeTinyTokenizerJson(const std::filesystem::path& folder) {
    std::string vocab;
    for (std::size_t i = 0; i < tinyWordPieceTokens().size(); ++i)
        vocab += (i ? ", \"" : "\"") + tinyWordPieceTokens()[i] + "\": " + std::to_string(i);
    std::string added;
    for (int i = 0; i < 5; ++i)
        added += std::string(i ? ", " : "") + "{\"id\": " + std::to_string(i) + ", \"content\": \"" + tinyWordPieceTokens()[i] +
                 "\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"special\": true}";
    writeText(folder / "tokenizer.json",
              "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, \"added_tokens\": [" + added + "], "
              "\"normalizer\": {\"type\": \"BertNormalizer\", \"clean_text\": true, \"handle_chinese_chars\": true, "
              "\"strip_accents\": null, \"lowercase\": true}, \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}, "
              "\"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"[CLS]\", "
              "\"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, {\"SpecialToken\": {\"id\": \"[SEP]\", "
              "\"type_id\": 0}}], \"pair\": [], \"special_tokens\": {\"[CLS]\": {\"id\": \"[CLS]\", \"ids\": [2], "
              "\"tokens\": [\"[CLS]\"]}, \"[SEP]\": {\"id\": \"[SEP]\", \"ids\": [3], \"tokens\": [\"[SEP]\"]}}}, "
              "\"decoder\": {\"type\": \"WordPiece\", \"prefix\": \"##\", \"cleanup\": true}, "
              "\"model\": {\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\", \"continuing_subword_prefix\": \"##\", "
              "\"max_input_chars_per_word\": 100, \"vocab\": {" + vocab + "}}}");
}

}  // namespace attnscope::testing
