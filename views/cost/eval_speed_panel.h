#pragma once
// The Cost tab's evaluation-speed page (Transformer-XL, Dai et al. 2019, Table 9): per predicted
// token, the time of a model reading with cached memory against the same model recomputing a
// window of the same attention length for every token, over the attention lengths the user types;
// time per token on a log scale and the ratio on the right axis, with what the paper measured.
// The view only emits the intent; the app measures in the background and feeds the points back.

#include <QString>
#include <QVector>
#include <QWidget>

class QCustomPlot;
class QCPGraph;
class QLineEdit;
class QPushButton;

namespace attnscope::views {

class MeasureControls;

struct EvalSpeedSample {
    int length = 0;
    double memoryMs = 0;     ///< per token, with cached memory
    double recomputeMs = 0;  ///< per token, the window recomputed
};

class EvalSpeedPanel : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMaxLength = 4096;
    static QString defaultLengths() { return QStringLiteral("64, 128, 256, 512"); }
    /// "64, 128 256" → sorted, deduplicated lengths 1 … kMaxLength; empty with *error on bad input.
    static QVector<int> parseLengths(const QString& text, QString* error);

    explicit EvalSpeedPanel(QWidget* parent = nullptr);

    QLineEdit* lengthsEdit() const;
    QPushButton* measureButton() const;
    QPushButton* cancelButton() const;
    QCustomPlot* plot() const { return m_plot; }
    const QVector<EvalSpeedSample>& samples() const { return m_samples; }
    QString status() const;
    bool isRunning() const;

public Q_SLOTS:
    /// Parses the lengths and emits measureRequested (the Measure button does this).
    void requestMeasure();
    void setStarted(int total);
    void addSample(const attnscope::views::EvalSpeedSample& sample);
    void setProgress(int done, int total, const QString& text);
    void setFinished(const QString& message);

Q_SIGNALS:
    void measureRequested(const QVector<int>& lengths);
    void cancelRequested();

private:
    void redraw();

    MeasureControls* m_controls = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPGraph* m_memoryGraph = nullptr;
    QCPGraph* m_recomputeGraph = nullptr;
    QCPGraph* m_ratioGraph = nullptr;
    QVector<EvalSpeedSample> m_samples;
};

}  // namespace attnscope::views
