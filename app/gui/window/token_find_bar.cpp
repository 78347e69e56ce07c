#include "gui/window/token_find_bar.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>

namespace attnscope::app {

TokenFindBar::TokenFindBar(QWidget* parent) : QWidget(parent) {
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(4, 2, 4, 2);
    row->addWidget(new QLabel(tr("Find token"), this));
    m_field = new QLineEdit(this);
    m_field->setObjectName(QStringLiteral("findTokenField"));
    m_field->setPlaceholderText(tr("text in a token, e.g. cat"));
    m_field->setClearButtonEnabled(true);
    m_field->setMaximumWidth(260);
    m_field->installEventFilter(this);
    row->addWidget(m_field);
    auto* previous = new QToolButton(this);
    previous->setText(QStringLiteral("▲"));
    previous->setToolTip(tr("Previous match (Shift+Enter, Shift+F3)"));
    auto* next = new QToolButton(this);
    next->setText(QStringLiteral("▼"));
    next->setToolTip(tr("Next match: the cell cursor goes to its row (Enter, F3)"));
    row->addWidget(previous);
    row->addWidget(next);
    m_status = new QLabel(this);
    m_status->setTextFormat(Qt::PlainText);  // it quotes what was typed and the tokens
    row->addWidget(m_status, 1);
    auto* close = new QToolButton(this);
    close->setText(QStringLiteral("✕"));
    close->setToolTip(tr("Close and clear the marks (Esc)"));
    close->setAutoRaise(true);
    row->addWidget(close);
    connect(m_field, &QLineEdit::textChanged, this, &TokenFindBar::searchChanged);
    connect(m_field, &QLineEdit::returnPressed, this, &TokenFindBar::nextRequested);
    connect(next, &QToolButton::clicked, this, &TokenFindBar::nextRequested);
    connect(previous, &QToolButton::clicked, this, &TokenFindBar::previousRequested);
    connect(close, &QToolButton::clicked, this, [this] {
        hide();
        Q_EMIT closed();
    });
    hide();
}

void TokenFindBar::open() {
    show();
    m_field->setFocus(Qt::ShortcutFocusReason);
    m_field->selectAll();
}

QString TokenFindBar::text() const { return m_field->text(); }

void TokenFindBar::setStatus(const QString& text) { m_status->setText(text); }

QString TokenFindBar::status() const { return m_status->text(); }

bool TokenFindBar::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_field && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        const bool shift = key->modifiers().testFlag(Qt::ShiftModifier);
        if (key->key() == Qt::Key_Escape) {
            hide();
            Q_EMIT closed();
            return true;
        }
        if ((key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) && shift) {
            Q_EMIT previousRequested();
            return true;
        }
        if (key->key() == Qt::Key_F3) {
            Q_EMIT(shift ? previousRequested() : nextRequested());
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace attnscope::app
