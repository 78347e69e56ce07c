#include "gui/panels/compare_variants_editor.h"

#include "views/compare/compare_view.h"
#include "views/widgets/param_form.h"

#include "common/variant_flags.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace attnscope::app {

static_assert(CompareVariantsEditor::kMaxRows + 1 == views::CompareView::kMaxPanes,
              "the main variant plus every compared row must fit the compare view's panes");

CompareVariantsEditor::CompareVariantsEditor(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_rowsLayout = new QVBoxLayout;
    m_rowsLayout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(m_rowsLayout);
    m_add = new QPushButton(tr("Add variant"), this);
    m_add->setToolTip(tr("Compare up to 4 variants on the same Q, K, V"));
    layout->addWidget(m_add, 0, Qt::AlignLeft);
    connect(m_add, &QPushButton::clicked, this, [this] { addRow(); });
    addRow();
}

CompareVariantsEditor::~CompareVariantsEditor() = default;

QComboBox* CompareVariantsEditor::combo(int row) const {
    return row >= 0 && row < rowCount() ? m_rows[static_cast<std::size_t>(row)].combo : nullptr;
}

views::ParamForm* CompareVariantsEditor::form(int row) const {
    return row >= 0 && row < rowCount() ? m_rows[static_cast<std::size_t>(row)].form : nullptr;
}

void CompareVariantsEditor::fillCombo(QComboBox* combo, const QString& id) {
    const QSignalBlocker block(combo);
    combo->clear();
    for (const auto& v : m_variants) {
        combo->addItem(QString::fromStdString(v.name), QString::fromStdString(v.id));
        combo->setItemData(combo->count() - 1, QString::fromStdString(v.summary), Qt::ToolTipRole);
    }
    const int index = combo->findData(id);
    combo->setCurrentIndex(index >= 0 ? index : std::min(1, combo->count() - 1));
}

void CompareVariantsEditor::showVariant(const Row& row) {
    const QString id = row.combo->currentData().toString();
    const auto it = std::find_if(m_variants.begin(), m_variants.end(),
                                 [&](const auto& v) { return QString::fromStdString(v.id) == id; });
    if (it == m_variants.end()) {
        row.info->clear();
        row.form->setVariant({});
        return;
    }
    row.info->setText(QString::fromStdString(it->summary));
    row.form->setVariant(*it);
    Q_EMIT rowVariantShown(row.form);
}

bool CompareVariantsEditor::addRow(const QString& id) {
    if (rowCount() >= kMaxRows) return false;
    Row row;
    row.box = new QWidget(this);
    auto* boxLayout = new QVBoxLayout(row.box);
    boxLayout->setContentsMargins(0, 0, 0, 0);
    auto* top = new QHBoxLayout;
    row.combo = new QComboBox(row.box);
    // As narrow as the column: sized to its longest variant name it widened the settings column
    // past the screen (a 1366-pixel screen clipped every field).
    row.combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    row.combo->setMinimumContentsLength(12);
    top->addWidget(row.combo, 1);
    row.remove = new QToolButton(row.box);
    row.remove->setText(QStringLiteral("−"));
    row.remove->setToolTip(tr("Remove this variant from the comparison"));
    row.remove->setVisible(rowCount() > 0);  // row 0 stays: a comparison needs two variants
    top->addWidget(row.remove);
    boxLayout->addLayout(top);
    row.info = new QLabel(row.box);
    row.info->setTextFormat(Qt::PlainText);  // schema text is data, never HTML
    row.info->setWordWrap(true);
    row.info->setForegroundRole(QPalette::PlaceholderText);
    boxLayout->addWidget(row.info);
    row.form = new views::ParamForm(row.box);
    row.form->setImageGrid(m_imageGrid);
    boxLayout->addWidget(row.form);
    m_rowsLayout->addWidget(row.box);

    // A new row shows a variant not compared yet, so "Add" gives a new pane at once.
    QString chosen = id;
    if (chosen.isEmpty()) {
        const QStringList taken = ids();
        for (const auto& v : m_variants) {
            const QString candidate = QString::fromStdString(v.id);
            if (!taken.contains(candidate) && !v.exact) {
                chosen = candidate;
                break;
            }
        }
    }
    fillCombo(row.combo, chosen);
    QComboBox* combo = row.combo;
    connect(combo, &QComboBox::currentIndexChanged, this, [this, combo] {
        for (const Row& r : m_rows)
            if (r.combo == combo) showVariant(r);
        Q_EMIT changed();
    });
    QWidget* box = row.box;
    connect(row.remove, &QToolButton::clicked, this, [this, box] {
        for (int i = 0; i < rowCount(); ++i)
            if (m_rows[static_cast<std::size_t>(i)].box == box) removeRow(i);
    });
    m_rows.push_back(row);
    showVariant(m_rows.back());
    updateButtons();
    Q_EMIT changed();
    return true;
}

