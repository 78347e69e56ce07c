#pragma once
// Small multiples ("model view"): one thumbnail per (layer, head) of the selected result, laid out
// layers × heads; click to select, double-click to open it in the heatmap. Each thumbnail is
// coloured on its own head's range or on one range shared by every head, so heads can be compared.

#include "views/widgets/figure_layout.h"
#include "views/data/latest_job.h"
#include <attnscope/types.h>

#include <QFuture>
#include <QImage>
#include <QPointer>
#include <QVector>
#include <QWidget>

#include <cstdint>
#include <limits>
#include <memory>
#include <utility>

class QComboBox;
class QPainter;

namespace attnscope::views {

class InspectionState;

class HeadsGrid : public QWidget, public FigureLayout {
    Q_OBJECT
public:
    static constexpr int kThumbnailSide = 128;  ///< pixels of a thumbnail image before scaling
    static constexpr int kMaxCellSide = 112;
    /// Largest thumbnail in a figure (Export All Heads), which also gets a colour bar.
    static constexpr int kFigureCellSide = 200;
    static constexpr int kGroupGap = 10;        ///< extra space between key/value groups    ///< largest drawn thumbnail, in device-independent px
    /// The main window's threshold for setBackgroundPooling(): 4 heads of 2048² (pooling 4 heads of
    /// 4096 tokens on the GUI thread delays its paint).
    static constexpr std::int64_t kBackgroundPoolingWeights = 4LL * 2048 * 2048;

    /// PerHead: each thumbnail spans [0, its head's max], so every pattern is visible. Shared: one
    /// range [0, max over all heads], so colours mean the same weight in every thumbnail.
    enum class ScaleMode { PerHead, Shared };

    explicit HeadsGrid(QWidget* parent = nullptr);

    /// Highlights state->head() and shows state->resultIndex(); follows their changes.
    void setInspectionState(InspectionState* state);
    void setResult(std::shared_ptr<const engine::RunResult> result);
    /// Results with more than `minWeights` weights (all heads) are pooled into thumbnails on a
    /// worker thread; the previous thumbnails stay until the new ones are ready, and a pooling
    /// for a result or layer no longer shown is dropped. Default: never (setters pool at once).
    void setBackgroundPooling(std::int64_t minWeights = kBackgroundPoolingWeights);
    /// True while thumbnails are pooled on a worker thread.
    bool isPooling() const { return m_pooling; }
    /// Blocks until the thumbnails being pooled are ready and shows them (exports, screenshots).
    void finishPooling();
    void setScaleMode(ScaleMode mode);
    ScaleMode scaleMode() const { return m_scaleMode; }
    QComboBox* scaleCombo() const { return m_scaleCombo; }

    /// Layers of the shown result: one today (random projections and one checkpoint layer per
    /// run); the layout is layers × heads.
    int layerCount() const { return static_cast<int>(m_thumbnails.size()); }
    int headCount() const { return m_thumbnails.isEmpty() ? 0 : static_cast<int>(m_thumbnails.front().size()); }
    /// The thumbnail image (viridis over scaleRange()); null when out of range.
    QImage thumbnail(int layer, int head) const;
    /// The colour range [0, max] of a thumbnail under the current scale mode; (0, 0) when out of range.
    std::pair<double, double> scaleRange(int layer, int head) const;
    /// Largest weight of a head (the per-head range's upper end).
    double headMax(int layer, int head) const;
    /// Where a thumbnail is drawn, in widget coordinates; empty when out of range.
    QRect thumbnailRect(int layer, int head) const;

    /// The largest thumbnail side in the window (kMaxCellSide by default): a short window gives
    /// the strip less height so the views under it keep theirs.
    void setMaxCellSide(int side);
    int maxCellSide() const { return m_maxCellSide; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

    /// A figure: the grid as wide as its thumbnails and a colour bar, no selection frame, no
    /// scale chooser; under per-head scales each head's label gives its range's top.
    QSize beginFigureLayout(QSize windowSize, bool slide) override;
    void endFigureLayout() override;
    bool inFigureLayout() const { return m_figure; }

Q_SIGNALS:
    /// Intent: the user clicked the thumbnail of (layer, head).
    void headSelected(int layer, int head);
    /// Intent: the user double-clicked it: show it large.
    void headOpened(int layer, int head);
    /// The user switched between per-head and shared colour scales.
    void scaleModeChanged(attnscope::views::HeadsGrid::ScaleMode mode);
    /// Thumbnails pooled on a worker thread are shown now.
    void thumbnailsReady();

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    struct Head {
        std::vector<float> values;  // [rows, cols], pooled to kThumbnailSide
        std::vector<std::uint8_t> inPattern;
        int rows = 0;
        int cols = 0;
        float max = 0;
    };
    using Layer = QVector<Head>;
    /// Every head of `r` pooled to kThumbnailSide; plain data, so it may run on a worker thread.
    static Layer poolLayer(const engine::AttentionResult& r);
    void rebuild();
    void showLayer(const Layer* layer);
    void recolor();
    bool hitTest(const QPoint& pos, int* layer, int* head) const;
    int cellSide(int width) const;
    /// Query heads per key/value head of the shown checkpoint layer (1: no grouping).
    int groupSize() const;
    int groupGaps() const;
    int headerHeight() const;
    int labelHeight() const;
    int rowLabelWidth() const;
    int colorBarWidth() const;
    /// The label under a thumbnail `width` pixels wide.
    QString headLabel(int layer, int head, int width) const;
    void paintColorBar(QPainter& painter, const QRect& beside) const;
    void paintStale(QPainter& painter) const;

    QPointer<InspectionState> m_state;
    std::shared_ptr<const engine::RunResult> m_result;
    QComboBox* m_scaleCombo = nullptr;
    bool m_figure = false;
    int m_maxCellSide = kMaxCellSide;
    ScaleMode m_scaleMode = ScaleMode::PerHead;
    QVector<QVector<Head>> m_heads;         // [layer][head]
    QVector<QVector<QImage>> m_thumbnails;  // [layer][head]
    float m_sharedMax = 0;
    std::int64_t m_backgroundWeights = std::numeric_limits<std::int64_t>::max();
    LatestJob m_poolJob;  // the latest rebuild; older poolings are dropped
    bool m_pooling = false;
    QFuture<Layer> m_future;
};

}  // namespace attnscope::views
