#include "gui/run_settings_panel.h"

#include "gui/compare_variants_editor.h"

#include "views/clamping_spin_box.h"
#include "views/param_form.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace attnscope::app {

using engine::TokenizerKind;

RunSettingsPanel::RunSettingsPanel(const Initial& initial, QWidget* parent) : QWidget(parent) {
    m_content = new QWidget(this);
    m_contentLayout = new QVBoxLayout(m_content);
    m_contentLayout->addWidget(buildInputBox(initial), 1);
    m_contentLayout->addWidget(buildVariantBox());
    m_contentLayout->addWidget(buildCompareBox());
    m_contentLayout->addWidget(buildProjectionBox(initial));

    auto* buttons = new QHBoxLayout;
    m_runButton = new QPushButton(tr("Run"), this);
    m_runButton->setDefault(true);
    m_cancelButton = new QPushButton(tr("Cancel"), this);
    buttons->addWidget(m_runButton, 1);
    buttons->addWidget(m_cancelButton);

    // The settings scroll when the window is shorter than they are (squeezed below their size,
    // the parameter forms' rows were drawn on top of each other); Run and Cancel stay in view.
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_content);
    scroll->setWidgetResizable(true);
    // Never sideways: with word-wrapped labels the content was laid out before the vertical bar
    // took its width, and a horizontal bar appeared for those few pixels.
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setFrameShape(QFrame::NoFrame);
    layout->addWidget(scroll, 1);
    buttons->setContentsMargins(9, 0, 9, 6);
    layout->addLayout(buttons);
}

QWidget* RunSettingsPanel::buildInputBox(const Initial& initial) {
    auto* box = new QGroupBox(tr("Input"), m_content);
    auto* layout = new QVBoxLayout(box);
    m_text = new QPlainTextEdit(box);
    m_text->setPlainText(initial.text);
    m_text->setPlaceholderText(tr("Paste text here, then press Run (F5)."));
    layout->addWidget(m_text, 1);
    auto* row = new QFormLayout;
    m_tokenizerCombo = new QComboBox(box);
    m_tokenizerCombo->addItem(QStringLiteral("words"), static_cast<int>(TokenizerKind::Words));
    m_tokenizerCombo->addItem(QStringLiteral("chars"), static_cast<int>(TokenizerKind::Chars));
    m_tokenizerCombo->addItem(QStringLiteral("bytes"), static_cast<int>(TokenizerKind::Bytes));
    m_tokenizerCombo->setCurrentIndex(std::max(0, m_tokenizerCombo->findText(initial.tokenizer)));
    m_tokenizerCombo->setToolTip(
        tr("words: runs of letters and digits, each punctuation mark alone; chars: code points; "
           "bytes: UTF-8 bytes"));
    // With a model the model's own tokenizer is named instead of the combo (which keeps the choice).
    m_modelTokenizer = new QLabel(box);
    m_modelTokenizer->setTextFormat(Qt::PlainText);
    m_modelTokenizer->setVisible(false);
    auto* field = new QHBoxLayout;
    field->setContentsMargins(0, 0, 0, 0);
    field->addWidget(m_tokenizerCombo, 1);
    field->addWidget(m_modelTokenizer, 1);
    row->addRow(tr("Tokenizer"), field);
    layout->addLayout(row);
    return box;
}

QWidget* RunSettingsPanel::buildVariantBox() {
    auto* box = new QGroupBox(tr("Attention variant"), m_content);
    auto* layout = new QVBoxLayout(box);
    m_variantCombo = new QComboBox(box);
    layout->addWidget(m_variantCombo);
    m_variantInfo = new QLabel(box);
    m_variantInfo->setTextFormat(Qt::PlainText);  // schema text is shown as data, never as HTML
    m_variantInfo->setWordWrap(true);
    m_variantInfo->setForegroundRole(QPalette::PlaceholderText);
    layout->addWidget(m_variantInfo);
    m_paramForm = new views::ParamForm(box);
    connect(m_paramForm, &views::ParamForm::notice, this, &RunSettingsPanel::notice);
    layout->addWidget(m_paramForm);
    return box;
}

QWidget* RunSettingsPanel::buildCompareBox() {
    // The compared variants are part of the request only while the Compare tab is shown, so the
    // other tabs do not pay for them.
    auto* box = new QGroupBox(tr("Compare with (Compare tab)"), m_content);
    auto* layout = new QVBoxLayout(box);
    m_compareEditor = new CompareVariantsEditor(box);
    layout->addWidget(m_compareEditor);
    return box;
}

QWidget* RunSettingsPanel::buildProjectionBox(const Initial& initial) {
    auto* box = new QGroupBox(tr("Q, K, V: seeded random projections"), m_content);
    m_projectionBox = box;  // hidden while a model layer supplies Q, K, V
    auto* layout = new QFormLayout(box);
    // (a value typed outside the range becomes the nearest allowed one, and the status bar says so)
    const auto clampingSpin = [this, box](const QString& field, int lo, int hi, int value) {
        auto* spin = new views::ClampingSpinBox(box);
        spin->setRange(lo, hi);
        spin->setValue(value);
        connect(spin, &views::ClampingSpinBox::clamped, this,
                [this, field](qlonglong typed, int used) { Q_EMIT notice(views::clampNotice(field, typed, used)); });
        return spin;
    };
    m_headsSpin = clampingSpin(tr("Heads"), 1, 64, initial.heads);
    m_headDimSpin = clampingSpin(tr("Head dim"), 1, 1024, initial.headDim);
    m_seedSpin = clampingSpin(tr("Seed"), 0, std::numeric_limits<int>::max(), initial.seed);
    layout->addRow(tr("Heads"), m_headsSpin);
    layout->addRow(tr("Head dim"), m_headDimSpin);
    layout->addRow(tr("Seed"), m_seedSpin);
    return box;
}

void RunSettingsPanel::addSourceWidget(QWidget* widget) {
    widget->setParent(m_content);
    m_contentLayout->addWidget(widget);
}

void RunSettingsPanel::showModelSource(bool model, const QString& tokenizerName) {
    m_tokenizerCombo->setEnabled(!model);
    for (QSpinBox* spin : {m_headsSpin, m_headDimSpin, m_seedSpin}) spin->setEnabled(!model);
    // What the run uses is what is shown: the model's tokenizer, heads and head dim (in the
    // source panel) rather than the column's settings, which stay for random projections.
    m_projectionBox->setVisible(!model);
    m_tokenizerCombo->setVisible(!model);
    m_modelTokenizer->setVisible(model);
    if (model) m_modelTokenizer->setText(tr("the model's own (%1)").arg(tokenizerName.isEmpty() ? tr("none") : tokenizerName));
}

engine::ProjectionSpec RunSettingsPanel::projection() const {
    engine::ProjectionSpec projection;
    projection.heads = m_headsSpin->value();
    projection.headDim = m_headDimSpin->value();
    projection.seed = static_cast<std::uint64_t>(m_seedSpin->value());
    return projection;
}

void RunSettingsPanel::fillRequest(engine::RunRequest& request) const {
    request.input.text = m_text->toPlainText().toStdString();
    request.input.tokenizer = static_cast<TokenizerKind>(m_tokenizerCombo->currentData().toInt());
    request.projection = projection();
}

}  // namespace attnscope::app
