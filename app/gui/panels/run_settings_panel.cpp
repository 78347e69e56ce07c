#include "gui/panels/run_settings_panel.h"

#include "gui/settings/app_settings.h"

#include "gui/panels/compare_variants_editor.h"
#include "gui/panels/image_input_panel.h"
#include "gui/settings/param_json.h"
#include "gui/settings/session.h"
#include "gui/settings/session_resolve.h"

#include "views/widgets/clamping_spin_box.h"
#include "views/widgets/param_form.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
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
    m_buttons = buttons;
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
    auto* outer = new QVBoxLayout(box);
    m_textFields = new QWidget(box);
    auto* layout = new QVBoxLayout(m_textFields);
    layout->setContentsMargins(0, 0, 0, 0);
    m_text = new QPlainTextEdit(m_textFields);
    m_text->setPlainText(initial.text);
    m_text->setPlaceholderText(tr("Paste text here, then press Run (F5). Or open an image (File ▸ Open Image…)."));
    layout->addWidget(m_text, 1);
    auto* row = new QFormLayout;
    m_tokenizerCombo = new QComboBox(m_textFields);
    m_tokenizerCombo->addItem(QStringLiteral("words"), static_cast<int>(TokenizerKind::Words));
    m_tokenizerCombo->addItem(QStringLiteral("chars"), static_cast<int>(TokenizerKind::Chars));
    m_tokenizerCombo->addItem(QStringLiteral("bytes"), static_cast<int>(TokenizerKind::Bytes));
    m_tokenizerCombo->setCurrentIndex(std::max(0, m_tokenizerCombo->findText(initial.tokenizer)));
    m_tokenizerCombo->setToolTip(
        tr("words: runs of letters and digits, each punctuation mark alone; chars: code points; "
           "bytes: UTF-8 bytes"));
    // With a model the model's own tokenizer is named instead of the combo (which keeps the choice).
    m_modelTokenizer = new QLabel(m_textFields);
    m_modelTokenizer->setTextFormat(Qt::PlainText);
    m_modelTokenizer->setVisible(false);
    auto* field = new QHBoxLayout;
    field->setContentsMargins(0, 0, 0, 0);
    field->addWidget(m_tokenizerCombo, 1);
    field->addWidget(m_modelTokenizer, 1);
    row->addRow(tr("Tokenizer"), field);
    layout->addLayout(row);
    outer->addWidget(m_textFields, 1);
    m_imageInput = new ImageInputPanel(box);
    m_imageInput->setVisible(false);
    connect(m_imageInput, &ImageInputPanel::textRequested, this, &RunSettingsPanel::useText);
    connect(m_imageInput, &ImageInputPanel::changed, this, [this] {
        showImageGrid();
        Q_EMIT inputChanged();
    });
    outer->addWidget(m_imageInput);
    return box;
}

void RunSettingsPanel::useImage(const QImage& picture, const QString& name, const QString& path) {
    m_imageInput->setImage(picture, name, path);
    m_imageIsInput = true;
    m_textFields->setVisible(false);
    m_imageInput->setVisible(true);
    showImageGrid();
    Q_EMIT inputChanged();
}

void RunSettingsPanel::showImageGrid() {
    const auto grid = m_imageIsInput ? m_imageInput->gridShape() : std::nullopt;
    m_paramForm->setImageGrid(grid);
    m_compareEditor->setImageGrid(grid);
}

void RunSettingsPanel::applyImageSettings(const SessionState& session) {
    m_imageInput->applySettings(session);
    showImageGrid();
    Q_EMIT inputChanged();
}

