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
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace attnscope::views {

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

    QLineEdit* lengthsEdit() const { return m_lengths; }
    QPushButton* measureButton() const { return m_measure; }
    QPushButton* cancelButton() const { return m_cancel; }
    QCustomPlot* plot() const { return m_plot; }
    const QVector<EvalSpeedSample>& samples() const { return m_samples; }
    QString status() const;
    bool isRunning() const { return m_running; }

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
    void updateControls();

    QLineEdit* m_lengths = nullptr;
    QLabel* m_lengthsError = nullptr;
    QPushButton* m_measure = nullptr;
    QPushButton* m_cancel = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPGraph* m_memoryGraph = nullptr;
    QCPGraph* m_recomputeGraph = nullptr;
    QCPGraph* m_ratioGraph = nullptr;
    QVector<EvalSpeedSample> m_samples;
    bool m_running = false;
};

}  // namespace attnscope::views
