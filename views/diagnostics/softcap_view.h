#pragma once
// A model layer's soft-capped scores (Gemma 2's attn_logit_softcapping: s ↦ c·tanh(s/c)): per
// head, the share of the scores its queries see that lie within 10 % of the cap, where tanh has
// flattened their differences; and whether the layer is local (a sliding window) or global.

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

class SoftcapView : public ResultPage {
    Q_OBJECT
public:
    explicit SoftcapView(QWidget* parent = nullptr);
    ~SoftcapView() override;

    /// Whether `result` has a soft-capped result to show (its own attention with a cap).
    static bool shows(const engine::RunResult& result);

    // Data accessors for tests (the plotted values).
    /// Per head, the share of scores within 10 % of the cap, in percent.
    const QVector<double>& saturatedPercent() const { return m_percent; }
    QString text() const;

private:
    void rebuild() override;

    QLabel* m_info = nullptr;
    QCustomPlot* m_plot = nullptr;
    QVector<double> m_percent;
};

}  // namespace attnscope::views
