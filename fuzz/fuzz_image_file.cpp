// A picture file as `--image`, File ▸ Open Image and the image decoder module read it
// (common/image_file.cpp: Qt's readers, the size caps, the truncation rules, decoder warnings as
// refusals), then the planes the engine takes.
//
// The planes are made for pictures up to 65,536 pixels: a few bytes of GIF or BMP header can
// describe 64 million, and spreading those into 768 MB of floats (a loop with no branch that
// depends on the picture) led the profile and left the decoders' checks about 90 inputs a
// second; at a million pixels, fresh pages for the planes (three floats a pixel, mapped anew by
// the sanitizer's allocator for every input) were still most of each run. The spreading has no
// branch that a larger picture reaches and a small one does not; larger pictures still go
// through the readers and every check above.
#include "fuzz_files.h"

#include "common/image_file.h"

#include <QCoreApplication>

#include <cstddef>
#include <cstdint>

namespace {
constexpr qint64 kMaxPixelsSpread = 1 << 16;
// The picture cap the reader checks against, lowered from 64 to 4 million pixels: the same
// checks for any cap, and a picture the cap lets through is decoded in milliseconds (inputs that
// decoded up to 64 million pixels each left the target at 500 a second).
constexpr qint64 kMaxPixelsRead = 1 << 22;
}

// Qt as its programs run it, with an application object: its destructor takes down the thread
// pools Qt's image conversions use before the process's static objects go (one 10 s run in a few
// ended in a crash after its last input, at exit, without one).
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    static QCoreApplication app(*argc, *argv);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static ScratchFolder scratch;
    const std::string path = scratch.write("picture", std::string(reinterpret_cast<const char*>(data), size));
    const auto image = attnscope::app::readImageFile(QString::fromStdString(path), kMaxPixelsRead);
    if (image && static_cast<qint64>(image.value().width()) * image.value().height() <= kMaxPixelsSpread)
        (void)attnscope::app::toRgbImage(image.value()).rgb.size();
    return 0;
}
