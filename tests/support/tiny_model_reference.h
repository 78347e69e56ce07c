#pragma once
// The tiny BERT, RoBERTa and GPT-2 checkpoints of tiny_model.h recomputed in double precision from
// the architectures' definitions (post-LN BERT/RoBERTa, pre-LN causal GPT-2 with Conv1D weights),
// independent of the engine: every layer's attention and hidden states.

#include "reference_math.h"
#include "tiny_model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::testing {

struct Reference {
    std::vector<reference::Matrix> hidden;                   // layers + 1
    std::vector<std::vector<reference::Matrix>> attention;   // [layer][head] n x n
};

inline Reference referenceForward(const TinyModel& m, const std::vector<std::int64_t>& ids) {
    using namespace reference;
    const auto& s = m.spec;
    const std::size_t n = ids.size(), h = static_cast<std::size_t>(s.hidden), in = static_cast<std::size_t>(s.inter);
    Reference ref;
    Matrix x = zeros(n, h);
    if (s.arch == "gpt2") {
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t c = 0; c < h; ++c)
                x[i][c] = m.at("wte.weight")[static_cast<std::size_t>(ids[i]) * h + c] + m.at("wpe.weight")[i * h + c];
        ref.hidden.push_back(x);
        for (std::int64_t l = 0; l < s.layers; ++l) {
            const std::string p = "h." + std::to_string(l) + ".";
            Matrix a = layerNorm(x, m.at(p + "ln_1.weight"), m.at(p + "ln_1.bias"), 1e-5);
            Matrix qkv = affine(a, m.at(p + "attn.c_attn.weight"), m.at(p + "attn.c_attn.bias"), h, 3 * h, true);
            Matrix q = zeros(n, h), k = zeros(n, h), v = zeros(n, h);
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t c = 0; c < h; ++c) {
                    q[i][c] = qkv[i][c];
                    k[i][c] = qkv[i][h + c];
                    v[i][c] = qkv[i][2 * h + c];
                }
            ref.attention.emplace_back();
            Matrix ctx = attention(q, k, v, static_cast<std::size_t>(s.heads), true, ref.attention.back());
            x = add(x, affine(ctx, m.at(p + "attn.c_proj.weight"), m.at(p + "attn.c_proj.bias"), h, h, true));
            Matrix b = layerNorm(x, m.at(p + "ln_2.weight"), m.at(p + "ln_2.bias"), 1e-5);
            Matrix f = affine(b, m.at(p + "mlp.c_fc.weight"), m.at(p + "mlp.c_fc.bias"), h, in, true);
            for (auto& row : f)
                for (double& val : row) val = gelu(val, true);
            x = add(x, affine(f, m.at(p + "mlp.c_proj.weight"), m.at(p + "mlp.c_proj.bias"), in, h, true));
            ref.hidden.push_back(l + 1 == s.layers ? layerNorm(x, m.at("ln_f.weight"), m.at("ln_f.bias"), 1e-5) : x);
        }
        return ref;
    }
    const std::size_t offset = s.arch == "roberta" ? static_cast<std::size_t>(s.pad + 1) : 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t c = 0; c < h; ++c)
            x[i][c] = m.at("embeddings.word_embeddings.weight")[static_cast<std::size_t>(ids[i]) * h + c] +
                      m.at("embeddings.position_embeddings.weight")[(i + offset) * h + c] +
                      m.at("embeddings.token_type_embeddings.weight")[c];
    x = layerNorm(x, m.at("embeddings.LayerNorm.weight"), m.at("embeddings.LayerNorm.bias"), 1e-12);
    ref.hidden.push_back(x);
    for (std::int64_t l = 0; l < s.layers; ++l) {
        const std::string p = "encoder.layer." + std::to_string(l) + ".";
        auto lin = [&](const Matrix& in_, const std::string& base, std::size_t i, std::size_t o) {
            return affine(in_, m.at(p + base + ".weight"), m.at(p + base + ".bias"), i, o, false);
        };
        ref.attention.emplace_back();
        Matrix ctx = attention(lin(x, "attention.self.query", h, h), lin(x, "attention.self.key", h, h),
                               lin(x, "attention.self.value", h, h), static_cast<std::size_t>(s.heads), false,
                               ref.attention.back());
        Matrix a = layerNorm(add(x, lin(ctx, "attention.output.dense", h, h)), m.at(p + "attention.output.LayerNorm.weight"),
                             m.at(p + "attention.output.LayerNorm.bias"), 1e-12);
        Matrix f = lin(a, "intermediate.dense", h, in);
        for (auto& row : f)
            for (double& val : row) val = gelu(val, false);
        x = layerNorm(add(a, lin(f, "output.dense", in, h)), m.at(p + "output.LayerNorm.weight"),
                      m.at(p + "output.LayerNorm.bias"), 1e-12);
        ref.hidden.push_back(x);
    }
    return ref;
}

}  // namespace attnscope::testing
