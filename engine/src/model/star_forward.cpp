// The Star-Transformer's cycles (fastNLP StarTransformer.forward, _MSA1, _MSA2 in eval mode).
// Shapes: n satellites, H heads of d, hidden D; the ring's five keys per satellite are stacked as
// [n, 5, H, d] so one softmax over dim 1 gives every satellite's weights.

#include "model/star_model.h"

#include "core/to_plain.h"
#include "plain/engine_error.h"

#include <cmath>
#include <limits>

namespace attnscope::engine::star {
namespace {

constexpr double kLayerNormEps = 1e-6;  // fastNLP's nn.LayerNorm(hidden_size, eps=1e-6)
constexpr double kLeakySlope = 0.01;    // F.leaky_relu's default

at::Tensor project(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, std::int64_t heads) {
    at::Tensor y = at::linear(x, w, b);  // [..., H·d]
    auto shape = y.sizes().vec();
    shape.back() = heads;
    shape.push_back(-1);
    return y.reshape(shape);  // [..., H, d]
}

/// A neighbour's key or value rows: shifted by one with a zero row at the open end, or rolled
/// when the ring is closed. `step` −1: the left neighbour (i − 1), +1: the right one.
at::Tensor neighbour(const at::Tensor& rows, int step, bool cyclic) {
    const std::int64_t n = rows.size(0);
    if (cyclic) return at::roll(rows, {-step}, {0});
    at::Tensor out = at::zeros_like(rows);
    if (n > 1) {
        if (step < 0) out.narrow(0, 1, n - 1).copy_(rows.narrow(0, 0, n - 1));
        else out.narrow(0, 0, n - 1).copy_(rows.narrow(0, 1, n - 1));
    }
    return out;
}

}  // namespace

StarPass forward(const Weights& w, const at::Tensor& embeddings, const std::vector<std::uint8_t>& padding,
                 const ProgressFn& progress) {
    const std::int64_t n = embeddings.size(0), H = w.heads, d = w.headDim, D = w.hidden, T = w.cycles;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    at::Tensor e = embeddings;
    if (w.posEmb.defined()) e = e + w.posEmb.narrow(0, 0, n);
    at::Tensor padded = at::zeros({n}, at::kBool);
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(padding.size()); ++i) padded[i] = padding[static_cast<std::size_t>(i)] != 0;

    at::Tensor nodes = e, relay = e.mean(0);  // s⁰: the mean over every position, padding included
    at::Tensor ringW = at::empty({T, H, n, StarPass::kRingKeys}, at::kFloat), relayW = at::empty({T, H, n + 1}, at::kFloat);
    at::Tensor allNodes = at::empty({T + 1, n, D}, at::kFloat), allRelay = at::empty({T + 1, D}, at::kFloat);
    at::Tensor change = at::empty({T, n}, at::kFloat);
    allNodes[0].copy_(nodes);
    allRelay[0].copy_(relay);
    const at::Tensor relayMask = at::cat({at::zeros({1}, at::kBool), padded});  // [n + 1]

    for (std::int64_t t = 0; t < T; ++t) {
        if (progress && !progress(Progress{"star", t, T})) throw CancelledError();
        const Attention& ra = w.ring[static_cast<std::size_t>(t)];
        // ---- satellites: x = LayerNorm(h); keys [x_(i−1), x_i, x_(i+1), e_i, s]
        const at::Tensor x = at::layer_norm(nodes, {D}, w.normWeight[static_cast<std::size_t>(t)],
                                            w.normBias[static_cast<std::size_t>(t)], kLayerNormEps);
        const at::Tensor q = project(x, ra.wq, ra.bq, H);               // [n, H, d]
        const at::Tensor k = project(x, ra.wk, ra.bk, H), v = project(x, ra.wv, ra.bv, H);
        const at::Tensor ek = project(e, ra.wk, ra.bk, H), ev = project(e, ra.wv, ra.bv, H);
        const at::Tensor sk = project(relay, ra.wk, ra.bk, H).expand({n, H, d});
        const at::Tensor sv = project(relay, ra.wv, ra.bv, H).expand({n, H, d});
        const at::Tensor keys = at::stack({neighbour(k, -1, w.cyclic), k, neighbour(k, +1, w.cyclic), ek, sk}, 1);  // [n, 5, H, d]
        const at::Tensor values = at::stack({neighbour(v, -1, w.cyclic), v, neighbour(v, +1, w.cyclic), ev, sv}, 1);
        const at::Tensor alpha = at::softmax((q.unsqueeze(1) * keys).sum(-1) * scale, 1);  // [n, 5, H]
        const at::Tensor att = (alpha.unsqueeze(-1) * values).sum(1).reshape({n, H * d});
        at::Tensor next = at::leaky_relu(at::linear(att, ra.wo, ra.bo), kLeakySlope);
        ringW[t].copy_(alpha.permute({2, 0, 1}));

        // ---- relay: attends [s; hᵗ], padded satellites masked
        const Attention& sa = w.relay[static_cast<std::size_t>(t)];
        const at::Tensor context = at::cat({relay.unsqueeze(0), next}, 0);  // [n + 1, D]
        const at::Tensor rq = project(relay, sa.wq, sa.bq, H);               // [H, d]
        const at::Tensor rk = project(context, sa.wk, sa.bk, H), rv = project(context, sa.wv, sa.bv, H);  // [n + 1, H, d]
        at::Tensor scores = (rq.unsqueeze(0) * rk).sum(-1).transpose(0, 1) * scale;  // [H, n + 1]
        scores = scores.masked_fill(relayMask.unsqueeze(0), -std::numeric_limits<float>::infinity());
        const at::Tensor beta = at::softmax(scores, 1);
        const at::Tensor relayAtt = (beta.transpose(0, 1).unsqueeze(-1) * rv).sum(0).reshape({H * d});
        relay = at::leaky_relu(at::linear(relayAtt, sa.wo, sa.bo), kLeakySlope);
        relayW[t].copy_(beta);

        next = next.masked_fill(padded.unsqueeze(1), 0.0);
        change[t].copy_((next - nodes).norm(2, {1}));
        nodes = next;
        allNodes[t + 1].copy_(nodes);
        allRelay[t + 1].copy_(relay);
    }

    StarPass pass;
    pass.n = n;
    pass.cycles = T;
    pass.heads = H;
    pass.headDim = d;
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
