#pragma once
// The mask view: one head's sparse pattern with every allowed entry coloured by its reason, an
// optional weight shading inside the pattern, a legend of the reasons present, and a row panel
// (allowed keys, exact zeros, entropy) for the hovered query.

#include "views/widgets/cell_pointer.h"
#include "views/widgets/result_view.h"
#include "views/widgets/figure_layout.h"
#include "views/data/latest_job.h"
#include "views/data/mask_matrix.h"
#include "views/data/token_highlight.h"

#include <attnscope/types.h>

#include <QFuture>
#include <QHash>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <cstdint>
#include <limits>
#include <memory>

class QCheckBox;
class QCustomPlot;
class QCPColorMap;
class QCPItemLine;
class QCPItemRect;
class QCPTextElement;
class QLabel;
class QScrollArea;

namespace attnscope::views {

class InspectionState;
class MatrixPlot;

class MaskView : public QWidget, public FigureLayout, public ResultView {
    Q_OBJECT
public:
    /// Axes show token text up to this many queries/keys, indices above it.
    static constexpr int kMaxTokenTicks = 64;
    /// The row panel lists at most this many keys: the first and last half of them.
    static constexpr int kMaxListedKeys = 24;
    /// Opacity of the weakest allowed non-zero cell when weights are shown, so the pattern stays
    /// readable where weights are tiny (wide windows).
    static constexpr double kMinWeightOpacity = 0.3;

    explicit MaskView(QWidget* parent = nullptr);
    ~MaskView() override;

    /// A figure leaves out the row panel while no query is chosen (it holds only hover help).
    QSize beginFigureLayout(QSize windowSize, bool slide) override;
    void endFigureLayout() override;

    /// Shows state->resultIndex() and state->head() and follows their changes.
    void setInspectionState(InspectionState* state) override;
    /// Null keeps the row panel's query for the next run, which shows it again when it has the
    /// query (a re-run, or the tab shown again after it let go of the run).
    void setResult(Run result) override;
    bool park() override {
        setResult(nullptr);
        return true;
    }
    void finishBackgroundWork() override { finishBuilding(); }
    /// The query the row panel shows once the next run arrives (a session's); -1: none.
    void setQueryForNextRun(int query);
    /// The row panel's query, or the one kept for the next run.
    int keptQuery() const { return m_queryForNextRun >= 0 ? m_queryForNextRun : m_panelQuery; }
    /// Display names by variant id, for the title; unknown ids are shown as they are.
    void setVariantNames(const QHash<QString, QString>& idToName);
    /// The main window's threshold for setBackgroundBuild(): heads over 8 M cells (classifying and
    /// drawing a 4096² head on the GUI thread stalls it visibly).
    static constexpr std::int64_t kBackgroundBuildCells = 2LL * 2048 * 2048;
    /// Heads with more than `minCells` (query, key) cells are classified on a worker thread; the
    /// previous picture of the same result stays (a new result's plot is empty) until the head is
    /// shown, a query asked for meanwhile is shown with it, and a build for a head or result no
    /// longer shown is dropped. Default: never (setters draw at once, as exports and tests expect).
    void setBackgroundBuild(std::int64_t minCells = kBackgroundBuildCells);
    /// True while a head is classified on a worker thread.
    bool isBuilding() const { return m_building; }
    /// Blocks until the head being classified is shown (exports, screenshots).
    void finishBuilding();

    /// The keyboard's cell cursor (arrow keys while the plot has focus): fills the row panel,
    /// scrolls the cell into view, shows its text and emits cellHovered, as the pointer would.
    void moveCursorTo(int query, int key);
    /// Bands over these tokens' rows and columns (Find Token, Ctrl+F); empty clears them.
    void setHighlightedTokens(const QVector<int>& tokens);
    int highlightBands() const { return m_highlight.count(); }
    int hoveredQuery() const { return m_pointer->hoveredQuery(); }
    int hoveredKey() const { return m_pointer->hoveredKey(); }

    bool showWeights() const;
    QCheckBox* weightsToggle() const { return m_weightsToggle; }
    QCustomPlot* plot() const;

