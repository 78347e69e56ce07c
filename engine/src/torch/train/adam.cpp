#include "torch/train/adam.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>

namespace attnscope::engine {
namespace {

constexpr double kBeta1 = 0.9, kBeta2 = 0.98, kAdamEps = 1e-9, kClipNorm = 1.0;

}  // namespace

Adam::Adam(std::map<std::string, at::Tensor>& params) : m_params(params) {
    for (auto& [name, p] : m_params) {
        m_m[name] = at::zeros_like(p);
        m_v[name] = at::zeros_like(p);
    }
}

void Adam::step(double lr) {
    at::NoGradGuard noGrad;
    ++m_t;
    double norm2 = 0;
    for (auto& [name, p] : m_params)
        if (p.grad().defined()) norm2 += p.grad().pow(2).sum().item<double>();
    const double clip = std::min(1.0, kClipNorm / (std::sqrt(norm2) + 1e-12));
    const double c1 = 1.0 - std::pow(kBeta1, static_cast<double>(m_t)), c2 = 1.0 - std::pow(kBeta2, static_cast<double>(m_t));
    for (auto& [name, p] : m_params) {
        if (!p.grad().defined()) continue;
        const at::Tensor g = p.grad() * clip;
        m_m[name].mul_(kBeta1).add_(g, 1.0 - kBeta1);
        m_v[name].mul_(kBeta2).addcmul_(g, g, 1.0 - kBeta2);
        p.sub_((m_m[name] / c1) / ((m_v[name] / c2).sqrt() + kAdamEps) * lr);
        p.mutable_grad().zero_();
    }
}

}  // namespace attnscope::engine
