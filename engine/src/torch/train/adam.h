#pragma once
// Adam (Kingma & Ba 2015) with bias correction and global-norm clipping, over named parameters:
// what both trainers step with.

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <string>

namespace attnscope::engine {

class Adam {
public:
    explicit Adam(std::map<std::string, at::Tensor>& params);
    /// One step at learning rate `lr` (gradients clipped to a global norm of 1, then zeroed).
    void step(double lr);

private:
    std::map<std::string, at::Tensor>& m_params;
    std::map<std::string, at::Tensor> m_m, m_v;
    std::int64_t m_t = 0;
};

}  // namespace attnscope::engine
