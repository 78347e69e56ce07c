#pragma once
// A model layer whose heads have learned sinks (GPT-OSS): each row's softmax gives part of its mass
// to the head's sink, no token at all. Left, per head, the mean share its queries give the sink;
// right, the selected head's share query by query. The head atlas shows the mean for every layer.

#include "views/diagnostics/result_page.h"
#include <attnscope/types.h>

#include <QPointer>
#include <QString>
#include <QVector>
#include <QWidget>

#include <memory>

class QCustomPlot;
class QLabel;

namespace attnscope::views {

class InspectionState;

class SinkView : public ResultPage {
    Q_OBJECT
public:
    explicit SinkView(QWidget* parent = nullptr);
    ~SinkView() override;

    /// Whether `result` has a result with sinks (its own attention's `sink_share`).
    static bool shows(const engine::RunResult& result);

    // Data accessors for tests (the plotted values, in percent).
    const QVector<double>& headPercent() const { return m_heads; }
    const QVector<double>& rowPercent() const { return m_rows; }
    QString text() const;

private:
    void rebuild() override;

    QLabel* m_info = nullptr;
    QCustomPlot* m_perHead = nullptr;
    QCustomPlot* m_perRow = nullptr;
    QVector<double> m_heads, m_rows;
};

}  // namespace attnscope::views