    // Data accessors for tests: what is displayed, not pixels. (query, key) are input indices.
    int shownHead() const { return m_shownHead; }  ///< -1 when nothing is shown
    QSize dataSize() const;                         ///< display cells (width = keys); empty when nothing is shown
    int poolFactor() const { return m_matrix.poolFactor(); }
    /// The reason code drawn at (query, key), or -1 when the cell is blank (outside the pattern)
    /// or out of range; ReasonPalette::kExactZero for an allowed cell drawn as an exact zero.
    int displayedReason(int query, int key) const;
    /// Opacity 0..255 drawn at (query, key); 0 for blank cells.
    int displayedAlpha(int query, int key) const;
    /// Names of the reasons listed in the legend, in enum order.
    QStringList legendReasons() const { return m_legendReasons; }
    QString legendText() const;
    /// Whether the checkpoint layer's own sliding window is drawn (tests).
    bool modelWindowShown() const;
    /// The row panel's data for a query of the shown head (query -1 in it when out of range).
    MaskRowSummary rowSummary(int query) const;
    int panelQuery() const { return m_panelQuery; }  ///< the query the row panel shows; -1 = none
    QString rowPanelText() const;                    ///< the row panel as plain text
    /// The title as written (drawn wrapped to the plot's width).
    QString title() const;
    /// Plain-text tooltip: "query 3 'it' → key 1 'cat': local, weight 0.1234".
    QString hoverText(int query, int key) const;

public Q_SLOTS:
    void setShowWeights(bool on);
    /// Fills the row panel for this query of the shown head and outlines its row; -1 clears it.
    void showQuery(int query);

Q_SIGNALS:
    /// Intent: the pointer is over (query, key) in input indices; (-1, -1) when it left.
    void cellHovered(int query, int key);
    /// A head classified on a worker thread is shown now.
    void headBuilt(int head);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void rebuild();
    void startBuild(int head);
    /// Shows `matrix` as head `head` of the current result (what rebuild() does once it has it).
    void showHead(int head, MaskMatrix matrix);
    void redrawCells();
    /// The dashed far edge of the checkpoint layer's sliding window, when it has one.
    void showModelWindow(std::int64_t n);
    void updateLegend();
    void updateAxes(std::int64_t n, std::int64_t m);
    /// Token labels on both axes, every step-th where the cells are too small for each (the
    /// cells' size is known after layout: fitAxisRect calls it again when it changed).
    void setTokenTicks(std::int64_t n, std::int64_t m);
    void fitAxisRect();
    const engine::AttentionResult* shownResult() const;
    QString tokenText(std::int64_t index, int maxChars = 24) const;
    QString describe(const QString& role, std::int64_t index) const;

    MatrixPlot* m_plot = nullptr;
    QCPColorMap* m_colorMap = nullptr;
    QCPItemRect* m_rowMarker = nullptr;
    QCPItemLine* m_windowEdge = nullptr;  ///< the checkpoint layer's own sliding window, its far edge
    QCPTextElement* m_title = nullptr;
    QCheckBox* m_weightsToggle = nullptr;
    QLabel* m_legend = nullptr;
    QLabel* m_rowPanel = nullptr;
    QLabel* m_rowTitle = nullptr;
    QScrollArea* m_rowScroll = nullptr;
    QPointer<InspectionState> m_state;
    std::shared_ptr<const engine::RunResult> m_result;
    QHash<QString, QString> m_variantNames;
    MaskMatrix m_matrix;
    QStringList m_legendReasons;
    QString m_rowPanelPlain;
    int m_shownHead = -1;
    int m_panelQuery = -1;  // while building: the query to show with the new head
    int m_queryForNextRun = -1;  // the row panel's query kept while there is no run
    std::int64_t m_backgroundCells = std::numeric_limits<std::int64_t>::max();
    quint64 m_resultSerial = 0;  // bumped when the result changes
    quint64 m_shownSerial = 0;   // m_resultSerial of the drawn head
    LatestJob m_buildJob;
    bool m_building = false;
    bool m_tokenAxes = false;     // token labels (not indices) on the axes
    QSize m_labelledRectSize;     // the axis rect the labels were thinned for
    int m_buildingHead = -1;  // what is being classified: head, result index, m_resultSerial
    int m_buildingIndex = -1;
    quint64 m_buildingSerial = 0;
    QFuture<std::shared_ptr<MaskMatrix>> m_buildFuture;
    CellPointer* m_pointer = nullptr;  // the hovered cell and the keyboard's cursor
    TokenHighlightBands m_highlight;
    QVector<int> m_highlighted;
    QString m_fullTitle;  // the title before wrapping
};

}  // namespace attnscope::views
