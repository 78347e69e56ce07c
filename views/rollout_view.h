#pragma once
// Attention rollout across layers (Abnar & Zuidema 2020), as the head atlas computes it: an n x n
// heatmap, row i = how much output token i draws on input token j (rows sum to 1), with token
// labels and a colour bar (viridis, FORMATS.md §5).

#include <attnscope/tensor.h>
#include <attnscope/types.h>

#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPTextElement;

namespace attnscope::views {

class RolloutView : public QWidget {
    Q_OBJECT
public:
    /// Token text on the axes only up to this many tokens; indices beyond.
    static constexpr int kMaxTokenTicks = 48;

    explicit RolloutView(QWidget* parent = nullptr);

    /// `rollout`: F32 [n, n]; `tokens`: n tokens for the labels (fewer: indices). An empty or
    /// malformed tensor clears the view and says so.
    void setRollout(const engine::PlainTensor& rollout, const std::vector<engine::Token>& tokens);
    void clear(const QString& message = {});

    int size() const { return m_n; }
    /// The plotted value of (output token i, input token j); NaN when out of range.
    double value(int i, int j) const;
    QCustomPlot* plot() const { return m_plot; }

private:
    void onMouseMove(QMouseEvent* event);

    QCustomPlot* m_plot = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    QCPTextElement* m_title = nullptr;
    std::vector<QString> m_labels;
    int m_n = 0;
};

}  // namespace attnscope::views