bool CompareVariantsEditor::removeRow(int index) {
    if (index < 1 || index >= rowCount()) return false;
    const Row row = m_rows[static_cast<std::size_t>(index)];
    m_rows.erase(m_rows.begin() + index);
    row.box->hide();
    row.box->deleteLater();  // NOTE: the click that asked for this comes from inside the box
    updateButtons();
    Q_EMIT changed();
    return true;
}

void CompareVariantsEditor::updateButtons() { m_add->setEnabled(rowCount() < kMaxRows); }

void CompareVariantsEditor::setVariants(const std::vector<engine::VariantInfo>& variants, const QString& preferred) {
    m_variants = variants;
    for (int i = 0; i < rowCount(); ++i) {
        Row& row = m_rows[static_cast<std::size_t>(i)];
        QString id = row.combo->currentData().toString();
        if (i == 0 && !preferred.isEmpty()) id = preferred;
        fillCombo(row.combo, id);
        showVariant(row);
    }
    Q_EMIT changed();
}

QStringList CompareVariantsEditor::ids() const {
    QStringList out;
    for (const Row& row : m_rows)
        if (!row.combo->currentData().toString().isEmpty()) out << row.combo->currentData().toString();
    return out;
}

std::vector<engine::VariantRequest> CompareVariantsEditor::requests() const {
    std::vector<engine::VariantRequest> out;
    for (const Row& row : m_rows) {
        const QString id = row.combo->currentData().toString();
        if (id.isEmpty()) continue;
        out.push_back({id.toStdString(), row.form->values()});
    }
    return out;
}

void CompareVariantsEditor::setRows(const std::vector<engine::VariantRequest>& rows) {
    const int wanted = std::clamp(static_cast<int>(rows.size()), 1, kMaxRows);
    while (rowCount() > wanted) removeRow(rowCount() - 1);
    for (int i = 0; i < static_cast<int>(rows.size()) && i < kMaxRows; ++i) {
        const QString id = QString::fromStdString(rows[static_cast<std::size_t>(i)].id);
        if (i >= rowCount()) addRow(id);
        const Row& row = m_rows[static_cast<std::size_t>(i)];
        const int index = row.combo->findData(id);
        if (index >= 0) row.combo->setCurrentIndex(index);
        showVariant(row);  // the schema's defaults, so no value of the row's previous use is left
        row.form->setValues(rows[static_cast<std::size_t>(i)].params);
    }
}

QStringList CompareVariantsEditor::invalidParams() const {
    QStringList out;
    for (int i = 0; i < rowCount(); ++i)
        for (const QString& name : m_rows[static_cast<std::size_t>(i)].form->invalidParams())
            out << (i == 0 ? name : tr("compared variant %1: %2").arg(i + 1).arg(name));
    return out;
}

void CompareVariantsEditor::setImageGrid(const std::optional<engine::GridShape>& grid) {
    m_imageGrid = grid;
    for (const Row& row : m_rows) row.form->setImageGrid(grid);
}

QStringList CompareVariantsEditor::applyParamTexts(const QStringList& texts) {
    const std::string firstId = combo(0)->currentData().toString().toStdString();
    std::map<std::string, QStringList> byId;
    for (const QString& text : texts) {
        const CompareParam param = splitCompareParam(text.toStdString(), firstId);
        byId[param.id] << QString::fromStdString(param.assignment);
    }
    QStringList errors;
    for (int row = 0; row < rowCount(); ++row) {
        const auto it = byId.find(combo(row)->currentData().toString().toStdString());
        if (it == byId.end()) continue;
        errors += form(row)->applyTexts(it->second);
        byId.erase(it);
    }
    return errors;
}

}  // namespace attnscope::app
