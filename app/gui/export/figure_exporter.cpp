#include "gui/export/figure_exporter.h"

#include "views/widgets/figure_layout.h"
#include "views/widgets/figure_painter.h"
#include "views/data/plot_palette.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QMimeData>
#include <QPageSize>
#include <QPdfWriter>
#include <QSaveFile>
#include <QScrollArea>
#include <QSvgGenerator>
#include <QWidget>

#include <algorithm>
#include <cmath>

namespace attnscope::app {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("FigureExporter", text); }

constexpr double kInchPerMeter = 1.0 / 0.0254;

QJsonObject withFileFields(QJsonObject sidecar, const FigureRequest& request, QSize size, QSize logical) {
    sidecar.insert(QStringLiteral("format"), FigureExporter::formatName(request.format));
    sidecar.insert(QStringLiteral("dpi"), request.dpi);
    sidecar.insert(QStringLiteral("layout"), request.slide ? QStringLiteral("slide") : QStringLiteral("figure"));
    const bool png = request.format == FigureFormat::Png;
    sidecar.insert(QStringLiteral("size"), QJsonObject{{QStringLiteral("width"), size.width()},
                                                       {QStringLiteral("height"), size.height()},
                                                       {QStringLiteral("unit"), png ? QStringLiteral("px") : QStringLiteral("1/96 in")}});
    sidecar.insert(QStringLiteral("logicalSize"), QJsonObject{{QStringLiteral("width"), logical.width()},
                                                              {QStringLiteral("height"), logical.height()}});
    return sidecar;
}

QString nothingToDraw() { return tr("The view shows nothing to export yet: run a variant first."); }

// A slide lays the view out at the size that, scaled up by kSlideFontScale, fills the slide
// under its title; the view gets its size back afterwards.
class SlideSizeScope {
public:
    SlideSizeScope(QWidget* view, const FigureRequest& request) {
        if (!request.slide || !view) return;
        m_view = view;
        m_size = view->size();
        const QSize room = views::FigurePainter::slideContentSize(request.title);
        const QSize target(static_cast<int>(room.width() / FigureExporter::kSlideFontScale),
                           static_cast<int>(room.height() / FigureExporter::kSlideFontScale));
        view->resize(target);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        // A view that scrolls at that size (compare: panes and panels below) gets, in the same
        // 16:9 proportion, the room its content needs: smaller text rather than a cut figure.
        double grow = 1.0;
        for (QScrollArea* area : view->findChildren<QScrollArea*>()) {
            if (!area->widget() || !area->widgetResizable() || !area->isVisibleTo(view)) continue;
            const QSize need = area->widget()->minimumSizeHint(), have = area->viewport()->size();
            if (have.width() > 0) grow = std::max(grow, static_cast<double>(need.width()) / have.width());
            if (have.height() > 0) grow = std::max(grow, static_cast<double>(need.height()) / have.height());
        }
        if (grow > 1.0) {
            view->resize(QSize(static_cast<int>(std::ceil(target.width() * grow)), static_cast<int>(std::ceil(target.height() * grow))));
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        }
    }
    ~SlideSizeScope() {
        if (!m_view) return;
        m_view->resize(m_size);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    }
    SlideSizeScope(const SlideSizeScope&) = delete;
    SlideSizeScope& operator=(const SlideSizeScope&) = delete;

private:
    QWidget* m_view = nullptr;
    QSize m_size;
};

views::FigurePainter painterFor(QWidget* view, const FigureRequest& request) {
    views::FigurePainter painter(view, request.title, request.slide ? QString() : request.caption);
    painter.setSlide(request.slide);
    painter.setVectorCells(request.format != FigureFormat::Png);
    return painter;
}

}  // namespace

std::optional<FigureFormat> FigureExporter::formatForPath(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png")) return FigureFormat::Png;
    if (suffix == QLatin1String("svg")) return FigureFormat::Svg;
    if (suffix == QLatin1String("pdf")) return FigureFormat::Pdf;
    return std::nullopt;
}

QString FigureExporter::sidecarPathFor(const QString& figurePath) {
    const QFileInfo info(figurePath);
    return info.dir().filePath(info.completeBaseName() + QStringLiteral(".json"));
}

QImage FigureExporter::renderPng(QWidget* view, const FigureRequest& request, FigureOutcome* outcome) {
    const views::LightFigureScope light(view);  // figures are black on white in either theme
    const views::FigureLayoutScope figureLayout(view, request.slide);
    const SlideSizeScope slide(view, request);
    FigureOutcome local;
    FigureOutcome& out = outcome ? *outcome : local;
    const views::FigurePainter painter = painterFor(view, request);
    const QSize logical = painter.logicalSize();
    if (logical.isEmpty()) {
        out.error = nothingToDraw();
        return {};
    }
    const int dpi = std::clamp(request.dpi, 1, 9600);
    // At least the requested DPI, more when a cell would get less than one pixel (FORMATS.md §5).
    const double scale = std::max(dpi / views::FigurePainter::kLogicalDpi, painter.minScaleForCells());
    const QSize pixels(static_cast<int>(std::lround(logical.width() * scale)),
                       static_cast<int>(std::lround(logical.height() * scale)));
    if (pixels.width() > kMaxPngSide || pixels.height() > kMaxPngSide) {
        out.error = tr("A %1 × %2 pixel image is too large; choose a lower DPI.").arg(pixels.width()).arg(pixels.height());
        return {};
    }
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) {
        out.error = tr("Not enough memory for a %1 × %2 pixel image.").arg(pixels.width()).arg(pixels.height());
        return {};
    }
    image.fill(Qt::white);
    // The image keeps 96 dpi while painting so point-sized fonts are not scaled twice; the chosen
    // DPI goes into the file's pHYs chunk afterwards.
    if (!painter.paint(&image, scale)) {
        out.error = tr("Could not paint the figure.");
        return {};
    }
    const int dotsPerMeter = static_cast<int>(std::lround(dpi * kInchPerMeter));
    image.setDotsPerMeterX(dotsPerMeter);
    image.setDotsPerMeterY(dotsPerMeter);
    out.size = pixels;
    out.scale = scale;
    out.sidecar = withFileFields(request.sidecar, request, pixels, logical);
    image.setText(QString::fromLatin1(kPngTextKey), QString::fromUtf8(QJsonDocument(out.sidecar).toJson(QJsonDocument::Compact)));
    image.setText(QStringLiteral("Title"), request.title);
    image.setText(QStringLiteral("Description"), request.caption);
    image.setText(QStringLiteral("Software"), QStringLiteral("AttnScope %1").arg(QCoreApplication::applicationVersion()));
    return image;
}

