#pragma once
// Paints a view as a figure (title, the view's plots with their colour bars, caption) on any
// QPaintDevice: QImage, QSvgGenerator or QPdfWriter. Plots are drawn through QCustomPlot's own
// painter, so axes and text stay vector on SVG and PDF; with vector cells (SVG, PDF) colour maps of
// up to kMaxVectorCells cells are drawn as filled rectangles, larger ones as their bitmap, lossless
// (FORMATS.md §5 "Export").

#include <QSize>
#include <QString>

class QCPPainter;
class QPaintDevice;
class QPointF;
class QWidget;

namespace attnscope::views {

class FigurePainter {
public:
    /// Logical units are 1/96 inch: a view's widget pixels at 100 % scaling.
    static constexpr double kLogicalDpi = 96.0;
    /// Widgets with this dynamic property set to true, and their children, are left out (toolbars).
    static constexpr const char* kSkipProperty = "attnscopeExportSkip";
    /// Custom-painted widgets with this property set to true (the view itself or a child) are part
    /// of the figure, drawn by QWidget::render (bitmaps and paths as they paint them).
    static constexpr const char* kRenderProperty = "attnscopeExportRender";

    /// Colour maps with more cells than this stay bitmaps on vector devices (file size).
    static constexpr long long kMaxVectorCells = 262144;

    /// The slide layout: a 16:9 page of kSlideWidth × kSlideHeight logical units (13.3 × 7.5 in,
    /// a presentation's default page), one large title, no caption, the content scaled to fill
    /// the rest with small margins.
    static constexpr int kSlideWidth = 1280;
    static constexpr int kSlideHeight = 720;
    static constexpr double kSlideTitlePixels = 30.0;
    static constexpr double kSlideMargin = 10.0;
    /// The content's size, in logical units, that fills a slide under its title (what the exporter
    /// lays the view out at, before scaling it up by the slide's font factor).
    static QSize slideContentSize(const QString& title);

    FigurePainter(QWidget* view, QString title, QString caption);
    void setSlide(bool on) { m_slide = on; }
    /// Colour-map cells as vector rectangles (for SVG and PDF): sharp at any zoom, no lossy image.
    void setVectorCells(bool on) { m_vectorCells = on; }

    /// Logical size of the figure: the view's drawn content plus a title band above and a
    /// caption band below. Empty when the view shows nothing that can be drawn.
    QSize logicalSize() const;
    /// Device pixels per logical unit needed so every colour-map cell drawn gets at least one
    /// device pixel (1 when cells are already larger than a pixel).
    double minScaleForCells() const;
    /// Paints the figure with its top-left corner at the device origin. `scale` maps logical units
    /// to device units (dpi / 96 for images; 1 for SVG and PDF devices set to 96 dpi). The device's
    /// logical DPI must be 96 while painting, or point-sized fonts would be scaled twice.
    /// Returns false when no painter could be opened on the device.
    bool paint(QPaintDevice* device, double scale) const;

private:
    struct Layout;
    Layout layout() const;
    void paintContent(QCPPainter& painter, const Layout& l, const QPointF& origin) const;
    void paintSlide(QCPPainter& painter, const Layout& l) const;

    QWidget* m_view = nullptr;
    QString m_title;
    QString m_caption;
    bool m_vectorCells = false;
    bool m_slide = false;
};

}  // namespace attnscope::views
