#include "gui/panels/input_guards.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QKeyEvent>
#include <QKeySequence>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSlider>
#include <QTextEdit>
#include <QWheelEvent>
#include <QWidget>

namespace attnscope::app {

InputGuards::InputGuards(QWidget* window) : QObject(window), m_window(window) { qApp->installEventFilter(this); }

bool InputGuards::isInside(const QObject* object) const {
    const auto* widget = qobject_cast<const QWidget*>(object);
    return widget && (widget == m_window || m_window->isAncestorOf(widget));
}

// A wheel over an unfocused value widget goes to the scroll area around it instead.
bool InputGuards::guardWheel(QWidget* widget, QEvent* event) {
    QWidget* control = widget;
    // (a spin box's or combo box's inner line edit receives the wheel first)
    if (qobject_cast<QLineEdit*>(control) && control->parentWidget()) control = control->parentWidget();
    const bool valueWidget = qobject_cast<QAbstractSpinBox*>(control) || qobject_cast<QComboBox*>(control) ||
                             qobject_cast<QSlider*>(control);
    if (!valueWidget || control->hasFocus()) return false;
    for (QWidget* up = control->parentWidget(); up; up = up->parentWidget())
        if (auto* area = qobject_cast<QAbstractScrollArea*>(up)) {
            auto* wheel = static_cast<QWheelEvent*>(event);
            QWheelEvent forwarded(area->viewport()->mapFromGlobal(wheel->globalPosition()), wheel->globalPosition(),
                                  wheel->pixelDelta(), wheel->angleDelta(), wheel->buttons(), wheel->modifiers(),
                                  wheel->phase(), wheel->inverted());
            QCoreApplication::sendEvent(area->viewport(), &forwarded);
            break;
        }
    return true;  // never to the unfocused control
}

namespace {

// The platform's text-editing keys (clipboard, undo, moving and selecting by word or line,
// deleting): a field keeps these even when the window also binds them (Ctrl+Left steps heads
// elsewhere, moves by a word in a field).
bool isEditingKey(const QKeySequence& pressed) {
    static const QKeySequence::StandardKey editing[] = {
        QKeySequence::Copy, QKeySequence::Cut, QKeySequence::Paste, QKeySequence::Undo, QKeySequence::Redo,
        QKeySequence::SelectAll, QKeySequence::Deselect, QKeySequence::MoveToNextChar, QKeySequence::MoveToPreviousChar,
        QKeySequence::MoveToNextWord, QKeySequence::MoveToPreviousWord, QKeySequence::MoveToNextLine,
        QKeySequence::MoveToPreviousLine, QKeySequence::MoveToStartOfLine, QKeySequence::MoveToEndOfLine,
        QKeySequence::MoveToStartOfBlock, QKeySequence::MoveToEndOfBlock, QKeySequence::MoveToStartOfDocument,
        QKeySequence::MoveToEndOfDocument, QKeySequence::SelectNextChar, QKeySequence::SelectPreviousChar,
        QKeySequence::SelectNextWord, QKeySequence::SelectPreviousWord, QKeySequence::SelectStartOfLine,
        QKeySequence::SelectEndOfLine, QKeySequence::SelectStartOfDocument, QKeySequence::SelectEndOfDocument,
        QKeySequence::DeleteStartOfWord, QKeySequence::DeleteEndOfWord, QKeySequence::DeleteEndOfLine,
        QKeySequence::DeleteCompleteLine, QKeySequence::Backspace, QKeySequence::Delete};
    for (const auto key : editing)
        if (QKeySequence::keyBindings(key).contains(pressed)) return true;
    return false;
}

}  // namespace

bool InputGuards::isWindowShortcut(QEvent* event) const {
    auto* key = static_cast<QKeyEvent*>(event);
    const QKeyCombination combination = key->keyCombination();
    if (!(combination.keyboardModifiers() & (Qt::ControlModifier | Qt::AltModifier)) &&
        !(combination.key() >= Qt::Key_F1 && combination.key() <= Qt::Key_F35))
        return false;  // plain typing and editing keys stay with the field
    const QKeySequence pressed(combination);
    for (const QAction* action : m_window->findChildren<QAction*>()) {
        if (!action->isEnabled()) continue;
        for (const QKeySequence& shortcut : action->shortcuts())
            if (shortcut.matches(pressed) == QKeySequence::ExactMatch) return !isEditingKey(pressed);
    }
    return false;
}

bool InputGuards::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Wheel && isInside(watched)) return guardWheel(static_cast<QWidget*>(watched), event);
    if (event->type() == QEvent::ShortcutOverride && isInside(watched) &&
        (qobject_cast<QLineEdit*>(watched) || qobject_cast<QPlainTextEdit*>(watched) || qobject_cast<QTextEdit*>(watched)) &&
        isWindowShortcut(event)) {
        event->ignore();  // not overridden: the shortcut goes to the window's action
        return true;
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace attnscope::app
