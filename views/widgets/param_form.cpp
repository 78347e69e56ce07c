#include "views/widgets/param_form.h"

#include "views/widgets/clamping_spin_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

using engine::ParamSpec;
using engine::ParamType;
using engine::ParamValue;
using engine::ParamValues;

namespace {

// A range bound as a person writes it: 1048576, not 1.04858e+06.
QString rangeBound(double value) { return QString::number(value, 'g', 15); }

template <class T>
T valueOr(const ParamValue& value, T fallback) {
    if (const T* v = std::get_if<T>(&value)) return *v;
    return fallback;
}

template <class T>
QString joinList(const std::vector<T>& values) {
    QStringList parts;
    for (const T& v : values) parts << QString::number(v);
    return parts.join(QStringLiteral(", "));
}

// Parses "1, 2,3"; *ok is false when any non-empty entry is not a number.
template <class T>
std::vector<T> splitList(const QString& text, bool* ok) {
    std::vector<T> out;
    *ok = true;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString entry = part.trimmed();
        if (entry.isEmpty()) continue;
        bool parsed = false;
        if constexpr (std::is_same_v<T, std::int64_t>) {
            const qlonglong v = entry.toLongLong(&parsed);
            if (parsed) out.push_back(v);
        } else {
            const double v = entry.toDouble(&parsed);
            if (parsed && std::isfinite(v))
                out.push_back(v);
            else
                parsed = false;
        }
        if (!parsed) *ok = false;
    }
    return out;
}

bool hasRange(const ParamSpec& spec) { return spec.maxValue > spec.minValue; }

// Decimals enough to show the smallest step of the range, between 2 and 6.
// Enough decimals for the range's resolution and for two significant digits of the default: a
// spin box rounds its value to its decimals, and 3 decimals turned defaults such as Performer's
// feature_eps = 1e-4 and Linear's eps = 1e-6 into 0 before any run.
int decimalsFor(const ParamSpec& spec) {
    const double span = hasRange(spec) ? spec.maxValue - spec.minValue : 1.0;
    int decimals = static_cast<int>(std::ceil(3.0 - std::log10(std::max(span, 1e-9))));
    const double def = std::abs(valueOr<double>(spec.defaultValue, 0.0));
    if (def > 0.0) decimals = std::max(decimals, static_cast<int>(std::ceil(-std::log10(def))) + 2);
    return std::clamp(decimals, 2, 12);
}

}  // namespace

ParamForm::ParamForm(QWidget* parent) : QWidget(parent) {
    m_layout = new QFormLayout(this);
    m_layout->setContentsMargins(0, 0, 0, 0);
    m_layout->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
}

