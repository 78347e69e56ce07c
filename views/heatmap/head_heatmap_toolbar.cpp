// HeadHeatmap's toolbar: colour map, scale and pooling, and a long head's pooling progress with
// Cancel / "Pool head N" (head_heatmap.cpp holds the plot, head_heatmap_lod.cpp the level of detail).

#include "views/heatmap/head_heatmap.h"
#include "views/widgets/elided_label.h"
#include "views/data/colormap.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"
#include "views/widgets/matrix_plot.h"
#include "views/data/title_wrap.h"
#include "views/data/token_label.h"
#include <QComboBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLoggingCategory>
#include <QProgressBar>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

void HeadHeatmap::setToolbarVisible(bool visible) { m_toolbar->setVisible(visible); }

void HeadHeatmap::buildToolbar() {
    m_toolbar = new QWidget(this);
    // Controls are not part of exported figures (app/gui/export).
    m_toolbar->setProperty("attnscopeExportSkip", true);
    auto* row = new QHBoxLayout(m_toolbar);
    row->setContentsMargins(4, 0, 4, 0);
    auto addCombo = [&](const QString& label, const QString& tip) {
        auto* text = new QLabel(label, m_toolbar);
        auto* combo = new QComboBox(m_toolbar);
        combo->setToolTip(tip);
        text->setBuddy(combo);
        row->addWidget(text);
        row->addWidget(combo);
        return combo;
    };
    m_colormapCombo = addCombo(tr("&Colours"), tr("Colour map; heads with negative weights always use the diverging RdBu map, centred at 0"));
    m_colormapCombo->addItem(tr("viridis"), QStringLiteral("viridis"));
    m_colormapCombo->addItem(tr("magma"), QStringLiteral("magma"));
    m_colormapCombo->addItem(tr("cividis"), QStringLiteral("cividis"));
    m_colormapCombo->addItem(tr("RdBu (diverging)"), QStringLiteral("rdbu"));
    m_scaleCombo = addCombo(tr("&Scale"), tr("Linear or logarithmic colour scale; the log scale draws zeros at a small floor"));
    m_scaleCombo->addItem(tr("linear"), static_cast<int>(ColorScale::Linear));
    m_scaleCombo->addItem(tr("log"), static_cast<int>(ColorScale::Log));
    m_poolingCombo = addCombo(tr("&Pooling"), tr("How a cell summarises its block when a head has more than %1 tokens per side")
                                                  .arg(HeadMatrix::kMaxDisplaySide));
    m_poolingCombo->addItem(tr("block max"), static_cast<int>(PoolMode::Max));
    m_poolingCombo->addItem(tr("block mean"), static_cast<int>(PoolMode::Mean));
    row->addStretch(1);
    // Progress of a long head's pooling, with Cancel (and, once stopped, "Pool head N").
    m_poolBar = new QProgressBar(m_toolbar);
    m_poolBar->setRange(0, 100);
    m_poolBar->setMaximumWidth(120);
    m_poolBar->setToolTip(tr("Pooling the head for display: exact weights recomputed block by block"));
    m_poolBar->setVisible(false);
    row->addWidget(m_poolBar);
    m_poolButton = new QToolButton(m_toolbar);
    m_poolButton->setVisible(false);
    connect(m_poolButton, &QToolButton::clicked, this, [this] {
        if (isPooling()) stopPooling();
        else poolAgain();
    });
    row->addWidget(m_poolButton);
    m_poolTimer = new QTimer(this);
    m_poolTimer->setInterval(150);
    connect(m_poolTimer, &QTimer::timeout, this, [this] {
        m_poolBar->setValue(poolingPercent());
        updateTitle();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    // Elided where the room is short, so the toolbar never sets the window's minimum width.
    auto* hint = new ElidedLabel(m_toolbar);
    hint->setText(tr("wheel or +/− zoom · drag pans · double-click resets · arrow keys move a cell cursor"));
    hint->setToolTip(hint->text());
    hint->setForegroundRole(QPalette::PlaceholderText);
    row->addWidget(hint, 1);
    syncToolbar();
    for (QComboBox* combo : {m_colormapCombo, m_scaleCombo, m_poolingCombo})
        connect(combo, &QComboBox::activated, this, &HeadHeatmap::onToolbarChanged);
}

void HeadHeatmap::syncToolbar() {
    const QSignalBlocker b1(m_colormapCombo), b2(m_scaleCombo), b3(m_poolingCombo);
    m_colormapCombo->setCurrentIndex(std::max(0, m_colormapCombo->findData(m_options.colormap)));
    m_scaleCombo->setCurrentIndex(std::max(0, m_scaleCombo->findData(static_cast<int>(m_options.scale))));
    m_poolingCombo->setCurrentIndex(std::max(0, m_poolingCombo->findData(static_cast<int>(m_options.pooling))));
}

void HeadHeatmap::onToolbarChanged() {
    HeatmapOptions options;
    options.colormap = m_colormapCombo->currentData().toString();
    options.scale = static_cast<ColorScale>(m_scaleCombo->currentData().toInt());
    options.pooling = static_cast<PoolMode>(m_poolingCombo->currentData().toInt());
    if (options == m_options) return;
    setOptions(options);
    Q_EMIT optionsChanged(m_options);
}

}  // namespace attnscope::views
