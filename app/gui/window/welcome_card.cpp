#include "gui/window/welcome_card.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace attnscope::app {

WelcomeCard::WelcomeCard(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("welcomeCard"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    QPalette p = palette();
    p.setColor(QPalette::Window, p.color(QPalette::AlternateBase));
    setPalette(p);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 6, 6, 6);
    auto* words = new QVBoxLayout;
    m_title = new QLabel(tr("<b>Welcome to AttnScope</b>"), this);
    words->addWidget(m_title);
    m_text = new QLabel(this);
    m_text->setTextFormat(Qt::RichText);  // our own words; the model's name is escaped (setShowing)
    m_text->setWordWrap(true);
    words->addWidget(m_text);
    layout->addLayout(words, 1);
    auto* buttons = new QVBoxLayout;
    m_tour = new QPushButton(tr("Take the Guided Tour"), this);
    m_tour->setToolTip(tr("A few steps through the views (Help ▸ Guided Tour any time)"));
    m_close = new QPushButton(tr("Got it"), this);
    m_close->setToolTip(tr("Hide this card; F1 explains whatever view is shown"));
    buttons->addWidget(m_tour);
    buttons->addWidget(m_close);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    connect(m_tour, &QPushButton::clicked, this, [this] {
        hide();
        Q_EMIT dismissed();
        Q_EMIT tourRequested();
    });
    connect(m_close, &QPushButton::clicked, this, [this] {
        hide();
        Q_EMIT dismissed();
    });
    setShowing(QString());
}

void WelcomeCard::setShowing(const QString& modelName) {
    const QString what =
        modelName.isEmpty()
            ? tr("On screen: seeded random Q, K and V, so each variant's <i>structure</i> shows, not language.")
            : tr("On screen: the attention the trained model <b>%1</b> computes on the text at the left, one layer at a "
                 "time (the layer is chosen under Q, K, V source).")
                  .arg(modelName.toHtmlEscaped());
    m_text->setText(what + QStringLiteral(" ") +
                    tr("Top: every head of the layer. Below: the selected head: a row is a query token, a column the key "
                       "it looks at, the colour its weight (each row sums to 1).<br>"
                       "Try: hover a cell to read it · PgDn for the next head · choose <i>Longformer</i> at the left and "
                       "press F5 · the <i>Compare</i> tab puts variants side by side · F1 explains the shown view."));
}

QString WelcomeCard::text() const { return m_text->text(); }

}  // namespace attnscope::app
