#pragma once
// An image file as the engine takes it, for code without Qt headers (the command line): decoded
// by Qt's readers with the checks of image_file.h.

#include <attnscope/image_input.h>
#include <attnscope/result.h>

#include <string>

namespace attnscope::app {

engine::Result<engine::RgbImage> loadImageForEngine(const std::string& path);

}  // namespace attnscope::app
