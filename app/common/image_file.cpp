#include "common/image_file.h"
#include "common/image_load.h"

#include <QFile>
#include <QFileInfo>
#include <QImageReader>
#include <QPainter>
#include <QStringList>

#include <algorithm>
#include <cstdlib>

namespace attnscope::app {
namespace {

engine::Error fileError(const QString& path, const QString& message) {
    return engine::makeError(engine::ErrorCode::InvalidInput, (path + QStringLiteral(": ") + message).toStdString());
}

// Qt refuses to allocate more than this for one image (MiB); the pixel cap below is the real
// limit, this one stops a decoder from growing past it.
// Qt's allocation limit for a cap of `pixels` (four bytes a pixel).
int allocationLimitMiB(qint64 pixels) { return static_cast<int>(pixels * 4 / (1024 * 1024)) + 1; }

// What a decoder says while it reads (libjpeg's "Corrupt JPEG data: premature end of data segment"
// comes as a Qt warning, with a grey image): a warning is a refusal, never a picture made up.
QStringList* g_decoderWarnings = nullptr;
QtMessageHandler g_previousHandler = nullptr;

void collectDecoderWarning(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (g_decoderWarnings && type != QtDebugMsg && type != QtInfoMsg) g_decoderWarnings->append(message.trimmed());
    else if (g_previousHandler) g_previousHandler(type, context, message);
}

// Reads the image, collecting what the decoder warns about meanwhile.
bool readCollectingWarnings(QImageReader& reader, QImage& image, QStringList& warnings) {
    g_decoderWarnings = &warnings;
    g_previousHandler = qInstallMessageHandler(collectDecoderWarning);
    const bool read = reader.read(&image);
    qInstallMessageHandler(g_previousHandler);
    g_decoderWarnings = nullptr;
    return read;
}

quint32 littleEndian32(const QByteArray& bytes, int at) {
    return static_cast<quint32>(static_cast<uchar>(bytes[at])) | static_cast<quint32>(static_cast<uchar>(bytes[at + 1])) << 8 |
           static_cast<quint32>(static_cast<uchar>(bytes[at + 2])) << 16 | static_cast<quint32>(static_cast<uchar>(bytes[at + 3])) << 24;
}

// A file cut short that the decoder reads without a word: a GIF without its trailer, a PNG
// without IEND, an uncompressed BMP whose pixel rows run past the end. Empty when whole.
QString truncation(const QString& path, const QByteArray& format) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    const qint64 size = file.size();
    const QByteArray head = file.read(64);
    file.seek(std::max<qint64>(0, size - 12));
    const QByteArray tail = file.read(12);
    if (format == "gif" && (tail.isEmpty() || tail.back() != '\x3B'))
        return QStringLiteral("the GIF ends without its trailer (the file is cut short)");
    if (format == "png" && !tail.contains("IEND")) return QStringLiteral("the PNG ends without its IEND chunk (the file is cut short)");
    if (format == "bmp" && head.size() >= 34) {
        const quint32 offset = littleEndian32(head, 10), compression = littleEndian32(head, 30);
        const qint64 width = static_cast<qint32>(littleEndian32(head, 18)), height = static_cast<qint32>(littleEndian32(head, 22));
        const qint64 bits = static_cast<uchar>(head[28]) | static_cast<uchar>(head[29]) << 8;
        if (offset >= size) return QStringLiteral("the BMP's pixel data starts at byte %1, past its end (%2 bytes)").arg(offset).arg(size);
        const bool uncompressed = compression == 0 || compression == 3;
        const qint64 rowBytes = (width * bits + 31) / 32 * 4;  // (< 2^31 · 2^16: no overflow)
        const qint64 rows = std::abs(height);
        // Compared by division: rows × rowBytes reaches 2^78 for a header of extreme values.
        if (uncompressed && width > 0 && rowBytes > 0 && rows > (size - offset) / rowBytes)
            return QStringLiteral("the BMP's %1 pixel rows need %2 bytes after byte %3, the file has %4 (it is cut short)")
                .arg(rows)
                .arg(static_cast<double>(rowBytes) * static_cast<double>(rows), 0, 'f', 0)
                .arg(offset)
                .arg(size);
    }
    return {};
}

// The most pixels a file of `bytes` can describe in `format`, from the densest coding the format
// has: GIF's LZW emits at most 4096 pixels per code of at least 3 bits (10,923 a byte); PNG's
// deflate at most 1,032 bytes of 1-bit rows (8 pixels) per byte. 0: no bound (JPEG's arithmetic
// coding spends less than a bit on a flat block; BMP's RLE skips runs with a few bytes).
qint64 mostPixels(const QByteArray& format, qint64 bytes) {
    if (format == "gif") return bytes * 10923;
    if (format == "png") return bytes * 8256;
    return 0;
}

// A header that claims more pixels than the rest of the file can code: the picture data is
// missing (a decoder fills the frame with background without a word). Empty when it can.
QString missingPixels(const QString& path, const QByteArray& format, QSize claimed) {
    const qint64 bytes = QFileInfo(path).size();
    const qint64 most = mostPixels(format, bytes);
    const qint64 pixels = claimed.isValid() ? static_cast<qint64>(claimed.width()) * claimed.height() : 0;
    if (most == 0 || pixels <= most) return {};
    return QStringLiteral("its header claims %1 × %2 pixels, but %3 bytes of %4 can code at most %5: the picture data is "
                          "missing or cut short")
        .arg(claimed.width())
        .arg(claimed.height())
        .arg(bytes)
        .arg(QString::fromLatin1(format.toUpper()))
        .arg(most);
}

}  // namespace