QWidget* ParamForm::createEditor(const ParamSpec& spec) {
    const QString name = QString::fromStdString(spec.name);
    QWidget* editor = nullptr;
    switch (spec.type) {
        case ParamType::Bool: {
            auto* box = new QCheckBox(this);
            box->setChecked(valueOr<bool>(spec.defaultValue, false));
            connect(box, &QCheckBox::toggled, this, &ParamForm::valuesChanged);
            editor = box;
            break;
        }
        case ParamType::Int: {
            auto* box = new ClampingSpinBox(this);
            connect(box, &ClampingSpinBox::clamped, this, [this, name](qlonglong typed, int used) {
                const QString text = clampNotice(name, typed, used);
                setFieldNote(name, text, false);
                Q_EMIT notice(text);
            });
            // QSpinBox holds int: clamp the schema's range to it.
            constexpr double kLo = std::numeric_limits<int>::min(), kHi = std::numeric_limits<int>::max();
            const double lo = hasRange(spec) ? std::max(spec.minValue, kLo) : kLo;
            const double hi = hasRange(spec) ? std::min(spec.maxValue, kHi) : kHi;
            box->setRange(static_cast<int>(lo), static_cast<int>(hi));
            box->setValue(static_cast<int>(std::clamp<double>(valueOr<std::int64_t>(spec.defaultValue, 0), lo, hi)));
            connect(box, &QSpinBox::valueChanged, this, &ParamForm::valuesChanged);
            editor = box;
            break;
        }
        case ParamType::Float: {
            auto* box = new QDoubleSpinBox(this);
            box->setDecimals(decimalsFor(spec));
            if (hasRange(spec))
                box->setRange(spec.minValue, spec.maxValue);
            else
                box->setRange(-1e9, 1e9);
            box->setSingleStep(
                hasRange(spec) ? std::pow(10.0, std::floor(std::log10(spec.maxValue - spec.minValue)) - 1) : 0.1);
            box->setValue(valueOr<double>(spec.defaultValue, 0.0));
            connect(box, &QDoubleSpinBox::valueChanged, this, &ParamForm::valuesChanged);
            editor = box;
            break;
        }
        case ParamType::Choice: {
            auto* box = new QComboBox(this);
            for (const auto& choice : spec.choices) box->addItem(QString::fromStdString(choice));
            box->setCurrentText(QString::fromStdString(valueOr<std::string>(spec.defaultValue, {})));
            connect(box, &QComboBox::currentIndexChanged, this, &ParamForm::valuesChanged);
            editor = box;
            break;
        }
        case ParamType::IntList:
        case ParamType::FloatList: {
            auto* line = new QLineEdit(this);
            line->setText(spec.type == ParamType::IntList
                              ? joinList(valueOr<std::vector<std::int64_t>>(spec.defaultValue, {}))
                              : joinList(valueOr<std::vector<double>>(spec.defaultValue, {})));
            line->setPlaceholderText(tr("comma-separated, e.g. 1, 2, 3"));
            connect(line, &QLineEdit::textChanged, this, &ParamForm::valuesChanged);
            editor = line;
            break;
        }
    }
    editor->setObjectName(name);
    // Schema text comes from the engine, but tooltips guess rich text: escape it anyway.
    QString tip = QString::fromStdString(spec.help).toHtmlEscaped();
    if (hasRange(spec) && spec.type != ParamType::Bool && spec.type != ParamType::Choice)
        tip += QStringLiteral("<br>range %1 – %2").arg(rangeBound(spec.minValue), rangeBound(spec.maxValue));
    editor->setToolTip(QStringLiteral("<p>%1</p>").arg(tip));
    return editor;
}

// The editor with a note row under it (hidden until a note is set): the text, and a button when
// the note offers a fix.
QWidget* ParamForm::fieldWithNote(QWidget* editor, FieldNote& note) {
    auto* field = new QWidget(this);
    auto* layout = new QVBoxLayout(field);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    editor->setParent(field);
    layout->addWidget(editor);
    // (the text over the whole field's width, the fix under it: side by side, the text wrapped
    // into a column a word wide)
    note.row = new QWidget(field);
    auto* row = new QVBoxLayout(note.row);
    row->setContentsMargins(0, 0, 0, 4);
    row->setSpacing(2);
    note.text = new QLabel(note.row);
    note.text->setWordWrap(true);
    note.text->setTextFormat(Qt::PlainText);
    note.text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    note.text->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    row->addWidget(note.text);
    note.fix = new QPushButton(note.row);
    note.fix->setVisible(false);
    row->addWidget(note.fix, 0, Qt::AlignLeft);
    layout->addWidget(note.row);
    note.row->setVisible(false);
    return field;
}

void ParamForm::setVariant(const engine::VariantInfo& info) {
    while (m_layout->rowCount() > 0) m_layout->removeRow(0);  // deletes the row's widgets
    m_editors.clear();
    m_notes.clear();
    m_info = info;
    m_notes.resize(m_info.params.size());
    for (std::size_t i = 0; i < m_info.params.size(); ++i) {
        const ParamSpec& spec = m_info.params[i];
        QWidget* editor = createEditor(spec);
        auto* label = new QLabel(QString::fromStdString(spec.name), this);
        label->setTextFormat(Qt::PlainText);
        label->setBuddy(editor);
        FieldNote& note = m_notes[i];
        m_layout->addRow(label, fieldWithNote(editor, note));
        connect(note.fix, &QPushButton::clicked, this, [this, i] {
            // (the action may rebuild the form: take it first)
            const std::function<void()> action = m_notes[i].action;
            if (action) action();
        });
        m_editors.push_back(editor);
    }
    linkDefaults();
    linkUsage();
    showImageDefaults();
    if (m_info.params.empty()) {
        auto* none = new QLabel(tr("This variant has no parameters."), this);
        none->setEnabled(false);
        m_layout->addRow(none);
    }
    Q_EMIT valuesChanged();
}

