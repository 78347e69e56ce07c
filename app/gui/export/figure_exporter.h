#pragma once
// Figures of any view as PNG (chosen DPI), SVG (QSvgGenerator) or PDF (QPdfWriter), each with a
// title, the view's colour bar and a caption, plus a JSON sidecar. Headless-friendly: explicit
// paths and options, no dialogs; errors come back as plain text.

#include "gui/export/figure_format.h"

#include <QByteArray>
#include <QImage>
#include <QJsonObject>
#include <QSize>
#include <QString>

#include <optional>

class QMimeData;
class QWidget;

namespace attnscope::app {

struct FigureRequest {
    FigureFormat format = FigureFormat::Png;
    /// PNG: pixels per inch (raised when needed so each heatmap cell gets >= 1 pixel); SVG and
    /// PDF are vector and only record it.
    int dpi = 300;
    QString title;
    QString caption;
    /// FigureMetadata::sidecar(); format, dpi and size are added here.
    QJsonObject sidecar;
    /// Writes PATH_WITHOUT_SUFFIX.json next to the figure.
    bool writeSidecar = true;
    /// The slide layout (FigurePainter::kSlideWidth × kSlideHeight, 16:9): one large title, no
    /// caption (it stays in the sidecar), the view laid out smaller and scaled up by
    /// kSlideFontScale so that its text reads from the back of a lecture hall.
    bool slide = false;
};

struct FigureOutcome {
    QString error;         ///< empty on success; plain text naming the file and the cause
    QSize size;            ///< PNG: pixels; SVG/PDF: logical units (1/96 inch)
    double scale = 1.0;    ///< device pixels per logical unit used for PNG
    QString sidecarPath;   ///< empty when no sidecar was written
    QJsonObject sidecar;   ///< what was written (also in the PNG's tEXt chunk)
    bool ok() const { return error.isEmpty(); }
};

class FigureExporter {
public:
    static constexpr int kDefaultDpi = 300;
    /// A slide's text is this many times its on-screen size.
    static constexpr double kSlideFontScale = 1.6;
    /// PNG tEXt key holding the sidecar JSON.
    static constexpr const char* kPngTextKey = "attnscope";
    /// Largest PNG side in pixels: a bigger DPI request is refused rather than allocating GBs.
    static constexpr int kMaxPngSide = 30000;

    /// By suffix (.png, .svg, .pdf, any case); nullopt otherwise.
    static std::optional<FigureFormat> formatForPath(const QString& path);
    static QString formatName(FigureFormat format) { return figureFormatName(format); }
    /// The sidecar path of a figure: same folder and base name, suffix .json.
    static QString sidecarPathFor(const QString& figurePath);

    /// Writes the figure and (unless disabled) its sidecar. Nothing is left half-written: files
    /// go through QSaveFile.
    static FigureOutcome exportFigure(QWidget* view, const QString& path, const FigureRequest& request);

    /// The PNG image (DPI set, sidecar in tEXt); a null image and *error when nothing is drawn.
    static QImage renderPng(QWidget* view, const FigureRequest& request, FigureOutcome* outcome = nullptr);
    static QByteArray renderSvg(QWidget* view, const FigureRequest& request, FigureOutcome* outcome = nullptr);
    /// Clipboard data: image/png, image/svg+xml and a plain image. Caller owns it; nullptr and
    /// *error when the view draws nothing.
    static QMimeData* mimeData(QWidget* view, const FigureRequest& request, QString* error = nullptr);
};

}  // namespace attnscope::app
