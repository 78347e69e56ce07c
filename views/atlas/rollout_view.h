#pragma once
// Attention across layers (Abnar & Zuidema 2020), as the head atlas computes it: rollout (row i =
// how much output token i draws on input token j, rows sum to 1) or attention flow (max-flow from
// input token j to output token i), as an n x n heatmap with token labels and a colour bar
// (viridis, FORMATS.md §5).

#include <attnscope/tensor.h>
#include <attnscope/types.h>

#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPTextElement;
class QComboBox;

namespace attnscope::views {

class RolloutView : public QWidget {
    Q_OBJECT
public:
    /// Token text on the axes only up to this many tokens; indices beyond.
    static constexpr int kMaxTokenTicks = 48;

    enum class Kind { Rollout = 0, Flow = 1 };

    explicit RolloutView(QWidget* parent = nullptr);

    /// `rollout`, `flow`: F32 [n, n] (flow may be empty: not computed for long inputs); `tokens`:
    /// n tokens for the labels (fewer: indices). An empty or malformed tensor is not drawn and
    /// the title says so.
    void setMatrices(const engine::PlainTensor& rollout, const engine::PlainTensor& flow,
                     const std::vector<engine::Token>& tokens);
    void setRollout(const engine::PlainTensor& rollout, const std::vector<engine::Token>& tokens) {
        setMatrices(rollout, {}, tokens);
    }
    void clear(const QString& message = {});
    /// Which matrix is shown; the combo above the plot is the user's switch.
    Kind kind() const;
    void setKind(Kind kind);
    QComboBox* kindCombo() const { return m_kindCombo; }

    int size() const { return m_n; }
    /// The plotted value of (output token i, input token j); NaN when out of range.
    double value(int i, int j) const;
    QCustomPlot* plot() const { return m_plot; }

private:
    void onMouseMove(QMouseEvent* event);
    void showMatrix();

    QCustomPlot* m_plot = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    QCPTextElement* m_title = nullptr;
    QComboBox* m_kindCombo = nullptr;
    engine::PlainTensor m_rolloutData;
    engine::PlainTensor m_flowData;
    std::vector<engine::Token> m_tokens;
    std::vector<QString> m_labels;
    int m_n = 0;
};

}  // namespace attnscope::views
