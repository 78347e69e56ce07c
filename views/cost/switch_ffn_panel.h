#pragma once
// The Cost tab's "Switch FFN vs dense" page (Fedus et al. 2021 §2): a Switch layer of E experts
// against the dense FFN of one expert's size, over the token counts the user types — time per
// pass for both (log-log), and the weights and activations each holds, with the capacity and the
// tokens dropped. The view only emits the intent; the app measures in the background.

#include <attnscope/switch_ffn_cost.h>

#include <QString>
#include <QVector>
#include <QWidget>

class QCPGraph;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace attnscope::views {

class MeasureControls;

class SwitchFfnPanel : public QWidget {
    Q_OBJECT
public:
    static QString defaultTokens() { return QStringLiteral("256, 1024, 4096, 16384"); }
    /// "256, 1024" → sorted, deduplicated counts 1 … kMaxTokens; empty with *error on bad input.
    static QVector<int> parseTokens(const QString& text, QString* error);

    explicit SwitchFfnPanel(QWidget* parent = nullptr);

    QLineEdit* tokensEdit() const;
    QSpinBox* expertsSpin() const { return m_experts; }
    QDoubleSpinBox* capacitySpin() const { return m_capacity; }
    QPushButton* measureButton() const;
    QPushButton* cancelButton() const;
    QCustomPlot* plot() const { return m_plot; }
    const QVector<engine::SwitchFfnCostPoint>& points() const { return m_points; }
    QString status() const;
    /// The table under the plot (weights, activations, capacity, drops per token count).
    QString tableHtml() const;

public Q_SLOTS:
    void requestMeasure();
    void setStarted(int total);
    void addPoint(const attnscope::engine::SwitchFfnCostPoint& point);
    void setProgress(int done, int total, const QString& text);
    void setFinished(const QString& message);

Q_SIGNALS:
    void measureRequested(const QVector<int>& tokens, int experts, double capacityFactor);
    void cancelRequested();

private:
    QWidget* buildControls();
    void redraw();

    MeasureControls* m_controls = nullptr;
    QSpinBox* m_experts = nullptr;
    QDoubleSpinBox* m_capacity = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPGraph* m_denseGraph = nullptr;
    QCPGraph* m_switchGraph = nullptr;
    QLabel* m_table = nullptr;
    QVector<engine::SwitchFfnCostPoint> m_points;
};

}  // namespace attnscope::views
