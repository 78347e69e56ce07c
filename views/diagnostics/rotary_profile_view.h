#pragma once
// A rotary-position model's layer (Llama family): the selected head's mean score q·k/√d by
// relative distance i − j, with the model's rotation and with it removed. RoPE's long-term decay
// (Su et al. 2021, §3.4.3) is the gap between the two curves. Says in words when the run has no
// profile (not a rotary model, or a text over the profile's length limit).

#include "views/diagnostics/result_page.h"
#include <attnscope/types.h>

#include <QPointer>
#include <QString>
#include <QVector>
#include <QWidget>

#include <memory>

class QCustomPlot;
class QCPTextElement;
class QLabel;
class QStackedLayout;

namespace attnscope::views {

class InspectionState;

class RotaryProfileView : public ResultPage {
    Q_OBJECT
public:
    explicit RotaryProfileView(QWidget* parent = nullptr);
    ~RotaryProfileView() override;

    /// Follows state->head().

    QCustomPlot* plot() const { return m_plot; }
    // For tests: what the graphs hold, not pixels.
    int shownHead() const { return m_shownHead; }
    /// The plotted curves at distances 0 … n − 1: with the rotation, and with it removed.
    QVector<double> plottedRotated() const;
    QVector<double> plottedUnrotated() const;
    QString title() const;
    /// The explanation shown instead of the plot (empty while the plot is shown).
    QString message() const;

private:
    void rebuild() override;
    void showMessage(const QString& text);

    QStackedLayout* m_stack = nullptr;
    QLabel* m_message = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QLabel* m_caption = nullptr;
    int m_shownHead = -1;
};

}  // namespace attnscope::views
