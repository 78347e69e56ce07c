#pragma once
// A spin box that takes any integer the user types and, when it is outside the range, sets the
// nearest allowed value and says so (clamped()). QSpinBox refuses the keystrokes instead: typing
// 99999 into Heads (at most 64) left "9", silently.

#include <QSpinBox>

namespace attnscope::views {

class ClampingSpinBox : public QSpinBox {
    Q_OBJECT
public:
    explicit ClampingSpinBox(QWidget* parent = nullptr);

Q_SIGNALS:
    /// The user typed `typed`, outside the range; the box now holds `used`.
    void clamped(qlonglong typed, int used);

protected:
    QValidator::State validate(QString& input, int& pos) const override;
    void fixup(QString& input) const override;

private:
    void reportClamp();
    /// What fixup() clamped (it is const, as Qt declares it): reported after editing finishes.
    mutable qlonglong m_typed = 0;
    mutable bool m_pending = false;
};

/// "Heads: 99999 is above the largest allowed value, 64; using 64." for a notice.
QString clampNotice(const QString& field, qlonglong typed, int used);

}  // namespace attnscope::views
