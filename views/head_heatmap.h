#pragma once
// One head's n x m attention weights as a colour map with a colour bar and token tooltips.

#include "views/head_matrix.h"

#include <attnscope/types.h>

#include <QHash>
#include <QPointer>
#include <QString>
#include <QWidget>

#include <memory>

class QCustomPlot;
class QCPColorMap;
class QCPColorMapData;
class QCPColorScale;
class QCPItemRect;
class QCPLayoutGrid;
class QCPTextElement;
class QMouseEvent;

namespace attnscope::views {

class InspectionState;

class HeadHeatmap : public QWidget {
    Q_OBJECT
public:
    /// Axes show token text up to this many queries/keys, indices above it.
    static constexpr int kMaxTokenTicks = 64;

    explicit HeadHeatmap(QWidget* parent = nullptr);
    ~HeadHeatmap() override;

    /// The heatmap shows state->resultIndex() and state->head() and follows their changes.
    void setInspectionState(InspectionState* state);
    void setResult(std::shared_ptr<const engine::RunResult> result);
    /// Display names by variant id, for the title; unknown ids are shown as they are.
    void setVariantNames(const QHash<QString, QString>& idToName);
    /// Text put before the title (the compare view's "A: ", "B: ").
    void setTitlePrefix(const QString& prefix);
    /// A fixed colour range [lo, hi] (the compare view's shared scale); hi <= lo restores the
    /// automatic range of the shown matrix.
    void setValueRange(double lo, double hi);
    /// Outlines the cell (query, key) in input indices, e.g. the cell hovered in a linked view;
    /// (-1, -1) removes the outline.
    void setMarkedCell(int query, int key);
    int markedQuery() const { return m_markedQuery; }
    int markedKey() const { return m_markedKey; }
    /// Largest value of the shown matrix (0 when nothing is shown).
    float matrixMax() const { return m_matrix.maxValue(); }

    const std::shared_ptr<const engine::RunResult>& result() const { return m_result; }
    QCustomPlot* plot() const { return m_plot; }

    // Data accessors, so tests assert on plotted data rather than pixels. Cells are display cells:
    // one per (query, key) unless the matrix was max-pooled (poolFactor() > 1).
    const QCPColorMapData* colorData() const;
    QSize dataSize() const;  ///< width = key cells, height = query cells; empty when nothing is shown
    double cellValue(int query, int key) const;  ///< NaN outside dataSize()
    int poolFactor() const { return m_matrix.poolFactor(); }
    int shownHead() const { return m_shownHead; }  ///< -1 when nothing is shown
    bool tokenAxes() const { return m_tokenAxes; }
    QString title() const;
    /// Plain-text tooltip of a (query, key) cell in input indices:
    /// "query 3 'it' → key 1 'cat': weight 0.1234".
    QString hoverText(int query, int key) const;

Q_SIGNALS:
    /// Intent: the pointer is over (query, key) in input indices; (-1, -1) when it left.
    void cellHovered(int query, int key);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void rebuild();
    void updateAxes(std::int64_t n, std::int64_t m);
    void fitRanges();
    void fitAxisRect();
    void onPlotMouseMove(QMouseEvent* event);
    void clearHover();
    const engine::AttentionResult* shownResult() const;
    QString tokenText(std::int64_t index) const;

    QCustomPlot* m_plot = nullptr;
    QCPColorMap* m_colorMap = nullptr;
    QCPColorScale* m_colorScale = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPItemRect* m_marker = nullptr;
    QString m_titlePrefix;
    double m_rangeLo = 0;
    double m_rangeHi = 0;  // <= m_rangeLo: automatic
    int m_markedQuery = -1;
    int m_markedKey = -1;
    QCPLayoutGrid* m_body = nullptr;
    QPointer<InspectionState> m_state;
    std::shared_ptr<const engine::RunResult> m_result;
    QHash<QString, QString> m_variantNames;
    HeadMatrix m_matrix;
    int m_shownHead = -1;
    bool m_tokenAxes = false;
    int m_hoverQuery = -1;
    int m_hoverKey = -1;
};

}  // namespace attnscope::views