void ParamForm::linkDefaults() {
    for (std::size_t i = 0; i < m_info.params.size(); ++i) {
        const ParamSpec& spec = m_info.params[i];
        if (spec.defaultFrom.empty() || spec.type != ParamType::Int) continue;
        const auto source = std::find_if(m_info.params.begin(), m_info.params.end(),
                                         [&](const ParamSpec& p) { return p.name == spec.defaultFrom; });
        if (source == m_info.params.end() || source->type != ParamType::Int) continue;
        auto* target = static_cast<QSpinBox*>(m_editors[i]);
        auto* from = static_cast<QSpinBox*>(m_editors[static_cast<std::size_t>(source - m_info.params.begin())]);
        target->setProperty("follows", true);
        target->setToolTip(target->toolTip() + tr("<p>Follows %1 until you change it.</p>").arg(from->objectName()));
        connect(target, &QSpinBox::valueChanged, this, [this, target] {
            if (!m_following) target->setProperty("follows", false);
        });
        connect(from, &QSpinBox::valueChanged, this, [this, target](int value) {
            if (!target->property("follows").toBool()) return;
            m_following = true;
            target->setValue(value);
            m_following = false;
        });
    }
}

void ParamForm::linkUsage() {
    for (std::size_t i = 0; i < m_info.params.size(); ++i) {
        const ParamSpec& spec = m_info.params[i];
        const auto eq = spec.usedWhen.find('=');
        if (eq == std::string::npos) continue;
        const std::string name = spec.usedWhen.substr(0, eq);
        const QString wanted = QString::fromStdString(spec.usedWhen.substr(eq + 1));
        const auto source = std::find_if(m_info.params.begin(), m_info.params.end(), [&](const ParamSpec& p) { return p.name == name; });
        if (source == m_info.params.end()) continue;
        QWidget* from = m_editors[static_cast<std::size_t>(source - m_info.params.begin())];
        QWidget* editor = m_editors[i];
        QWidget* label = m_layout->labelForField(editor->parentWidget() == this ? editor : editor->parentWidget());
        // Greyed out, and saying why, while the setting it belongs to is not chosen.
        const QString why = tr("Used only when %1 = %2.").arg(QString::fromStdString(name), wanted);
        const auto update = [editor, label, from, wanted, why] {
            const auto* combo = qobject_cast<const QComboBox*>(from);
            const auto* check = qobject_cast<const QCheckBox*>(from);
            const QString value = combo ? combo->currentText() : check ? (check->isChecked() ? QStringLiteral("true") : QStringLiteral("false")) : QString();
            const bool used = value == wanted;
            editor->setEnabled(used);
            if (label) label->setEnabled(used);
            editor->setStatusTip(used ? QString() : why);
        };
        if (auto* combo = qobject_cast<QComboBox*>(from)) connect(combo, &QComboBox::currentTextChanged, this, update);
        if (auto* check = qobject_cast<QCheckBox*>(from)) connect(check, &QCheckBox::toggled, this, update);
        if (!editor->toolTip().contains(why)) editor->setToolTip(editor->toolTip() + QStringLiteral("<p>%1</p>").arg(why.toHtmlEscaped()));
        update();
    }
}

void ParamForm::setImageGrid(const std::optional<engine::GridShape>& grid) {
    m_imageGrid = grid;
    showImageDefaults();
}

