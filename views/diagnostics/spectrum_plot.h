#pragma once
// Linformer's low-rank evidence for the selected head: the singular values of the exact softmax
// matrix on a log axis, their cumulative energy on a second axis (0-1), the rank at 90 % energy
// and the projection size k marked. Says in words when the run did not compute the spectrum.

#include "views/diagnostics/result_page.h"
#include <attnscope/types.h>

#include <QPointer>
#include <QString>
#include <QVector>
#include <QWidget>

#include <memory>

class QCustomPlot;
class QCPItemStraightLine;
class QCPItemText;
class QCPTextElement;
class QLabel;
class QStackedLayout;

namespace attnscope::views {

class InspectionState;

class SpectrumPlot : public ResultPage {
    Q_OBJECT
public:
    explicit SpectrumPlot(QWidget* parent = nullptr);
    ~SpectrumPlot() override;

    /// Follows state->head(). The plotted result is state->resultIndex() when it is a linformer
    /// result, else the first linformer result of the run.

    QCustomPlot* plot() const { return m_plot; }
    // Data accessors for tests: what the graphs hold, not pixels.
    bool hasSpectrum() const { return m_shownHead >= 0; }
    int shownHead() const { return m_shownHead; }
    /// The head's singular values σ_1 ≥ σ_2 ≥ … as stored (before the log axis' zero floor).
    const QVector<double>& singularValues() const { return m_singular; }
    /// The graphs' values at x = 1 … n: σ (zeros raised to the floor) and cumulative energy.
    QVector<double> plottedSingularValues() const;
    QVector<double> plottedEnergy() const;
    /// x of the "rank at 90 %" and "k" lines; 0 when not shown.
    double rank90Marker() const;
    double kMarker() const;
    QString rank90Label() const;
    /// The explanation shown instead of the plot (empty while the plot is shown).
    QString message() const;

private:
    void rebuild() override;
    void showMessage(const QString& text);
    const engine::AttentionResult* chosenResult() const;

    QStackedLayout* m_stack = nullptr;
    QLabel* m_message = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPItemStraightLine* m_rankLine = nullptr;
    QCPItemText* m_rankText = nullptr;
    QCPItemStraightLine* m_kLine = nullptr;
    QCPItemText* m_kText = nullptr;
    QCPItemStraightLine* m_energyLine = nullptr;
    QVector<double> m_singular;
    int m_shownHead = -1;
};

}  // namespace attnscope::views
