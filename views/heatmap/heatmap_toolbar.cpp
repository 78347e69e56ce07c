#include "views/heatmap/heatmap_toolbar.h"

#include "views/data/head_matrix.h"
#include "views/widgets/elided_label.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

#include <algorithm>

namespace attnscope::views {

HeatmapToolbar::HeatmapToolbar(QWidget* parent) : QWidget(parent) {
    // Controls are not part of exported figures (app/gui/export).
    setProperty("attnscopeExportSkip", true);
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(4, 0, 4, 0);
    m_colormapCombo = addCombo(tr("&Colours"), tr("Colour map; heads with negative weights always use the diverging RdBu map, centred at 0"));
    m_colormapCombo->addItem(tr("viridis"), QStringLiteral("viridis"));
    m_colormapCombo->addItem(tr("magma"), QStringLiteral("magma"));
    m_colormapCombo->addItem(tr("cividis"), QStringLiteral("cividis"));
    m_colormapCombo->addItem(tr("RdBu (diverging)"), QStringLiteral("rdbu"));
    m_scaleCombo = addCombo(tr("&Scale"), tr("Linear or logarithmic colour scale; the log scale draws zeros at a small floor"));
    m_scaleCombo->addItem(tr("linear"), static_cast<int>(ColorScale::Linear));
    m_scaleCombo->addItem(tr("log"), static_cast<int>(ColorScale::Log));
    m_poolingCombo = addCombo(tr("&Pooling"), poolingTip());
    m_poolingCombo->addItem(tr("block max"), static_cast<int>(PoolMode::Max));
    m_poolingCombo->addItem(tr("block mean"), static_cast<int>(PoolMode::Mean));
    row->addStretch(1);
    // Progress of a long head's pooling, with Cancel (and, once stopped, "Pool head N").
    m_poolBar = new QProgressBar(this);
    m_poolBar->setRange(0, 100);
    m_poolBar->setMaximumWidth(120);
    m_poolBar->setToolTip(tr("Pooling the head for display: exact weights recomputed block by block"));
    m_poolBar->setVisible(false);
    row->addWidget(m_poolBar);
    m_poolButton = new QToolButton(this);
    m_poolButton->setVisible(false);
    connect(m_poolButton, &QToolButton::clicked, this, [this] {
        if (m_pooling) Q_EMIT stopClicked();
        else Q_EMIT poolAgainClicked();
    });
    row->addWidget(m_poolButton);
    // Elided where the room is short, so the toolbar never sets the window's minimum width.
    auto* hint = new ElidedLabel(this);
    hint->setText(tr("wheel or +/− zoom · drag pans · double-click resets · arrow keys move a cell cursor"));
    hint->setToolTip(hint->text());
    hint->setForegroundRole(QPalette::PlaceholderText);
    row->addWidget(hint, 1);
    setOptions(HeatmapOptions{});
    for (QComboBox* combo : {m_colormapCombo, m_scaleCombo, m_poolingCombo})
        connect(combo, &QComboBox::activated, this, &HeatmapToolbar::onPicked);
}

QComboBox* HeatmapToolbar::addCombo(const QString& label, const QString& tip) {
    auto* text = new QLabel(label, this);
    auto* combo = new QComboBox(this);
    combo->setToolTip(tip);
    text->setBuddy(combo);
    layout()->addWidget(text);
    layout()->addWidget(combo);
    return combo;
}

void HeatmapToolbar::setOptions(const HeatmapOptions& options) {
    const QSignalBlocker b1(m_colormapCombo), b2(m_scaleCombo), b3(m_poolingCombo);
    m_colormapCombo->setCurrentIndex(std::max(0, m_colormapCombo->findData(options.colormap)));
    m_scaleCombo->setCurrentIndex(std::max(0, m_scaleCombo->findData(static_cast<int>(options.scale))));
    m_poolingCombo->setCurrentIndex(std::max(0, m_poolingCombo->findData(static_cast<int>(options.pooling))));
}

void HeatmapToolbar::showPooling(bool pooling, int percent, int stoppedHead) {
    m_pooling = pooling;
    m_poolBar->setVisible(pooling);
    m_poolBar->setValue(percent);
    m_poolButton->setVisible(pooling || stoppedHead >= 0);
    m_poolButton->setText(pooling ? tr("Cancel") : tr("Pool head %1").arg(stoppedHead));
    m_poolButton->setToolTip(pooling ? tr("Stop pooling this head for display (Esc)") : tr("Pool head %1 for display again").arg(stoppedHead));
}

QString HeatmapToolbar::poolingTip() {
    return tr("How a cell summarises its block when a head has more than %1 tokens per side").arg(HeadMatrix::kMaxDisplaySide);
}

void HeatmapToolbar::showMeansOnly(bool meansOnly, PoolMode picked) {
    const QSignalBlocker block(m_poolingCombo);
    m_poolingCombo->setEnabled(!meansOnly);
    m_poolingCombo->setCurrentIndex(std::max(0, m_poolingCombo->findData(static_cast<int>(meansOnly ? PoolMode::Mean : picked))));
    m_poolingCombo->setToolTip(meansOnly ? tr("This head is drawn by its block means, exact from its feature sums: it has "
                                              "more than a billion weights, whose block maxima would take minutes")
                                         : poolingTip());
}

void HeatmapToolbar::onPicked() {
    HeatmapOptions options;
    options.colormap = m_colormapCombo->currentData().toString();
    options.scale = static_cast<ColorScale>(m_scaleCombo->currentData().toInt());
    options.pooling = static_cast<PoolMode>(m_poolingCombo->currentData().toInt());
    Q_EMIT optionsPicked(options);
}

}  // namespace attnscope::views