// The size a picture's header claims: the reader's, or for a GIF its logical screen (bytes 6–9),
// which Qt paints whole although its reader may report only the first frame's size.
QSize claimedSize(const QString& path, const QByteArray& format, QSize fromReader) {
    if (format != "gif") return fromReader;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return fromReader;
    const QByteArray head = file.read(10);
    if (head.size() < 10) return fromReader;
    const auto le16 = [&](int at) { return static_cast<int>(static_cast<uchar>(head[at]) | static_cast<uchar>(head[at + 1]) << 8); };
    const QSize screen(le16(6), le16(8));
    if (!fromReader.isValid()) return screen;
    return static_cast<qint64>(screen.width()) * screen.height() > static_cast<qint64>(fromReader.width()) * fromReader.height()
               ? screen
               : fromReader;
}

engine::Result<QImage> readImageFile(const QString& path, qint64 maxPixels) {
    maxPixels = std::clamp<qint64>(maxPixels, 1, kMaxImageFilePixels);
    const QFileInfo info(path);
    if (!info.exists()) return fileError(path, QStringLiteral("no such file"));
    if (!info.isFile()) return fileError(path, QStringLiteral("not a file"));
    QImageReader reader(path);
    reader.setDecideFormatFromContent(true);
    reader.setAllocationLimit(allocationLimitMiB(maxPixels));
    if (!reader.canRead())
        return fileError(path, QStringLiteral("not an image Qt can read (PNG, JPEG, BMP, GIF, %1)")
                                   .arg(QString::fromLatin1(QImageReader::supportedImageFormats().join(", "))));
    const QByteArray format = reader.format().toLower();
    const QSize size = claimedSize(path, format, reader.size());
    if (size.isValid() && static_cast<qint64>(size.width()) * size.height() > maxPixels)
        return fileError(path, QStringLiteral("its header claims %1 × %2 pixels, more than the %3 million taken")
                                   .arg(size.width())
                                   .arg(size.height())
                                   .arg(maxPixels / 1000000.0, 0, 'g', 3));
    if (const QString cut = truncation(path, format); !cut.isEmpty()) return fileError(path, cut);
    if (const QString missing = missingPixels(path, format, size); !missing.isEmpty()) return fileError(path, missing);
    QImage image;
    QStringList warnings;
    if (!readCollectingWarnings(reader, image, warnings) || image.isNull())
        return fileError(path, QStringLiteral("could not be decoded (%1)").arg(reader.errorString()));
    if (!warnings.isEmpty())
        return fileError(path, QStringLiteral("is damaged: the %1 decoder says \"%2\"").arg(QString::fromLatin1(format), warnings.front()));
    if (static_cast<qint64>(image.width()) * image.height() > maxPixels)
        return fileError(path, QStringLiteral("%1 × %2 pixels is more than the %3 million taken")
                                   .arg(image.width())
                                   .arg(image.height())
                                   .arg(maxPixels / 1000000.0, 0, 'g', 3));
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

namespace {

// The fuzz build leaves this loop without coverage probes: it has no branch that depends on the
// picture, and probes on every channel of up to 64 million pixels cost more than the decoding.
#if defined(__clang__)
#define ATTNSCOPE_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define ATTNSCOPE_NO_COVERAGE
#endif

// One interleaved RGB row into the three planes, as values in [0, 1].
ATTNSCOPE_NO_COVERAGE void splitRow(const uchar* line, std::size_t width, float* red, float* green, float* blue) {
    for (std::size_t x = 0; x < width; ++x) {
        red[x] = static_cast<float>(line[3 * x]) / 255.0f;
        green[x] = static_cast<float>(line[3 * x + 1]) / 255.0f;
        blue[x] = static_cast<float>(line[3 * x + 2]) / 255.0f;
    }
}

}  // namespace

engine::RgbImage toRgbImage(const QImage& image) {
    const QImage rgb = image.format() == QImage::Format_RGB888 ? image : image.convertToFormat(QImage::Format_RGB888);
    engine::RgbImage out;
    out.height = rgb.height();
    out.width = rgb.width();
    const auto width = static_cast<std::size_t>(out.width);
    const std::size_t plane = static_cast<std::size_t>(out.height) * width;
    out.rgb.resize(3 * plane);
    float* const red = out.rgb.data();
    for (int y = 0; y < rgb.height(); ++y) {
        const std::size_t row = static_cast<std::size_t>(y) * width;
        splitRow(rgb.constScanLine(y), width, red + row, red + plane + row, red + 2 * plane + row);
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
