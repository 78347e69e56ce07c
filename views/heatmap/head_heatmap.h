#pragma once
// One head's n x m attention weights as a colour map with a colour bar and token tooltips; zoom
// and pan, a colour map / scale / pooling toolbar, and level of detail for long inputs. Its parts:
// the pointer and keys (CellPointer, shared with the mask and compare views), the toolbar
// (HeatmapToolbar), the axes (MatrixTickLabels), the colours (heatmap_colors.h), the title
// (heatmap_title.h); head_heatmap_lod.cpp draws what PoolingJobs and ZoomRegions make of long heads.

#include "views/data/head_matrix.h"
#include "views/data/head_matrix_source.h"
#include "views/data/heatmap_options.h"
#include "views/data/token_highlight.h"
#include "views/heatmap/heatmap_colors.h"
#include "views/heatmap/zoom_regions.h"
#include "views/widgets/cell_pointer.h"
#include "views/widgets/matrix_tick_labels.h"
#include "views/widgets/result_view.h"

#include <attnscope/types.h>

#include <QHash>
#include <QPointer>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <limits>
#include <memory>
#include <utility>

class QCustomPlot;
class QCPColorMap;
class QCPColorMapData;
class QCPAxis;
class QCPColorScale;
class QCPItemRect;
class QCPTextElement;
class QTimer;

namespace attnscope::views {

class HeatmapToolbar;
class PoolingJobs;
class InspectionState;
class MatrixPlot;

class HeadHeatmap : public QWidget, public ResultView {
    Q_OBJECT
public:
    /// An axis shows token text while at most this many queries/keys are visible, indices above.
    static constexpr int kMaxTokenTicks = MatrixTickLabels::kMaxTokenTicks;
    /// The log scale's floor relative to the largest value (HeatmapColors).
    static constexpr double kLogFloorRatio = HeatmapColors::kLogFloorRatio;
    /// Pooled heads cached per (result, variant, head, mode), so switching back is free.
    static constexpr int kCacheSize = HeadMatrixSource::kCacheSize;
    /// Zoom factor of one +/- key press (the visible span is multiplied by it or divided by it).
    static constexpr double kKeyZoomFactor = 0.8;
    /// Weights per head above which the main window pools a head on a worker thread (pooling a
    /// 4096² head on the GUI thread stalls it visibly); setBackgroundPooling().
    static constexpr std::int64_t kBackgroundPoolingCells = 2LL * 2048 * 2048;
    /// A zoomed region reaches this fraction of the visible span beyond each edge (within
    /// HeadMatrix::kMaxDisplaySide), so pans and zooms inside it reuse it.
    static constexpr double kRegionMargin = HeadMatrixSource::kRegionMargin;

    explicit HeadHeatmap(QWidget* parent = nullptr);
    ~HeadHeatmap() override;

    /// The heatmap shows state->resultIndex() and state->head() and follows their changes.
    void setInspectionState(InspectionState* state) override;
    void setResult(Run result) override;
    void finishBackgroundWork() override { finishPooling(); }
    /// Display names by variant id, for the title; unknown ids are shown as they are.
    void setVariantNames(const QHash<QString, QString>& idToName);
    /// Text put before the title (the compare view's "A: ", "B: ").
    void setTitlePrefix(const QString& prefix);
    /// Compact: the title names the variant and only the parameters that differ from its
    /// defaults, on one line elided to the width; the full title is the plot's tooltip (the
    /// compare view's panes, which share head, n and source).
    void setCompactTitle(bool compact);
    /// The full title, also while compact.
    QString fullTitle() const { return m_fullTitle; }
    /// A fixed colour range [lo, hi] (the compare view's shared scale); hi <= lo restores the
    /// automatic range of the shown matrix.
    void setValueRange(double lo, double hi);
    /// Outlines the cell (query, key) in input indices, e.g. the cell hovered in a linked view;
    /// (-1, -1) removes the outline.
    void setMarkedCell(int query, int key);
    /// Bands over these tokens' rows and columns (Find Token, Ctrl+F); empty clears them.
    void setHighlightedTokens(const QVector<int>& tokens);
    int highlightBands() const { return m_highlight.count(); }
    /// The keyboard's cell cursor (arrow keys while the plot has focus): marks the cell, scrolls
    /// it into view, shows its text and emits cellHovered, as the pointer over it would.
    void moveCursorTo(int query, int key);
    /// The cell under the pointer or the cursor; (-1, -1) when none.
    int hoveredQuery() const { return m_pointer->hoveredQuery(); }
    int hoveredKey() const { return m_pointer->hoveredKey(); }
    int markedQuery() const { return m_markedQuery; }
    int markedKey() const { return m_markedKey; }
    /// Largest value of the shown head (0 when nothing is shown).
    float matrixMax() const { return m_pooled ? m_pooled->maxValue() : 0.0f; }

