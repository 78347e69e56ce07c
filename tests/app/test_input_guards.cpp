// The wheel changes values only in the focused field, and the window's shortcuts work from any
// text field.
#include "support/qt_test_support.h"

#include "gui/panels/input_guards.h"

#include <QAction>
#include <QKeyEvent>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QVBoxLayout>
#include <QWheelEvent>

using attnscope::app::InputGuards;

namespace {

// A field that takes Ctrl+E for itself, as a line edit does under desktop themes with Emacs-style
// bindings ("end of line"): without the guard the window's Ctrl+E never fires from it.
class GreedyLineEdit : public QLineEdit {
public:
    using QLineEdit::QLineEdit;
    int swallowed = 0;

protected:
    bool event(QEvent* e) override {
        if (e->type() == QEvent::ShortcutOverride &&
            static_cast<QKeyEvent*>(e)->keyCombination() == QKeyCombination(Qt::ControlModifier, Qt::Key_E)) {
            e->accept();
            ++swallowed;
            return true;
        }
        return QLineEdit::event(e);
    }
};

void wheel(QWidget* target, int notches) {
    const QPointF at(target->width() / 2.0, target->height() / 2.0);
    QWheelEvent event(at, target->mapToGlobal(at), QPoint(), QPoint(0, 120 * notches), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(target, &event);
}

}  // namespace

class TestInputGuards : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void wheelOverAnUnfocusedSpinBoxScrollsThePanel() {
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        auto* area = new QScrollArea(&window);
        auto* panel = new QWidget;
        auto* panelLayout = new QVBoxLayout(panel);
        auto* spin = new QSpinBox(panel);
        spin->setRange(0, 100);
        spin->setValue(4);
        auto* other = new QLineEdit(panel);
        panelLayout->addWidget(spin);
        for (int i = 0; i < 40; ++i) panelLayout->addWidget(new QLineEdit(panel));
        panelLayout->addWidget(other);
        area->setWidget(panel);
        area->setWidgetResizable(true);
        layout->addWidget(area);
        window.resize(300, 200);
        new InputGuards(&window);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));

        other->setFocus();
        wheel(spin, -5);
        QCOMPARE(spin->value(), 4);  // unchanged …
        QVERIFY(area->verticalScrollBar()->value() > 0);  // … the panel scrolled instead

        spin->setFocus();
        QTRY_VERIFY(spin->hasFocus());
        wheel(spin, -2);
        QCOMPARE(spin->value(), 2);  // focused: the wheel is the field's
    }

    void windowShortcutsWorkFromTextFields() {
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        auto* line = new GreedyLineEdit(&window);
        auto* text = new QPlainTextEdit(&window);
        layout->addWidget(line);
        layout->addWidget(text);
        auto* exportAction = new QAction(QStringLiteral("Export"), &window);
        exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
        auto* runAction = new QAction(QStringLiteral("Run"), &window);
        runAction->setShortcut(QKeySequence(Qt::Key_F5));
        auto* previousHead = new QAction(QStringLiteral("Previous head"), &window);
        previousHead->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Left));
        window.addAction(exportAction);
        window.addAction(runAction);
        window.addAction(previousHead);
        new InputGuards(&window);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy exported(exportAction, &QAction::triggered), ran(runAction, &QAction::triggered),
            stepped(previousHead, &QAction::triggered);

        line->setText(QStringLiteral("abc"));
        line->setFocus();
        QTRY_VERIFY(line->hasFocus());
        line->setCursorPosition(0);
        QTest::keyClick(line, Qt::Key_E, Qt::ControlModifier);
        QCOMPARE(exported.count(), 1);
        QCOMPARE(line->swallowed, 0);         // the field never got to take it
        QCOMPARE(line->cursorPosition(), 0);
        // A text-editing key stays with the field although the window binds it too.
        line->setCursorPosition(3);
        QTest::keyClick(line, Qt::Key_Left, Qt::ControlModifier);
        QCOMPARE(stepped.count(), 0);
        QCOMPARE(line->cursorPosition(), 0);  // moved back a word
        QTest::keyClick(line, Qt::Key_F5);
        QCOMPARE(ran.count(), 1);

        text->setFocus();
        QTRY_VERIFY(text->hasFocus());
        QTest::keyClick(text, Qt::Key_E, Qt::ControlModifier);
        QCOMPARE(exported.count(), 2);
        // Typing types.
        QTest::keyClicks(text, QStringLiteral("hi"));
        QCOMPARE(text->toPlainText(), QStringLiteral("hi"));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestInputGuards)
#include "test_input_guards.moc"
