// The image decoder module: image_file.h's Qt readers behind image_decoder_abi.h's entry point.

#include "common/image_decoder_abi.h"
#include "common/image_load.h"

#include <exception>
#include <type_traits>
#include <string>

extern "C" __attribute__((visibility("default"))) void attnscope_decode_image_v1(
    const char* path, attnscope::engine::Result<attnscope::engine::RgbImage>* out) {
    using namespace attnscope;
    static_assert(std::is_same_v<decltype(&attnscope_decode_image_v1), app::DecodeImageFunction>);
    try {
        *out = app::loadImageForEngine(path);
    } catch (const std::exception& e) {
        *out = engine::makeError(engine::ErrorCode::Internal, std::string(path) + ": image decoding failed: " + e.what());
    }
}