void RunSettingsPanel::useText() {
    m_imageIsInput = false;
    m_imageInput->setVisible(false);
    m_textFields->setVisible(true);
    showImageGrid();
    Q_EMIT inputChanged();
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
    connect(m_variantCombo, &QComboBox::currentIndexChanged, this, &RunSettingsPanel::showChosenVariant);
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

void RunSettingsPanel::addBesideRun(QWidget* button) {
    button->setParent(this);
    m_buttons->insertWidget(1, button, 1);
}

void RunSettingsPanel::scrollTo(QWidget* widget) {
    if (auto* scroll = findChild<QScrollArea*>()) scroll->ensureWidgetVisible(widget, 0, 0);
}

void RunSettingsPanel::addSourceWidget(QWidget* widget) {
    widget->setParent(m_content);
    m_contentLayout->addWidget(widget);
}

void RunSettingsPanel::showModelSource(bool model, const QString& tokenizerName, const std::optional<engine::GridShape>& imageGrid) {
    m_imageInput->setModelGrid(model ? imageGrid : std::nullopt);
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

void RunSettingsPanel::captureInto(AppSettings& settings) const {
    settings.tokenizer = m_tokenizerCombo->currentText();
    settings.variantId = variantId();
    settings.heads = m_headsSpin->value();
    settings.headDim = m_headDimSpin->value();
    settings.seed = m_seedSpin->value();
}

void RunSettingsPanel::fillRequest(engine::RunRequest& request) const {
    engine::InputSpec input;
    input.text = m_text->toPlainText().toStdString();
    input.tokenizer = static_cast<TokenizerKind>(m_tokenizerCombo->currentData().toInt());
    if (m_imageIsInput) input.image = m_imageInput->spec();
    request.source = std::move(input);
    request.projection = projection();
}

void RunSettingsPanel::setVariants(const std::vector<engine::VariantInfo>& variants) {
    m_variants = variants;
    {
        const QSignalBlocker block(m_variantCombo);  // one showChosenVariant below, not one per item
        m_variantCombo->clear();
        for (const auto& v : m_variants) {
            m_variantCombo->addItem(QString::fromStdString(v.name), QString::fromStdString(v.id));
            m_variantCombo->setItemData(m_variantCombo->count() - 1, QString::fromStdString(v.summary), Qt::ToolTipRole);
        }
        m_variantCombo->setCurrentIndex(std::max(0, m_variantCombo->findData(m_preferredVariant)));
    }
    if (m_ownSummaries) {  // (a model layer was the source when the list came)
        const auto summaries = m_ownSummaries;
        m_ownSummaries.reset();
        setOwnAttention(summaries);
    }
    showChosenVariant();
}

const QString& RunSettingsPanel::ownAttentionId() {
    static const QString id = QStringLiteral("@own");
    return id;
}

void RunSettingsPanel::setOwnAttention(const std::optional<std::vector<QString>>& summaries) {
    m_ownSummaries = summaries;
    const int at = m_variantCombo->findData(ownAttentionId());
    if (summaries && at < 0) {
        const QSignalBlocker block(m_variantCombo);  // (the window chooses it when a model opens)
        m_variantCombo->insertItem(0, tr("The model's own attention"), ownAttentionId());
        m_variantCombo->setItemData(0, tr("Exactly what the layer's forward computes: its window, bias, memory and "
                                          "causality. Choose a variant below it to run that variant on the layer's Q/K."),
                                    Qt::ToolTipRole);
        m_variantCombo->insertSeparator(1);
    } else if (!summaries && at >= 0) {
        const bool chosen = m_variantCombo->currentIndex() == at;
        {
            const QSignalBlocker block(m_variantCombo);
            m_variantCombo->removeItem(at + 1);  // the separator
            m_variantCombo->removeItem(at);
            if (chosen) m_variantCombo->setCurrentIndex(std::max(0, m_variantCombo->findData(m_preferredVariant)));
        }
        if (chosen) showChosenVariant();
        return;
    }
    if (ownAttentionChosen()) showChosenVariant();  // another model's words
}

void RunSettingsPanel::chooseOwnAttention() {
    const int at = m_variantCombo->findData(ownAttentionId());
    if (at < 0) return;
    if (m_variantCombo->currentIndex() == at)
        showChosenVariant();
    else
        m_variantCombo->setCurrentIndex(at);
}

bool RunSettingsPanel::ownAttentionChosen() const { return m_variantCombo->currentData().toString() == ownAttentionId(); }

void RunSettingsPanel::setOwnAttentionLayer(int layer) {
    m_ownLayer = layer;
    if (ownAttentionChosen()) showChosenVariant();
}

void RunSettingsPanel::showChosenVariant() {
    const QString id = m_variantCombo->currentData().toString();
    if (id == ownAttentionId()) {
        const auto& summaries = m_ownSummaries ? *m_ownSummaries : std::vector<QString>{};
        const QString summary = m_ownLayer >= 0 && m_ownLayer < static_cast<int>(summaries.size())
                                    ? summaries[static_cast<std::size_t>(m_ownLayer)]
                                    : QString();
        m_variantInfo->setText(tr("Layer %1 as the model computes it: %2.\nA variant chosen instead runs on this layer's Q/K.")
                                   .arg(m_ownLayer)
                                   .arg(summary));
        m_paramForm->setVariant({});
        m_paramForm->setVisible(false);  // (it would say "no parameters": the layer's are its own)
        Q_EMIT variantShown();
        return;
    }
    m_paramForm->setVisible(true);
    const auto it = std::find_if(m_variants.begin(), m_variants.end(),
                                 [&](const auto& v) { return QString::fromStdString(v.id) == id; });
    if (it == m_variants.end()) {
        m_variantInfo->clear();
        m_paramForm->setVariant({});
        return;
    }
    m_variantInfo->setText(QString::fromStdString(it->summary) + QLatin1Char('\n') + QString::fromStdString(it->paper));
    m_paramForm->setVariant(*it);
    Q_EMIT variantShown();
}

QString RunSettingsPanel::variantId() const {
    const QString id = m_variantCombo->currentData().toString();
    return id.isEmpty() ? m_preferredVariant : id;
}

engine::VariantRequest RunSettingsPanel::variantRequest() const {
    engine::VariantRequest variant;
    variant.id = variantId().toStdString();
    variant.params = m_paramForm->values();
    return variant;
}

QStringList RunSettingsPanel::markInvalidParams(bool compared) {
    // Every list that does not parse is marked under its field at once, not one per Run; the
    // compared variants' fields too, whether or not this run compares (a later one will).
    const auto mark = [this](views::ParamForm* form) {
        form->clearFieldNotes();
        const QStringList names = form->invalidParams();
        for (const QString& name : names) form->setFieldNote(name, tr("Expected comma-separated numbers, e.g. 0, 7."));
        return names;
    };
    QStringList invalid = mark(m_paramForm);
    for (int row = 0; row < m_compareEditor->rowCount(); ++row) mark(m_compareEditor->form(row));
    if (compared) invalid += m_compareEditor->invalidParams();
    return invalid;
}

void RunSettingsPanel::captureInto(SessionState& session) const {
    session.text = m_text->toPlainText();
    session.tokenizer = m_tokenizerCombo->currentText();
    session.seed = m_seedSpin->value();
    session.heads = m_headsSpin->value();
    session.headDim = m_headDimSpin->value();
    session.variantId = variantId();
    session.params = paramsToJson(m_paramForm->values());
    session.compare.clear();
    for (const engine::VariantRequest& row : m_compareEditor->requests())
        session.compare.append({QString::fromStdString(row.id), paramsToJson(row.params)});
    if (m_imageIsInput) m_imageInput->captureInto(session);
}

QString RunSettingsPanel::applySession(const SessionState& session, const ResolvedSession& resolved) {
    const int tokenizer = m_tokenizerCombo->findText(session.tokenizer);
    if (tokenizer < 0) return tr("The session's tokenizer \"%1\" is unknown. Nothing was changed.").arg(session.tokenizer);
    m_text->setPlainText(session.text);
    m_tokenizerCombo->setCurrentIndex(tokenizer);
    m_seedSpin->setValue(session.seed);
    m_headsSpin->setValue(session.heads);
    m_headDimSpin->setValue(session.headDim);
    if (resolved.variant) {
        m_preferredVariant = session.variantId;
        m_variantCombo->setCurrentIndex(m_variantCombo->findData(session.variantId));
        m_paramForm->setVariant(*resolved.variant);  // schema defaults first, so omitted parameters are not left over
        m_paramForm->setValues(resolved.params);
    } else {
        chooseOwnAttention();  // (offered once the session's model is the source)
    }
    std::vector<engine::VariantRequest> rows;
    for (const auto& [info, params] : resolved.compared) rows.push_back({info->id, params});
    m_compareEditor->setRows(rows);
    return {};
}

}  // namespace attnscope::app
