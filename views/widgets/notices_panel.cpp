#include "views/widgets/notices_panel.h"

#include <QHBoxLayout>
#include <QListWidget>
#include <QPushButton>
#include <QTime>
#include <QVBoxLayout>

namespace attnscope::views {

NoticesPanel::NoticesPanel(QWidget* parent) : QDockWidget(tr("Messages"), parent) {
    setObjectName(QStringLiteral("noticesPanel"));  // saveState() names docks by object name
    auto* body = new QWidget(this);
    auto* layout = new QVBoxLayout(body);
    layout->setContentsMargins(4, 2, 4, 4);
    m_list = new QListWidget(body);
    m_list->setWordWrap(true);
    m_list->setTextElideMode(Qt::ElideNone);
    m_list->setSelectionMode(QAbstractItemView::ExtendedSelection);  // Ctrl+C copies what is selected
    m_list->setAccessibleName(tr("Messages"));
    layout->addWidget(m_list, 1);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    auto* clearButton = new QPushButton(tr("Clear"), body);
    clearButton->setToolTip(tr("Forget the listed messages"));
    buttons->addWidget(clearButton);
    layout->addLayout(buttons);
    setWidget(body);
    connect(clearButton, &QPushButton::clicked, this, &NoticesPanel::clear);
}

void NoticesPanel::add(const QString& text, const QString& details) {
    if (text.trimmed().isEmpty()) return;
    const QString stamp = QTime::currentTime().toString(QStringLiteral("HH:mm:ss"));
    if (text == m_last && m_list->count() > 0) {
        ++m_repeats;
        m_list->item(m_list->count() - 1)->setText(tr("%1  %2 (×%3)").arg(stamp, text).arg(m_repeats));
        return;
    }
    m_last = text;
    m_repeats = 1;
    auto* item = new QListWidgetItem(QStringLiteral("%1  %2").arg(stamp, text), m_list);
    if (!details.isEmpty()) item->setToolTip(details);
    while (m_list->count() > kMaxMessages) delete m_list->takeItem(0);
    m_list->scrollToBottom();
    Q_EMIT countChanged(count());
}

void NoticesPanel::clear() {
    m_list->clear();
    m_last.clear();
    m_repeats = 1;
    Q_EMIT countChanged(0);
}

int NoticesPanel::count() const { return m_list->count(); }

QStringList NoticesPanel::messages() const {
    QStringList out;
    for (int i = 0; i < m_list->count(); ++i) out << m_list->item(i)->text();
    return out;
}

}  // namespace attnscope::views
