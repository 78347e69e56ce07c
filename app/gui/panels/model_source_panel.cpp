#include "gui/panels/model_source_panel.h"

#include <QComboBox>
#include <QDir>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>

#include <algorithm>

namespace attnscope::app {

ModelSourcePanel::ModelSourcePanel(QWidget* parent) : QGroupBox(tr("Q, K, V source"), parent) {
    auto* layout = new QFormLayout(this);
    m_kind = new QComboBox(this);
    m_kind->addItem(tr("Random projections"), static_cast<int>(Kind::RandomProjections));
    m_kind->addItem(tr("Model layer"), static_cast<int>(Kind::ModelLayer));
    m_kind->setToolTip(
        tr("Random projections: seeded W_q, W_k, W_v on token embeddings.\n"
           "Model layer: the real Q, K, V of one layer of the opened model, on its own tokens."));
    // "Model layer" needs a model: disabled until one opened.
    if (auto* items = qobject_cast<QStandardItemModel*>(m_kind->model())) items->item(1)->setEnabled(false);
    layout->addRow(tr("Source"), m_kind);
    m_layer = new QSpinBox(this);
    m_layer->setRange(0, 0);
    m_layer->setEnabled(false);
    m_layer->setToolTip(tr("The model layer whose Q, K, V every view shows"));
    layout->addRow(tr("Layer"), m_layer);
    m_model = new QLabel(tr("No model open"), this);
    m_model->setTextFormat(Qt::PlainText);  // folder names are user data
    m_model->setWordWrap(true);
    m_open = new QPushButton(tr("Open Model…"), this);
    m_open->setToolTip(tr("A Hugging Face model folder: config.json, model.safetensors and tokenizer files"));
    // The description on a row of its own, the whole width: wrapped beside the button it was
    // given one line's height and cut at the top and bottom.
    layout->addRow(tr("Model"), m_open);
    layout->addRow(m_model);
    m_note = new QLabel(this);
    m_note->setTextFormat(Qt::PlainText);
    m_note->setWordWrap(true);
    m_note->setVisible(false);
    layout->addRow(m_note);

    connect(m_kind, &QComboBox::currentIndexChanged, this, [this] {
        m_layer->setEnabled(usesModel());
        Q_EMIT sourceChanged();
    });
    connect(m_layer, &QSpinBox::valueChanged, this, [this] {
        if (usesModel()) Q_EMIT sourceChanged();
    });
    connect(m_open, &QPushButton::clicked, this, &ModelSourcePanel::openRequested);
}

namespace {

// "GGUF (Q4_K, Q6_K)" for a quantized file: how the weights the figures come from are stored.
QString storageSummary(const engine::ModelInfo& info) {
    if (info.weightFormat != "GGUF") return QString();
    QStringList types;
    for (const auto& [type, count] : info.weightTypes)
        if (type != "F32") types << QString::fromStdString(type);
    return types.isEmpty() ? QStringLiteral(", GGUF") : QStringLiteral(", GGUF (%1)").arg(types.join(QStringLiteral(", ")));
}

// "Q4_K × 96, Q6_K × 17, F32 × 33": every type and its tensors, for the tooltip.
QString storageDetail(const engine::ModelInfo& info) {
    QStringList parts;
    for (const auto& [type, count] : info.weightTypes) parts << QStringLiteral("%1 × %2").arg(QString::fromStdString(type)).arg(count);
    return parts.join(QStringLiteral(", "));
}

}  // namespace

void ModelSourcePanel::setModel(const engine::ModelInfo& info) {
    const QSignalBlocker blockKind(m_kind);
    const QSignalBlocker blockLayer(m_layer);
    m_layers = static_cast<int>(info.layers);
    if (auto* items = qobject_cast<QStandardItemModel*>(m_kind->model())) items->item(1)->setEnabled(m_layers > 0);
    m_layer->setRange(0, std::max(0, m_layers - 1));
    const QString name = QDir(QString::fromStdString(info.folder)).dirName();
    m_model->setText(tr("%1 — %2, %3 layers × %4 heads of %5, %6 tokenizer%7")
                         .arg(name, QString::fromStdString(info.arch))
                         .arg(info.layers)
                         .arg(info.heads)
                         .arg(info.headDim)
                         .arg(info.tokenizer.empty() ? tr("no") : QString::fromStdString(info.tokenizer), storageSummary(info)));
    // Untrusted folder names: escaped inside markup, so the tooltip never renders them as HTML.
    m_model->setToolTip(QStringLiteral("<p style='white-space:pre'>%1</p>")
                            .arg(tr("%1\nhead dim %2, up to %3 tokens%4, tokenizer %5\nweights: %6 — %7")
                                     .arg(QString::fromStdString(info.folder), QString::number(info.headDim),
                                          QString::number(info.maxTokens), info.causal ? tr(", causal") : QString(),
                                          info.tokenizer.empty() ? tr("none") : QString::fromStdString(info.tokenizer),
                                          QString::fromStdString(info.weightFormat), storageDetail(info))
                                     .toHtmlEscaped()));
    QStringList warnings;
    for (const auto& w : info.warnings) warnings << QString::fromStdString(w);
    setNote(warnings.join(QLatin1Char('\n')));
    m_layer->setEnabled(usesModel());
}

ModelSourcePanel::Kind ModelSourcePanel::kind() const { return static_cast<Kind>(m_kind->currentData().toInt()); }

void ModelSourcePanel::setKind(Kind kind) {
    if (kind == Kind::ModelLayer && !hasModel()) return;
    m_kind->setCurrentIndex(m_kind->findData(static_cast<int>(kind)));
}

int ModelSourcePanel::layer() const { return m_layer->value(); }

void ModelSourcePanel::setLayer(int layer) { m_layer->setValue(layer); }

void ModelSourcePanel::setNote(const QString& text) {
    m_note->setText(text);
    m_note->setVisible(!text.isEmpty());
}

QString ModelSourcePanel::note() const { return m_note->text(); }

QString ModelSourcePanel::modelText() const { return m_model->text(); }

}  // namespace attnscope::app
