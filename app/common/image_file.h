#pragma once
// Image files for both programs (docs/IMAGES.md): decoded by Qt's image readers, judged by
// content (not by the name's suffix), the size read from the header and checked before anything
// is decoded, Qt's allocation limit set, GIFs' first frame; transparency composited over white.
// The engine receives the picture as RGB floats (engine::RgbImage); the window keeps the QImage.

#include <attnscope/image_input.h>
#include <attnscope/result.h>

#include <QImage>
#include <QString>

namespace attnscope::app {

/// Largest picture taken: width · height (engine::kMaxImagePixels, 64 Mpx).
constexpr qint64 kMaxImageFilePixels = engine::kMaxImagePixels;

/// The picture in `path` as 8-bit RGB (QImage::Format_RGB888), or an error naming the file and
/// the cause: missing, not an image, a header claiming more than kMaxImageFilePixels, truncated
/// or corrupt data.
/// `maxPixels` lowers the cap (the fuzz target: the same checks, each input decoded in
/// milliseconds); it never raises it above kMaxImageFilePixels.
engine::Result<QImage> readImageFile(const QString& path, qint64 maxPixels = kMaxImageFilePixels);

/// R, G, B in [0, 1], planar [3, H, W]: what the engine takes.
engine::RgbImage toRgbImage(const QImage& image);

/// True when the file's content is a picture format Qt reads (text-based ones, XPM, XBM and SVG,
/// are left to the text opener).
bool looksLikeImage(const QString& path);

/// The file names the open dialog offers: "*.png *.jpg …" from Qt's readers.
QString imageFileFilter();

}  // namespace attnscope::app
