#include "torch/model/latent_profile.h"

namespace attnscope::engine {
namespace {

// Mean over the causal pairs j ≤ i of |a_i · b_j|, per head ([heads, n, w] each).
std::vector<float> meanAbsCausalProduct(const at::Tensor& a, const at::Tensor& b) {
    const std::int64_t heads = a.size(0), n = a.size(1);
    const at::Tensor causal = at::ones({n, n}, at::kDouble).tril();
    const at::Tensor products = at::bmm(a.to(at::kDouble), b.to(at::kDouble).transpose(1, 2)).abs() * causal;
    const at::Tensor mean = products.sum({1, 2}) / (static_cast<double>(n) * static_cast<double>(n + 1) / 2.0);
    std::vector<float> out(static_cast<std::size_t>(heads));
    for (std::int64_t h = 0; h < heads; ++h) out[static_cast<std::size_t>(h)] = static_cast<float>(mean[h].item<double>());
    return out;
}

}  // namespace

LatentAttentionProfile latentAttentionProfile(const at::Tensor& q, const at::Tensor& k, std::int64_t nope, std::int64_t rope,
                                              std::int64_t latentRank) {
    LatentAttentionProfile p;
    p.heads = q.size(0);
    p.n = q.size(1);
    p.nope = nope;
    p.rope = rope;
    p.latentRank = latentRank;
    // every head's non-rotary keys side by side: [n, heads · nope]
    const at::Tensor keys = k.narrow(2, 0, nope).transpose(0, 1).reshape({p.n, p.heads * nope}).to(at::kDouble);
    const at::Tensor values = at::linalg_svdvals(keys);
    p.keySingularValues.resize(static_cast<std::size_t>(values.numel()));
    for (std::int64_t i = 0; i < values.numel(); ++i) p.keySingularValues[static_cast<std::size_t>(i)] = static_cast<float>(values[i].item<double>());
    p.nopeTerm = meanAbsCausalProduct(q.narrow(2, 0, nope), k.narrow(2, 0, nope));
    p.ropeTerm = meanAbsCausalProduct(q.narrow(2, nope, rope), k.narrow(2, nope, rope));
    return p;
}

}  // namespace attnscope::engine
