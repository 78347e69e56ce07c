#include "common/image_file.h"
#include "common/image_load.h"

#include <QFileInfo>
#include <QImageReader>
#include <QPainter>
#include <QStringList>

namespace attnscope::app {
namespace {

engine::Error fileError(const QString& path, const QString& message) {
    return engine::makeError(engine::ErrorCode::InvalidInput, (path + QStringLiteral(": ") + message).toStdString());
}

// Qt refuses to allocate more than this for one image (MiB); the pixel cap below is the real
// limit, this one stops a decoder from growing past it.
constexpr int kAllocationLimitMiB = static_cast<int>(kMaxImageFilePixels * 4 / (1024 * 1024)) + 1;

}  // namespace

engine::Result<QImage> readImageFile(const QString& path) {
    const QFileInfo info(path);
    if (!info.exists()) return fileError(path, QStringLiteral("no such file"));
    if (!info.isFile()) return fileError(path, QStringLiteral("not a file"));
    QImageReader reader(path);
    reader.setDecideFormatFromContent(true);
    reader.setAllocationLimit(kAllocationLimitMiB);
    if (!reader.canRead())
        return fileError(path, QStringLiteral("not an image Qt can read (PNG, JPEG, BMP, GIF, %1)")
                                   .arg(QString::fromLatin1(QImageReader::supportedImageFormats().join(", "))));
    const QSize size = reader.size();
    if (size.isValid() && static_cast<qint64>(size.width()) * size.height() > kMaxImageFilePixels)
        return fileError(path, QStringLiteral("its header claims %1 × %2 pixels, more than the %3 million taken")
                                   .arg(size.width())
                                   .arg(size.height())
                                   .arg(kMaxImageFilePixels / 1000000));
    QImage image;
    if (!reader.read(&image) || image.isNull())
        return fileError(path, QStringLiteral("could not be decoded (%1)").arg(reader.errorString()));
    if (static_cast<qint64>(image.width()) * image.height() > kMaxImageFilePixels)
        return fileError(path, QStringLiteral("%1 × %2 pixels is more than the %3 million taken")
                                   .arg(image.width())
                                   .arg(image.height())
                                   .arg(kMaxImageFilePixels / 1000000));
    if (image.hasAlphaChannel()) {  // transparent parts over white, as a viewer shows them
        QImage flat(image.size(), QImage::Format_RGB888);
        flat.fill(Qt::white);
        QPainter painter(&flat);
        painter.drawImage(0, 0, image);
        painter.end();
        return flat;
    }
    return image.convertToFormat(QImage::Format_RGB888);
}

engine::RgbImage toRgbImage(const QImage& image) {
    const QImage rgb = image.format() == QImage::Format_RGB888 ? image : image.convertToFormat(QImage::Format_RGB888);
    engine::RgbImage out;
    out.height = rgb.height();
    out.width = rgb.width();
    const std::size_t plane = static_cast<std::size_t>(out.height * out.width);
    out.rgb.resize(3 * plane);
    for (int y = 0; y < rgb.height(); ++y) {
        const uchar* line = rgb.constScanLine(y);
        for (int x = 0; x < rgb.width(); ++x)
            for (int c = 0; c < 3; ++c)
                out.rgb[c * plane + static_cast<std::size_t>(y) * static_cast<std::size_t>(out.width) + static_cast<std::size_t>(x)] =
                    static_cast<float>(line[3 * x + c]) / 255.0f;
    }
    return out;
}

engine::Result<engine::RgbImage> loadImageForEngine(const std::string& path) {
    auto image = readImageFile(QString::fromStdString(path));
    if (!image) return image.error();
    return toRgbImage(image.value());
}

bool looksLikeImage(const QString& path) {
    QImageReader reader(path);
    reader.setDecideFormatFromContent(true);
    const QByteArray format = reader.format().toLower();
    return !format.isEmpty() && format != "xpm" && format != "xbm" && format != "svg" && format != "svgz";
}

QString imageFileFilter() {
    QStringList patterns;
    for (const QByteArray& format : QImageReader::supportedImageFormats())
        patterns << QStringLiteral("*.") + QString::fromLatin1(format);
    return QStringLiteral("Images (%1)").arg(patterns.join(QLatin1Char(' ')));
}

}  // namespace attnscope::app
