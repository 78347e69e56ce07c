// The Star-Transformer's cycles (fastNLP StarTransformer.forward, _MSA1, _MSA2 in eval mode), for
// a batch: B sequences of n satellites, H heads of d, hidden D. The ring's keys per satellite are
// stacked as [B, n, K, H, d] (K = 5, or 4 without the relay) so one softmax over dim 2 gives every
// satellite's weights. The inspection pass (forward) and the trainer share cycle().

#include "torch/model/star_model.h"

#include "torch/tensors/to_plain.h"
#include "base/api/engine_error.h"

#include <cmath>
#include <limits>

namespace attnscope::engine::star {
namespace {

at::Tensor project(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, std::int64_t heads) {
    at::Tensor y = at::linear(x, w, b);  // [..., H·d]
    auto shape = y.sizes().vec();
    shape.back() = heads;
    shape.push_back(-1);
    return y.reshape(shape);  // [..., H, d]
}

/// A neighbour's key or value rows along the satellites (dim 1 of [B, n, H, d]): shifted by one
/// with a zero row at the open end, or rolled when the ring is closed. `step` −1: the left
/// neighbour (i − 1), +1: the right one.
at::Tensor neighbour(const at::Tensor& rows, int step, bool cyclic) {
    const std::int64_t n = rows.size(1);
    if (cyclic) return at::roll(rows, {-step}, {1});
    if (n == 1) return at::zeros_like(rows);
    const at::Tensor zero = at::zeros_like(rows.narrow(1, 0, 1));
    return step < 0 ? at::cat({zero, rows.narrow(1, 0, n - 1)}, 1) : at::cat({rows.narrow(1, 1, n - 1), zero}, 1);
}

}  // namespace

Cycle cycle(const Weights& w, std::int64_t t, const at::Tensor& nodes, const at::Tensor& relay, const at::Tensor& e,
            const at::Tensor& padded, bool useRelay) {
    const std::int64_t B = nodes.size(0), n = nodes.size(1), H = w.heads, d = w.headDim, D = w.hidden;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    const Attention& ra = w.ring[static_cast<std::size_t>(t)];
    // ---- satellites: x = LayerNorm(h); keys [x_(i−1), x_i, x_(i+1), e_i, s]
    const at::Tensor x = at::layer_norm(nodes, {D}, w.normWeight[static_cast<std::size_t>(t)], w.normBias[static_cast<std::size_t>(t)],
                                        w.layerNormEps);
    const at::Tensor q = project(x, ra.wq, ra.bq, H);  // [B, n, H, d]
    const at::Tensor k = project(x, ra.wk, ra.bk, H), v = project(x, ra.wv, ra.bv, H);
    std::vector<at::Tensor> keys = {neighbour(k, -1, w.cyclic), k, neighbour(k, +1, w.cyclic), project(e, ra.wk, ra.bk, H)};
    std::vector<at::Tensor> values = {neighbour(v, -1, w.cyclic), v, neighbour(v, +1, w.cyclic), project(e, ra.wv, ra.bv, H)};
    if (useRelay) {
        keys.push_back(project(relay, ra.wk, ra.bk, H).unsqueeze(1).expand({B, n, H, d}));
        values.push_back(project(relay, ra.wv, ra.bv, H).unsqueeze(1).expand({B, n, H, d}));
    }
    const at::Tensor alpha = at::softmax((q.unsqueeze(2) * at::stack(keys, 2)).sum(-1) * scale, 2);  // [B, n, K, H]
    const at::Tensor att = (alpha.unsqueeze(-1) * at::stack(values, 2)).sum(2).reshape({B, n, H * d});
    Cycle out;
    out.alpha = alpha;
    at::Tensor next = at::leaky_relu(at::linear(att, ra.wo, ra.bo), w.negativeSlope);

    // ---- relay: attends [s; hᵗ], padded satellites masked
    const Attention& sa = w.relay[static_cast<std::size_t>(t)];
    const at::Tensor context = at::cat({relay.unsqueeze(1), next}, 1);  // [B, n + 1, D]
    const at::Tensor rq = project(relay, sa.wq, sa.bq, H);                // [B, H, d]
    const at::Tensor rk = project(context, sa.wk, sa.bk, H), rv = project(context, sa.wv, sa.bv, H);  // [B, n + 1, H, d]
    at::Tensor scores = (rq.unsqueeze(1) * rk).sum(-1).transpose(1, 2) * scale;  // [B, H, n + 1]
    const at::Tensor mask = at::cat({at::zeros({B, 1}, at::kBool), padded}, 1);  // [B, n + 1]
    scores = scores.masked_fill(mask.unsqueeze(1), -std::numeric_limits<float>::infinity());
    out.beta = at::softmax(scores, 2);
    const at::Tensor relayAtt = (out.beta.transpose(1, 2).unsqueeze(-1) * rv).sum(1).reshape({B, H * d});
    out.relay = at::leaky_relu(at::linear(relayAtt, sa.wo, sa.bo), w.negativeSlope);
    out.nodes = next.masked_fill(padded.unsqueeze(-1), 0.0);
    return out;
}

at::Tensor embed(const Weights& w, const at::Tensor& embeddings) {
    return w.posEmb.defined() ? embeddings + w.posEmb.narrow(0, 0, embeddings.size(-2)) : embeddings;
}

StarPass forward(const Weights& w, const at::Tensor& embeddings, const std::vector<std::uint8_t>& padding,
                 const ProgressFn& progress) {
    const std::int64_t n = embeddings.size(0), H = w.heads, D = w.hidden, T = w.cycles;
    const at::Tensor e = embed(w, embeddings).unsqueeze(0);  // [1, n, D]
    at::Tensor padded = at::zeros({1, n}, at::kBool);
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(padding.size()); ++i) padded[0][i] = padding[static_cast<std::size_t>(i)] != 0;

    at::Tensor nodes = e, relay = e.mean(1);  // s⁰: the mean over every position, padding included
    at::Tensor ringW = at::empty({T, H, n, StarPass::kRingKeys}, at::kFloat), relayW = at::empty({T, H, n + 1}, at::kFloat);
    at::Tensor allNodes = at::empty({T + 1, n, D}, at::kFloat), allRelay = at::empty({T + 1, D}, at::kFloat);
    at::Tensor change = at::empty({T, n}, at::kFloat);
    allNodes[0].copy_(nodes[0]);
    allRelay[0].copy_(relay[0]);
    for (std::int64_t t = 0; t < T; ++t) {
        if (progress && !progress(Progress{"star", t, T})) throw CancelledError();
        const Cycle c = cycle(w, t, nodes, relay, e, padded, true);
        ringW[t].copy_(c.alpha[0].permute({2, 0, 1}));
        relayW[t].copy_(c.beta[0]);
        change[t].copy_((c.nodes[0] - nodes[0]).norm(2, {1}));
        nodes = c.nodes;
        relay = c.relay;
        allNodes[t + 1].copy_(nodes[0]);
        allRelay[t + 1].copy_(relay[0]);
    }

    StarPass pass;
    pass.n = n;
    pass.cycles = T;
    pass.heads = H;
    pass.headDim = w.headDim;
    pass.hidden = D;
    pass.cyclic = w.cyclic;
    pass.ringWeights = toPlain(ringW);
    pass.relayWeights = toPlain(relayW);
    pass.nodes = toPlain(allNodes);
    pass.relay = toPlain(allRelay);
    pass.nodeChange = toPlain(change);
    return pass;
}

}  // namespace attnscope::engine::star
