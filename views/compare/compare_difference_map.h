#pragma once
// The compare view's difference map: one variant's weights minus a reference's (another pane or
// exact softmax) for one head, on the diverging RdBu map centred at 0 with a symmetric range and a
// colour bar (FORMATS.md §5). Large heads keep, per display block, the entry of largest |value|,
// so the sign and the peak of a difference survive pooling.

#include <attnscope/types.h>

#include <QSize>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

class QCustomPlot;

namespace attnscope::views {

class CompareDifferenceMap : public QWidget {
    Q_OBJECT
public:
    /// Largest side drawn cell by cell.
    static constexpr int kMaxDisplaySide = 512;

    explicit CompareDifferenceMap(QWidget* parent = nullptr);
    ~CompareDifferenceMap() override;

    /// The display cells of variant − reference for one head.
    struct Cells {
        std::vector<double> values;  // [rows, cols]
        int rows = 0;
        int cols = 0;
        int factor = 1;
        std::int64_t n = 0;
        std::int64_t m = 0;
        double limit = 0;
        QString error;  ///< why there is nothing to show; empty when the cells are valid
    };
    /// Checks the pair and computes the cells; O(n·m). Plain data: may run on a worker thread
    /// while the results are held alive.
    static Cells computeCells(const engine::AttentionResult* variant, const engine::AttentionResult* reference,
                              int head, const QString& label);
    /// Shows variant − reference for `head`; `label` names the difference ("C − A"). A null
    /// result or a shape mismatch clears the map and shows `message()` instead.
    void setDifference(const engine::AttentionResult* variant, const engine::AttentionResult* reference, int head,
                       const QString& label);
    /// Shows cells from computeCells() (what setDifference() does after computing them).
    void showCells(Cells cells, int head, const QString& label);
    void clear(const QString& message);
    /// Outlines (query, key) as the panes do; (-1, -1) removes the outline.
    void setMarkedCell(int query, int key);

    // Data accessors for tests (display cells; poolFactor() inputs per cell).
    bool hasData() const { return !m_shown.values.empty(); }
    QSize dataSize() const { return {m_shown.cols, m_shown.rows}; }  ///< width = key cells, height = query cells
    int poolFactor() const { return m_shown.factor; }
    double cellValue(int query, int key) const;  ///< NaN outside dataSize()
    /// The colour range is [-rangeLimit(), +rangeLimit()]: symmetric, so 0 is the map's centre.
    double rangeLimit() const { return m_shown.limit; }
    std::pair<double, double> colorRange() const;
    QString colormapName() const;
    QString title() const;
    QString message() const { return m_message; }
    QCustomPlot* plot() const { return m_plot; }

Q_SIGNALS:
    /// Intent: the pointer is over (query, key) in input indices; (-1, -1) when it left.
    void cellHovered(int query, int key);

private:
    QCustomPlot* m_plot = nullptr;
    Cells m_shown;  ///< the cells on display (error unused)
    QString m_message;
    int m_hoverQuery = -1;  // the marked cell (setMarkedCell)
    int m_hoverKey = -1;
};

}  // namespace attnscope::views