void ParamForm::showImageDefaults() {
    for (std::size_t i = 0; i < m_info.params.size() && i < m_editors.size(); ++i) {
        const ParamSpec& spec = m_info.params[i];
        if (spec.imageDefault == engine::ImageDefault::None || spec.type != ParamType::Int) continue;
        auto* spin = static_cast<QSpinBox*>(m_editors[i]);
        if (!spin->property("followsImage").isValid()) {  // first time: follow until the user edits it
            spin->setProperty("followsImage", true);
            connect(spin, &QSpinBox::valueChanged, this, [this, spin, name = QString::fromStdString(spec.name)] {
                if (m_following) return;
                spin->setProperty("followsImage", false);  // the user's value from now on
                if (fieldNote(name).contains(tr("from the image"))) setFieldNote(name, QString(), false);
            });
        }
        if (!spin->property("followsImage").toBool()) continue;
        const auto value = m_imageGrid ? engine::imageDefaultValue(spec.imageDefault, *m_imageGrid) : std::nullopt;
        m_following = true;
        spin->setValue(static_cast<int>(value ? *value : std::get<std::int64_t>(spec.defaultValue)));
        m_following = false;
        if (value)
            setFieldNote(QString::fromStdString(spec.name),
                         tr("%1, from the image (%2)").arg(*value).arg(QString::fromStdString(engine::imageDefaultReason(spec.imageDefault, *m_imageGrid))),
                         /*problem=*/false);
        else if (fieldNote(QString::fromStdString(spec.name)).contains(tr("from the image")))
            setFieldNote(QString::fromStdString(spec.name), QString(), false);
    }
}

ParamValues ParamForm::values() const {
    ParamValues out;
    for (std::size_t i = 0; i < m_info.params.size(); ++i) {
        const ParamSpec& spec = m_info.params[i];
        QWidget* editor = m_editors[i];
        bool ok = true;
        switch (spec.type) {
            case ParamType::Bool:
                out[spec.name] = static_cast<QCheckBox*>(editor)->isChecked();
                break;
            case ParamType::Int:
                out[spec.name] = static_cast<std::int64_t>(static_cast<QSpinBox*>(editor)->value());
                break;
            case ParamType::Float:
                out[spec.name] = static_cast<QDoubleSpinBox*>(editor)->value();
                break;
            case ParamType::Choice:
                out[spec.name] = static_cast<QComboBox*>(editor)->currentText().toStdString();
                break;
            case ParamType::IntList:
                out[spec.name] = splitList<std::int64_t>(static_cast<QLineEdit*>(editor)->text(), &ok);
                break;
            case ParamType::FloatList:
                out[spec.name] = splitList<double>(static_cast<QLineEdit*>(editor)->text(), &ok);
                break;
        }
    }
    return out;
}

void ParamForm::setValues(const ParamValues& values) {
    for (std::size_t i = 0; i < m_info.params.size(); ++i) {
        const ParamSpec& spec = m_info.params[i];
        const auto it = values.find(spec.name);
        if (it == values.end()) continue;
        const ParamValue& v = it->second;
        QWidget* editor = m_editors[i];
        switch (spec.type) {
            case ParamType::Bool:
                if (auto* b = std::get_if<bool>(&v)) static_cast<QCheckBox*>(editor)->setChecked(*b);
                break;
            case ParamType::Int:
                if (auto* x = std::get_if<std::int64_t>(&v))
                    static_cast<QSpinBox*>(editor)->setValue(static_cast<int>(*x));
                break;
            case ParamType::Float:
                if (auto* x = std::get_if<double>(&v)) static_cast<QDoubleSpinBox*>(editor)->setValue(*x);
                break;
            case ParamType::Choice:
                if (auto* s = std::get_if<std::string>(&v))
                    static_cast<QComboBox*>(editor)->setCurrentText(QString::fromStdString(*s));
                break;
            case ParamType::IntList:
                if (auto* l = std::get_if<std::vector<std::int64_t>>(&v))
                    static_cast<QLineEdit*>(editor)->setText(joinList(*l));
                break;
            case ParamType::FloatList:
                if (auto* l = std::get_if<std::vector<double>>(&v))
                    static_cast<QLineEdit*>(editor)->setText(joinList(*l));
                break;
        }
    }
}

