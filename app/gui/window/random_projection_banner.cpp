#include "gui/window/random_projection_banner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStyle>

namespace attnscope::app {

RandomProjectionBanner::RandomProjectionBanner(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("randomProjectionBanner"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    QPalette p = palette();
    p.setColor(QPalette::Window, p.color(QPalette::ToolTipBase));
    p.setColor(QPalette::WindowText, p.color(QPalette::ToolTipText));
    setPalette(p);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 4, 4, 4);
    m_label = new QLabel(tr("Random projections: Q, K and V come from seeded random weights, so no model has learned "
                            "anything here — the patterns show each variant's structure, not language."),
                         this);
    m_label->setTextFormat(Qt::PlainText);
    m_label->setWordWrap(true);
    layout->addWidget(m_label, 1);
    m_useModel = new QPushButton(tr("Use the trained sample model"), this);
    m_useModel->setToolTip(tr("Opens the bundled Transformer-XL trained on Moby-Dick (bytes) and shows its own "
                              "attention (variant transformer_xl) on this text"));
    connect(m_useModel, &QPushButton::clicked, this, &RandomProjectionBanner::useSampleModelRequested);
    layout->addWidget(m_useModel);
    m_dismiss = new QPushButton(style()->standardIcon(QStyle::SP_TitleBarCloseButton), QString(), this);
    m_dismiss->setFlat(true);
    m_dismiss->setToolTip(tr("Hide this note"));
    m_dismiss->setAccessibleName(tr("Hide the random projections note"));
    connect(m_dismiss, &QPushButton::clicked, this, [this] {
        m_dismissed = true;
        hide();
    });
    layout->addWidget(m_dismiss);
}

QString RandomProjectionBanner::text() const { return m_label->text(); }

void RandomProjectionBanner::setRandomProjections(bool random) { setVisible(random && !m_dismissed); }

}  // namespace attnscope::app
