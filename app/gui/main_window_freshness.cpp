// Whether the views still show what the inputs say: any edit after a run (text, tokenizer, heads,
// head size, seed, Q/K/V source, variant, its parameters) marks the shown result out of date in
// the status bar until the next run.

#include "gui/main_window.h"
#include "gui/run_status_bar.h"
#include "gui/run_settings_panel.h"

#include "gui/model_source.h"
#include "gui/model_source_panel.h"
#include "views/param_form.h"

#include <attnscope/variant_info.h>

#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QStatusBar>

namespace attnscope::app {

QString MainWindow::inputSignature() const {
    QStringList parts;
    parts << m_inputs->text()->toPlainText() << m_inputs->tokenizerCombo()->currentData().toString()
          << QString::number(m_inputs->headsSpin()->value()) << QString::number(m_inputs->headDimSpin()->value())
          << QString::number(m_inputs->seedSpin()->value()) << QString::number(static_cast<int>(m_sourcePanel->kind()))
          << QString::number(m_sourcePanel->layer()) << (m_modelSource ? m_modelSource->folder() : QString()) << m_inputs->variantCombo()->currentData().toString();
    for (const auto& [name, value] : m_inputs->paramForm()->values())
        parts << QString::fromStdString(name + "=" + engine::formatParamValue(value));
    return parts.join(QChar(0x1F));
}

void MainWindow::buildFreshnessMark() {
    const auto check = [this] { uiUpdateFreshness(); };
    connect(m_inputs->text(), &QPlainTextEdit::textChanged, this, check);
    connect(m_inputs->tokenizerCombo(), &QComboBox::currentIndexChanged, this, check);
    connect(m_inputs->variantCombo(), &QComboBox::currentIndexChanged, this, check);
    for (QSpinBox* spin : {m_inputs->headsSpin(), m_inputs->headDimSpin(), m_inputs->seedSpin()}) connect(spin, &QSpinBox::valueChanged, this, check);
    connect(m_inputs->paramForm(), &views::ParamForm::valuesChanged, this, check);
    connect(m_sourcePanel, &ModelSourcePanel::sourceChanged, this, check);
}

void MainWindow::uiUpdateFreshness() {
    if (!m_status) return;
    m_status->setOutOfDate(m_result && !m_shownSignature.isEmpty() && inputSignature() != m_shownSignature);
}

bool MainWindow::resultOutOfDate() const { return m_status && m_status->outOfDate(); }

}  // namespace attnscope::app