    /// Heads with more than `minWeights` weights that are not in the cache are pooled on a worker
    /// thread: the previous picture of the same result stays (or the plot is empty after a new
    /// result) with a "pooling…" note in the title until the pooled head is shown. A pooling that
    /// finishes for a head or result no longer asked for is not shown. Default: never (setters
    /// then show the head at once, as exports and tests expect).
    void setBackgroundPooling(std::int64_t minWeights = kBackgroundPoolingCells);
    /// True while a head is being pooled on a worker thread for display.
    bool isPooling() const { return m_source.isPooling(); }
    /// The head being pooled, -1 when none.
    int poolingHead() const { return m_source.poolingHead(); }
    /// Blocks until the head being pooled (and a zoomed region being built) is ready and shows
    /// it (exports, screenshots).
    void finishPooling();
    /// True while a zoomed region is built on the worker thread (background pooling only).
    bool isBuildingRegion() const { return m_source.regionJob() != nullptr; }
    /// Share of the head being pooled that is done, 0..100 (0 when none).
    int poolingPercent() const { return m_source.poolingPercent(); }
    /// The head whose pooling the user stopped (it is pooled again by poolAgain()), -1 when none.
    int stoppedHead() const { return m_source.stoppedHead(); }

    /// Colour map, scale and pooling; the toolbar shows them. Emits nothing (setters are not intents).
    void setOptions(const HeatmapOptions& options);
    const HeatmapOptions& options() const { return m_options; }
    /// The colour/scale/pooling toolbar above the plot (the compare view's panes hide theirs).
    void setToolbarVisible(bool visible);
    QWidget* toolbar() const;
    /// The title while there is no result; empty: "No result yet: press Run (F5)".
    void setEmptyMessage(const QString& message);
    /// The pane's own colour bar; panes that share one bar (the compare view) hide theirs.
    void setColorBarShown(bool shown);
    bool colorBarShown() const;
    /// The colour scale the map is drawn with (also while its bar is hidden).
    QCPColorScale* colorScale() const { return m_colorScale; }

    const std::shared_ptr<const engine::RunResult>& result() const { return m_source.result(); }
    QCustomPlot* plot() const;

