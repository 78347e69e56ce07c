#pragma once
// A latent-attention layer (DeepSeek's MLA) made visible: left, the singular values of every head's
// non-rotary keys with the latent's width marked (one low-rank latent makes them all: Linformer's
// low rank, built into the model); right, per head, the share of its scores' size the rotary part
// carries beside the non-rotary one.

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

class LatentView : public ResultPage {
    Q_OBJECT
public:
    explicit LatentView(QWidget* parent = nullptr);
    ~LatentView() override;


    // Data accessors for tests (the plotted values).
    const QVector<double>& singularValues() const { return m_values; }
    /// Per head, |q_rope·k_rope| / (|q_nope·k_nope| + |q_rope·k_rope|) in percent.
    const QVector<double>& rotaryPercent() const { return m_rotary; }
    /// Singular values above 1e-6 of the largest: the keys' numerical rank.
    int numericalRank() const { return m_rank; }
    QString text() const;

private:
    void rebuild() override;
    void drawSpectrum(const engine::LatentAttentionProfile& p);
    void drawSplit(const engine::LatentAttentionProfile& p);

    QLabel* m_info = nullptr;
    QCustomPlot* m_spectrum = nullptr;
    QCustomPlot* m_split = nullptr;
    QVector<double> m_values, m_rotary;
    int m_rank = 0;
};

}  // namespace attnscope::views
