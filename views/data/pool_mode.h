#pragma once
// How a display cell summarises the f x f block of weights it stands for (Qt-free: the head
// matrices and their cache use it without Qt).

namespace attnscope::views {

enum class PoolMode { Max, Mean };

}  // namespace attnscope::views
