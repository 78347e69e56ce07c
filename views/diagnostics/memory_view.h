#pragma once
// Transformer-XL's segment memory for the selected head: one segment's queries against the keys
// they see, [memory | segment], with the memory shaded and the segment boundary drawn; its
// attention weights beside the four score terms of the paper (a) q·k, (b) q·r, (c) u·k, (d) v·r.
// Step through the segments with the spin box or ] and [.

#include "views/diagnostics/result_page.h"
#include <attnscope/types.h>

#include <QPointer>
#include <QString>
#include <QWidget>

#include <array>
#include <memory>

class QCustomPlot;
class QLabel;
class QSpinBox;

namespace attnscope::views {

class InspectionState;

class MemoryView : public ResultPage {
    Q_OBJECT
public:
    /// The panels: the weights, then the terms a, b, c, d.
    static constexpr int kPanels = 5;
    explicit MemoryView(QWidget* parent = nullptr);
    ~MemoryView() override;

    /// Follows state->head(); shows state->resultIndex() when it is a transformer_xl result,
    /// else the run's first one.
    void setResult(Run result) override;
    void showSegment(int segment);

    // Data accessors for tests (the plotted cells, not pixels).
    int segmentCount() const { return m_segments; }
    int shownSegment() const { return m_segment; }
    int shownHead() const { return m_head; }
    /// The first query and first key drawn, and how many keys of the drawn ones are memory.
    long long firstQuery() const { return m_firstQuery; }
    long long firstKey() const { return m_firstKey; }
    long long memoryKeys() const { return m_memoryKeys; }
    /// Cell (query, key) of a panel, in positions of the input; NaN where nothing is drawn.
    double cell(int panel, long long query, long long key) const;
    QString message() const;
    QCustomPlot* panel(int index) const { return m_plots[static_cast<std::size_t>(index)]; }

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    void rebuild() override;
    void showMessage(const QString& text);
    void drawMemoryRegion(QCustomPlot* plot, long long queries, long long keys);

    QLabel* m_info = nullptr;
    QSpinBox* m_segmentBox = nullptr;
    std::array<QCustomPlot*, kPanels> m_plots{};
    int m_segments = 0, m_segment = 0, m_head = -1;
    long long m_firstQuery = 0, m_firstKey = 0, m_memoryKeys = 0;
};

}  // namespace attnscope::views