int ParamForm::indexOf(const QString& param) const {
    for (std::size_t i = 0; i < m_info.params.size(); ++i)
        if (QString::fromStdString(m_info.params[i].name) == param) return static_cast<int>(i);
    return -1;
}

void ParamForm::setFieldNote(const QString& param, const QString& text, bool problem, const QString& fixLabel,
                             std::function<void()> fix) {
    const int i = indexOf(param);
    if (i < 0) return;
    FieldNote& note = m_notes[static_cast<std::size_t>(i)];
    note.text->setText(text);
    note.text->setStyleSheet(problem ? QStringLiteral("color: #b71c1c;") : QStringLiteral("color: palette(mid);"));
    note.action = std::move(fix);
    note.fix->setText(fixLabel);
    note.fix->setVisible(!fixLabel.isEmpty() && note.action);
    note.row->setVisible(!text.isEmpty());
    // the field itself, tinted while it holds a problem
    QWidget* editor = m_editors[static_cast<std::size_t>(i)];
    if (problem) {
        QPalette palette = editor->palette();
        palette.setColor(QPalette::Base, QColor(0xfd, 0xec, 0xea));
        editor->setPalette(palette);
    } else {
        editor->setPalette(QPalette());  // (an empty palette: the parent's again)
    }
    editor->setProperty("problem", problem);
}

void ParamForm::clearFieldNotes() {
    for (std::size_t i = 0; i < m_notes.size(); ++i) {
        if (!m_notes[i].row->isVisible() && !m_editors[i]->property("problem").toBool()) continue;
        m_notes[i].row->setVisible(false);
        m_notes[i].text->clear();
        m_notes[i].action = nullptr;
        m_editors[i]->setPalette(QPalette());
        m_editors[i]->setProperty("problem", false);
    }
    showImageDefaults();  // (the values an image gives keep their note)
}

QString ParamForm::fieldNote(const QString& param) const {
    const int i = indexOf(param);
    // (isHidden, not isVisibleTo: a field added to a shown form is shown only by the next event loop)
    return i < 0 || m_notes[static_cast<std::size_t>(i)].row->isHidden() ? QString()
                                                                                 : m_notes[static_cast<std::size_t>(i)].text->text();
}

QPushButton* ParamForm::fieldFix(const QString& param) const {
    const int i = indexOf(param);
    if (i < 0) return nullptr;
    QPushButton* fix = m_notes[static_cast<std::size_t>(i)].fix;
    return fix->isHidden() ? nullptr : fix;
}

QStringList ParamForm::invalidParams() const {
    QStringList bad;
    for (std::size_t i = 0; i < m_info.params.size(); ++i) {
        const ParamSpec& spec = m_info.params[i];
        if (spec.type != ParamType::IntList && spec.type != ParamType::FloatList) continue;
        bool ok = true;
        const QString text = static_cast<QLineEdit*>(m_editors[i])->text();
        if (spec.type == ParamType::IntList)
            (void)splitList<std::int64_t>(text, &ok);
        else
            (void)splitList<double>(text, &ok);
        if (!ok) bad << QString::fromStdString(spec.name);
    }
    return bad;
}

QStringList ParamForm::applyTexts(const QStringList& texts) {
    QStringList errors;
    engine::ParamValues values;
    for (const QString& text : texts) {
        const qsizetype eq = text.indexOf(QLatin1Char('='));
        const std::string name = text.left(eq).trimmed().toStdString();
        const engine::ParamSpec* spec = eq > 0 ? m_info.findParam(name) : nullptr;
        if (!spec) {
            errors << tr("%1: not a parameter of %2").arg(text, QString::fromStdString(m_info.id));
            continue;
        }
        auto value = engine::parseParamValue(*spec, text.mid(eq + 1).trimmed().toStdString());
        if (!value) {
            errors << QString::fromStdString(value.error().message);
            continue;
        }
        values[name] = *value;
    }
    setValues(values);
    return errors;
}

}  // namespace attnscope::views