    // Data accessors, so tests assert on plotted data rather than pixels. Cells are display cells:
    // one per (query, key) unless the matrix was max-pooled (poolFactor() > 1).
    const QCPColorMapData* colorData() const;
    QSize dataSize() const;  ///< width = key cells, height = query cells; empty when nothing is shown
    double cellValue(int query, int key) const;  ///< NaN outside dataSize()
    /// Pool factor of the drawn cells: 1 when the head is small or a zoomed region is drawn at
    /// full resolution.
    int poolFactor() const { return m_shown ? m_shown->poolFactor() : 1; }
    /// Pool factor of the whole head (what the unzoomed view draws).
    int headPoolFactor() const { return m_pooled ? m_pooled->poolFactor() : 1; }
    /// Input indices of drawn cell (0, 0): non-zero while a zoomed region is drawn.
    std::int64_t shownRowOffset() const { return m_shown ? m_shown->rowOffset() : 0; }
    std::int64_t shownColOffset() const { return m_shown ? m_shown->colOffset() : 0; }
    /// True while a zoomed-in region of a pooled head is drawn at full resolution.
    bool showsRegion() const { return m_shown && m_shown != m_pooled; }
    /// How often a head was pooled since construction (cache misses), for the LOD cache test.
    int poolingCount() const { return m_source.poolingCount(); }
    int shownHead() const { return m_shownHead; }  ///< -1 when nothing is shown
    /// True when both axes show token text (at most kMaxTokenTicks visible on each).
    bool tokenAxes() const { return m_ticks.keyTokens() && m_ticks.queryTokens(); }
    bool keyAxisShowsTokens() const { return m_ticks.keyTokens(); }
    /// Token labels shown: every step-th (1 = every token) so that they do not overlap.
    int keyLabelStep() const { return m_ticks.keyLabelStep(); }
    int queryLabelStep() const { return m_ticks.queryLabelStep(); }
    bool queryAxisShowsTokens() const { return m_ticks.queryTokens(); }
    /// The colour map actually drawn: "rdbu" whenever the head has negative weights.
    QString shownColormap() const { return m_colors.colormap; }
    /// True when the log scale is drawn (asked for, and the head has no negative weights).
    bool logScaleShown() const { return m_colors.logScale; }
    /// Value drawn for zeros under the log scale (0 when the linear scale is drawn).
    double logFloor() const { return m_colors.logFloor; }
    /// The colour range [lower, upper] of the drawn data.
    std::pair<double, double> colorRange() const;
    QString colorBarLabel() const;
    /// Visible input ranges [first, last] of keys (x) and queries (y), in cell-centre units.
    std::pair<double, double> visibleKeyRange() const;
    std::pair<double, double> visibleQueryRange() const;
    /// Shows keys [keyLo, keyHi] x queries [queryLo, queryHi] (cell-centre coordinates) and
    /// updates labels and level of detail at once.
    void setVisibleRange(double keyLo, double keyHi, double queryLo, double queryHi);
    QString title() const;
    /// Plain-text tooltip of a (query, key) cell in input indices:
    /// "query 3 'it' → key 1 'cat': weight 0.1234".
    QString hoverText(int query, int key) const;

public Q_SLOTS:
    /// Stops pooling the head being pooled (the toolbar's Cancel button, Esc on the plot); the
    /// title says so and the button offers to pool it again.
    void stopPooling();
    /// Pools the stopped head again.
    void poolAgain();
    /// Multiplies the visible span of both axes by `factor` around the centre (< 1 zooms in).
    void zoomBy(double factor);
    /// Shows the whole head.
    void resetZoom();

Q_SIGNALS:
    /// Intent: the pointer is over (query, key) in input indices; (-1, -1) when it left.
    void cellHovered(int query, int key);
    /// Intent: the user picked another colour map, scale or pooling in the toolbar.
    void optionsChanged(const attnscope::views::HeatmapOptions& options);
    /// A head pooled on a worker thread is shown now.
    void backgroundPoolingFinished(int head);
    /// A zoomed region built on the worker thread is shown now.
    void regionShown();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void buildPlot();
    void onToolbarPicked(const HeatmapOptions& options);
    void rebuild();
    PoolMode poolModeFor(const engine::AttentionResult& r) const;
    HeadKey keyOf(int head, PoolMode mode) const;
    /// Pools `head` on the worker thread (HeadMatrixSource::startPooling) and shows it when ready.
    void startPooling(int head, PoolMode mode);
    void onPooled(int head, std::shared_ptr<const HeadMatrix> matrix);
    /// What the zoomed region follows (ZoomRegions).
    ZoomRegions::View regionView() const;
    void showRegion(std::shared_ptr<const HeadMatrix> region, bool fromWorker);
    /// Shows `matrix` as head `head` of the current result; keeps the zoom when `keepZoom`.
    void showHead(int head, std::shared_ptr<const HeadMatrix> matrix, bool keepZoom);
    /// The query and key axes and the colour bar: hidden while there is no head to draw.
    void showAxesAndColorBar(bool shown);
    void cancelPooling();
    /// Shows the progress bar and Cancel / Pool again button as the pooling state asks.
    void syncPoolingControls();
    void showMatrix(std::shared_ptr<const HeadMatrix> matrix);
    void applyColors();
    void updateTitle();
    void refreshHighlight();
    void updateAxes();
    void updateTickLabels();
    MatrixTickLabels::Matrix tickMatrix() const;
    void onRangeChanged();
    void updateLevelOfDetail();
    /// The cells the view shows now: queries x keys, clamped to the head.
    CellBox visibleCells() const;
    void fitRanges();
    void fitAxisRect();
    const engine::AttentionResult* shownResult() const;
    QString tokenText(std::int64_t index) const;

    MatrixPlot* m_plot = nullptr;
    QCPColorMap* m_colorMap = nullptr;
    QCPColorScale* m_colorScale = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPItemRect* m_marker = nullptr;
    TokenHighlightBands m_highlight;
    QVector<int> m_highlighted;
    QString m_titlePrefix;
    QString m_emptyMessage;  // the title while there is no result (setEmptyMessage)
    QString m_fullTitle;
    bool m_compactTitle = false;
    double m_rangeLo = 0;
    double m_rangeHi = 0;  // <= m_rangeLo: automatic
    int m_markedQuery = -1;
    int m_markedKey = -1;
    HeatmapToolbar* m_toolbar = nullptr;
    CellPointer* m_pointer = nullptr;
    QTimer* m_lodTimer = nullptr;
    QPointer<InspectionState> m_state;
    QHash<QString, QString> m_variantNames;
    HeatmapOptions m_options;
    HeadMatrixSource m_source;  // the result, its pooled heads and the jobs that make them
    std::shared_ptr<const HeadMatrix> m_pooled;  // the whole head
    std::shared_ptr<const HeadMatrix> m_shown;   // m_pooled or a full-resolution region of it
    ZoomRegions* m_regions = nullptr;            // the full-resolution regions of a zoomed view
    std::uint64_t m_shownSerial = 0;  // m_source.serial() of the drawn head
    PoolingJobs* m_pooling = nullptr;  // long heads pooled on the worker thread
    int m_shownHead = -1;
    MatrixTickLabels m_ticks;
    bool m_inRangeUpdate = false;
    HeatmapColors m_colors;  // what the shown head is drawn with
};

}  // namespace attnscope::views
