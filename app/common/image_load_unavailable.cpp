// A build without Qt Gui (ATTNSCOPE_BUILD_GUI=OFF on a machine without Qt): no image decoding.

#include "common/image_load.h"

namespace attnscope::app {

engine::Result<engine::RgbImage> loadImageForEngine(const std::string& path) {
    return engine::makeError(engine::ErrorCode::Unsupported,
                             path + ": this build has no image decoding (it was built without Qt Gui); use the window or a build with Qt");
}

}  // namespace attnscope::app
