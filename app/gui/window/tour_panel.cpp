#include "gui/window/tour_panel.h"

#include "views/help/guided_tour.h"

#include <QCloseEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

namespace attnscope::app {

TourPanel::TourPanel(QWidget* parent) : QDockWidget(tr("Guided Tour"), parent) {
    setObjectName(QStringLiteral("guidedTour"));  // saveState() names docks by object name
    auto* body = new QWidget(this);
    auto* layout = new QVBoxLayout(body);
    m_title = new QLabel(body);
    QFont bold = m_title->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() + 1);
    m_title->setFont(bold);
    m_title->setWordWrap(true);
    m_text = new QLabel(body);
    m_text->setTextFormat(Qt::PlainText);
    m_text->setWordWrap(true);
    m_text->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    layout->addWidget(m_title);
    layout->addWidget(m_text, 1);
    auto* buttons = new QHBoxLayout;
    m_counter = new QLabel(body);
    m_back = new QPushButton(tr("Back"), body);
    m_next = new QPushButton(tr("Next"), body);
    buttons->addWidget(m_counter, 1);
    buttons->addWidget(m_back);
    buttons->addWidget(m_next);
    layout->addLayout(buttons);
    setWidget(body);
    setMinimumWidth(300);
    connect(m_back, &QPushButton::clicked, this, [this] { showStep(m_step - 1); });
    connect(m_next, &QPushButton::clicked, this, [this] {
        if (m_step + 1 >= stepCount()) close();
        else showStep(m_step + 1);
    });
}

// Finish and the dock's close button close it (a window being destroyed only hides it).
void TourPanel::closeEvent(QCloseEvent* event) {
    QDockWidget::closeEvent(event);
    if (event->isAccepted()) Q_EMIT ended();
}

int TourPanel::stepCount() const { return static_cast<int>(views::guidedTour().size()); }

QString TourPanel::stepTitle() const { return m_title->text(); }

void TourPanel::showStep(int index) {
    m_step = std::clamp(index, 0, stepCount() - 1);
    const views::TourStep& s = views::guidedTour()[static_cast<std::size_t>(m_step)];
    m_title->setText(s.title);
    m_text->setText(s.text);
    m_counter->setText(tr("%1 of %2").arg(m_step + 1).arg(stepCount()));
    m_back->setEnabled(m_step > 0);
    m_next->setText(m_step + 1 < stepCount() ? tr("Next") : tr("Finish"));
    show();
    raise();
    Q_EMIT stepShown(m_step);
}

}  // namespace attnscope::app
