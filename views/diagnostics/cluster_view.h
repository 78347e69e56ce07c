#pragma once
// Routing attention's k-means for the selected head: cluster sizes per iteration (queries and keys
// side by side), and a strip of tokens coloured by cluster; unrouted queries (balanced top-w left
// them out of every cluster) are shown as such. Reads the diagnostics `assignments`
// [H, iterations, 2, n], `nearest` [H, 2, n], `routed_count` [H, n] and `centroids` (shape only).

#include "views/diagnostics/result_page.h"
#include <attnscope/types.h>

#include <QPointer>
#include <QString>
#include <QVector>
#include <QWidget>

#include <memory>

class QComboBox;
class QCustomPlot;
class QLabel;
class QPushButton;

namespace attnscope::views {

class InspectionState;

class ClusterView : public ResultPage {
    Q_OBJECT
public:
    enum Side { Queries = 0, Keys = 1 };

    explicit ClusterView(QWidget* parent = nullptr);
    ~ClusterView() override;

    /// Follows state->head(); shows state->resultIndex() when it is a routing result, else the
    /// first routing result of the run.

    /// Steps 0 … iterations − 1 are the k-means iterations; step `iterations` is the final
    /// routing against the last centroids (the default).
    void setStep(int step);
    int step() const;
    int stepCount() const;
    QComboBox* stepCombo() const { return m_stepCombo; }

    // Data accessors for tests (plotted data, not pixels).
    bool hasClusters() const { return m_shownHead >= 0; }
    int shownHead() const { return m_shownHead; }
    int clusterCount() const { return m_clusters; }
    /// Bar heights: tokens of `side` assigned to each cluster at the shown step.
    QVector<double> clusterSizes(Side side) const;
    /// Cluster of token `token` on the strip (NaN = unrouted query at the final step).
    double stripCell(Side side, int token) const;
    /// Queries no cluster took (routed_count = 0); empty for argmax routing.
    const QVector<int>& unroutedQueries() const { return m_unrouted; }
    QString summary() const;
    QString message() const;
    /// The button under the unrouted queries' note: a window_size that routes more of them.
    QPushButton* suggestionButton() const { return m_suggest; }

Q_SIGNALS:
    /// Intent: run routing again with "name=value" (the note's suggestion).
    void settingSuggested(const QString& variantId, const QString& setting);

private:
    void rebuild() override;
    void updateStep();
    void showMessage(const QString& text);
    const engine::AttentionResult* chosenResult() const;

    QLabel* m_info = nullptr;
    QComboBox* m_stepCombo = nullptr;
    QCustomPlot* m_barsPlot = nullptr;
    QCustomPlot* m_stripPlot = nullptr;
    QLabel* m_summary = nullptr;
    QPushButton* m_suggest = nullptr;
    QString m_suggestion;  // "window_size=18"
    QVector<int> m_unrouted;
    int m_shownHead = -1;
    int m_clusters = 0;
    int m_iterations = 0;
    int m_n = 0;
};

}  // namespace attnscope::views
