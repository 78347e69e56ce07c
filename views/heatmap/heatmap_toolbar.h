#pragma once
// The heatmap's toolbar: colour map, scale and pooling, and a long head's pooling progress with
// Cancel / "Pool head N". Not part of exported figures.

#include "views/data/heatmap_options.h"

#include <QWidget>

class QComboBox;
class QProgressBar;
class QToolButton;

namespace attnscope::views {

class HeatmapToolbar : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapToolbar(QWidget* parent = nullptr);

    /// Shows `options` without emitting optionsPicked.
    void setOptions(const HeatmapOptions& options);
    /// The pooling state: the progress while `pooling`, "Pool head N" after head N was stopped
    /// (`stoppedHead` ≥ 0), neither otherwise.
    void showPooling(bool pooling, int percent, int stoppedHead);
    /// The shown head is drawn by its block means whatever the Pooling box says (a linear or
    /// performer head too large for its maxima): the box then shows "block mean", disabled, and
    /// says why; false gives the box back its option.
    void showMeansOnly(bool meansOnly, PoolMode picked);

Q_SIGNALS:
    /// Intent: the user picked these options.
    void optionsPicked(const attnscope::views::HeatmapOptions& options);
    /// Intent: Cancel while pooling.
    void stopClicked();
    /// Intent: "Pool head N" after a stop.
    void poolAgainClicked();

private:
    /// What the Pooling box does, its tooltip while it may be picked.
    static QString poolingTip();
    QComboBox* addCombo(const QString& label, const QString& tip);
    void onPicked();

    QComboBox* m_colormapCombo = nullptr;
    QComboBox* m_scaleCombo = nullptr;
    QComboBox* m_poolingCombo = nullptr;
    QProgressBar* m_poolBar = nullptr;
    QToolButton* m_poolButton = nullptr;
    bool m_pooling = false;
};

}  // namespace attnscope::views