QByteArray FigureExporter::renderSvg(QWidget* view, const FigureRequest& request, FigureOutcome* outcome) {
    const views::LightFigureScope light(view);  // figures are black on white in either theme
    const views::FigureLayoutScope figureLayout(view, request.slide);
    const SlideSizeScope slide(view, request);
    FigureOutcome local;
    FigureOutcome& out = outcome ? *outcome : local;
    const views::FigurePainter painter = painterFor(view, request);
    const QSize logical = painter.logicalSize();
    if (logical.isEmpty()) {
        out.error = nothingToDraw();
        return {};
    }
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setResolution(static_cast<int>(views::FigurePainter::kLogicalDpi));
    svg.setSize(logical);
    svg.setViewBox(QRect(QPoint(0, 0), logical));
    svg.setTitle(request.title);
    svg.setDescription(request.caption);
    if (!painter.paint(&svg, 1.0)) {
        out.error = tr("Could not paint the figure.");
        return {};
    }
    out.size = logical;
    out.sidecar = withFileFields(request.sidecar, request, logical, logical);
    return bytes;
}

FigureOutcome FigureExporter::exportFigure(QWidget* view, const QString& path, const FigureRequest& request) {
    const views::LightFigureScope light(view);  // figures are black on white in either theme
    const views::FigureLayoutScope figureLayout(view, request.slide);
    FigureOutcome out;
    const QString shown = QDir::toNativeSeparators(path);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        out.error = tr("Cannot write %1: %2").arg(shown, file.errorString());
        return out;
    }
    bool written = false;
    switch (request.format) {
    case FigureFormat::Png: {
        const QImage image = renderPng(view, request, &out);
        written = !image.isNull() && image.save(&file, "PNG");
        break;
    }
    case FigureFormat::Svg: {
        const QByteArray bytes = renderSvg(view, request, &out);
        written = !bytes.isEmpty() && file.write(bytes) == bytes.size();
        break;
    }
    case FigureFormat::Pdf: {
        const SlideSizeScope slide(view, request);
        const views::FigurePainter painter = painterFor(view, request);
        const QSize logical = painter.logicalSize();
        if (logical.isEmpty()) {
            out.error = nothingToDraw();
            break;
        }
        QPdfWriter pdf(&file);
        // 96 dpi device: one PDF unit per logical unit, fonts sized as on screen.
        pdf.setResolution(static_cast<int>(views::FigurePainter::kLogicalDpi));
        const double points = 72.0 / views::FigurePainter::kLogicalDpi;
        pdf.setPageSize(QPageSize(QSizeF(logical) * points, QPageSize::Point, QString(), QPageSize::ExactMatch));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setTitle(request.title);
        pdf.setCreator(QStringLiteral("AttnScope %1").arg(QCoreApplication::applicationVersion()));
        written = painter.paint(&pdf, 1.0);
        out.size = logical;
        out.sidecar = withFileFields(request.sidecar, request, logical, logical);
        break;
    }
    }
    if (!written) {
        file.cancelWriting();
        if (out.error.isEmpty()) out.error = tr("Cannot write %1: %2").arg(shown, file.errorString());
        return out;
    }
    if (!file.commit()) {
        out.error = tr("Cannot write %1: %2").arg(shown, file.errorString());
        return out;
    }
    if (request.writeSidecar) {
        const QString sidecarPath = sidecarPathFor(path);
        QSaveFile json(sidecarPath);
        const QByteArray bytes = QJsonDocument(out.sidecar).toJson(QJsonDocument::Indented);
        if (!json.open(QIODevice::WriteOnly) || json.write(bytes) != bytes.size() || !json.commit()) {
            out.error = tr("The figure was saved, but not its sidecar %1: %2")
                            .arg(QDir::toNativeSeparators(sidecarPath), json.errorString());
            return out;
        }
        out.sidecarPath = sidecarPath;
    }
    return out;
}

QMimeData* FigureExporter::mimeData(QWidget* view, const FigureRequest& request, QString* error) {
    FigureOutcome outcome;
    FigureRequest png = request;
    png.format = FigureFormat::Png;
    const QImage image = renderPng(view, png, &outcome);
    if (image.isNull()) {
        if (error) *error = outcome.error;
        return nullptr;
    }
    QByteArray pngBytes;
    QBuffer buffer(&pngBytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    FigureRequest svg = request;
    svg.format = FigureFormat::Svg;
    const QByteArray svgBytes = renderSvg(view, svg);
    auto* mime = new QMimeData;
    mime->setData(QStringLiteral("image/png"), pngBytes);
    if (!svgBytes.isEmpty()) mime->setData(QStringLiteral("image/svg+xml"), svgBytes);
    mime->setImageData(image);
    return mime;
}

}  // namespace attnscope::app
