#pragma once
// What a sparse variant keeps, for the selected head: per query row, the keys with weight above
// zero and the share of exact softmax's mass (over every key of the same Q, K) on them — what the
// pattern, the top-k cut or entmax's threshold drops. Longformer, BigBird, the Sparse
// Transformers, top-k (its threshold) and entmax (α, τ and its exact zeros).

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

class SparsityView : public ResultPage {
    Q_OBJECT
public:
    explicit SparsityView(QWidget* parent = nullptr);
    ~SparsityView() override;

    /// Follows state->head(); shows state->resultIndex() when it has this page, else the first
    /// result of the run that has.

    // Data accessors for tests (the plotted values).
    int shownHead() const { return m_shownHead; }
    /// Keys with weight > 0, per query row of the shown head.
    const QVector<double>& keptKeys() const { return m_kept; }
    /// Σ of exact softmax's weights on those keys, per row; empty without an exact reference.
    const QVector<double>& keptMass() const { return m_mass; }
    QString text() const;

private:
    void rebuild() override;
    void showMessage(const QString& text);
    QString explanation(const engine::AttentionResult& r, int head) const;

    QLabel* m_info = nullptr;
    QCustomPlot* m_plot = nullptr;
    QVector<double> m_kept, m_mass;
    int m_shownHead = -1;
};

}  // namespace attnscope::views
