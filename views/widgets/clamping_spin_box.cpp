#include "views/widgets/clamping_spin_box.h"

#include <algorithm>

namespace attnscope::views {

namespace {

// The number in `input` without the prefix and suffix; false when it is not an integer.
bool typedNumber(const QSpinBox& box, const QString& input, qlonglong* value) {
    QString text = input;
    if (!box.prefix().isEmpty() && text.startsWith(box.prefix())) text.remove(0, box.prefix().size());
    if (!box.suffix().isEmpty() && text.endsWith(box.suffix())) text.chop(box.suffix().size());
    bool ok = false;
    *value = text.trimmed().toLongLong(&ok);
    return ok;
}

}  // namespace

ClampingSpinBox::ClampingSpinBox(QWidget* parent) : QSpinBox(parent) {
    // (after fixup() has set the clamped value, whether editing ended by Enter or by focus)
    connect(this, &QSpinBox::editingFinished, this, &ClampingSpinBox::reportClamp);
}

QValidator::State ClampingSpinBox::validate(QString& input, int& pos) const {
    const QValidator::State state = QSpinBox::validate(input, pos);
    if (state != QValidator::Invalid) return state;
    // An integer outside the range may be typed (a minus sign starts one): fixup() brings it
    // into the range.
    qlonglong value = 0;
    if (typedNumber(*this, input, &value) || typedNumber(*this, input + QLatin1Char('0'), &value)) return QValidator::Intermediate;
    return QValidator::Invalid;
}

void ClampingSpinBox::fixup(QString& input) const {
    qlonglong value = 0;
    if (!typedNumber(*this, input, &value)) return QSpinBox::fixup(input);
    const qlonglong used = std::clamp<qlonglong>(value, minimum(), maximum());
    if (used != value) {
        m_typed = value;
        m_pending = true;
    }
    input = prefix() + textFromValue(static_cast<int>(used)) + suffix();
}

void ClampingSpinBox::reportClamp() {
    if (!m_pending) return;
    m_pending = false;
    Q_EMIT clamped(m_typed, value());
}

QString clampNotice(const QString& field, qlonglong typed, int used) {
    return typed > used ? QSpinBox::tr("%1: %2 is above the largest allowed value, %3; using %3.").arg(field).arg(typed).arg(used)
                        : QSpinBox::tr("%1: %2 is below the smallest allowed value, %3; using %3.").arg(field).arg(typed).arg(used);
}

}  // namespace attnscope::views
