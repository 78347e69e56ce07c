// loadImageForEngine for the command line: through the image decoder module beside the program
// (image_decoder_abi.h), opened on the first picture and kept open.

#include "common/beside_this_program.h"
#include "common/image_decoder_abi.h"
#include "common/image_load.h"

#include <dlfcn.h>

#include <string>
#include <mutex>
#include <system_error>

namespace attnscope::app {
namespace {

struct Decoder {
    DecodeImageFunction decode = nullptr;
    std::string problem;  // why there is no decoder
};

Decoder openDecoder() {
    std::error_code error;
    const std::string module = besideThisProgram(kImageDecoderModule, error);
    Decoder decoder;
    if (error) {
        decoder.problem = "cannot find this program's folder (" + error.message() + ")";
        return decoder;
    }
    void* handle = ::dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = ::dlerror();
        decoder.problem = std::string("cannot open the image decoder: ") + (why ? why : module + ": unknown reason");
        return decoder;
    }
    decoder.decode = reinterpret_cast<DecodeImageFunction>(::dlsym(handle, kImageDecoderSymbol));
    if (decoder.decode == nullptr)
        decoder.problem = "the image decoder " + module + " is from another build (no " + kImageDecoderSymbol + ")";
    return decoder;
}

}  // namespace

engine::Result<engine::RgbImage> loadImageForEngine(const std::string& path) {
    static std::once_flag once;
    static Decoder decoder;
    std::call_once(once, [] { decoder = openDecoder(); });
    if (decoder.decode == nullptr)
        return engine::makeError(engine::ErrorCode::Unsupported, path + ": " + decoder.problem);
    engine::Result<engine::RgbImage> picture = engine::makeError(engine::ErrorCode::Internal, path + ": not decoded");
    decoder.decode(path.c_str(), &picture);
    return picture;
}

}  // namespace attnscope::app
