#include "views/atlas/coverage_editor.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTextBlock>
#include <QVBoxLayout>

namespace attnscope::views {

CoverageEditor::CoverageEditor(QWidget* parent) : QWidget(parent) {
    setProperty("attnscopeExportSkip", true);  // FigurePainter::kSkipProperty: not in figures
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 0, 4, 2);
    layout->setSpacing(2);
    auto* head = new QHBoxLayout;
    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    m_note->setTextFormat(Qt::PlainText);
    head->addWidget(m_note, 1);
    m_automaticButton = new QPushButton(tr("Automatic"), this);
    m_automaticButton->setToolTip(tr("Forget the edited lines: the next analysis fits the catalog's settings to the input's length"));
    head->addWidget(m_automaticButton);
    layout->addLayout(head);
    m_edit = new QPlainTextEdit(this);
    m_edit->setObjectName(QStringLiteral("atlasCoverageSettings"));
    m_edit->setAccessibleName(tr("Coverage settings"));
    m_edit->setToolTip(tr("One setting per line: VARIANT or VARIANT:NAME=VALUE,NAME=VALUE (as attnscope-cli analyze --coverage).\n"
                          "Example: longformer:window=8"));
    m_edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_edit->setTabChangesFocus(true);
    // Four whole lines visible (the rest scroll): the lines, the document's margins and the frame.
    const int lines = 4 * m_edit->fontMetrics().height();  // (a plain text line is one font height)
    const int margins = static_cast<int>(2 * m_edit->document()->documentMargin()) + 2 * m_edit->frameWidth();
    m_edit->setFixedHeight(lines + margins);
    layout->addWidget(m_edit);
    m_problem = new QLabel(this);
    m_problem->setObjectName(QStringLiteral("atlasCoverageProblem"));
    m_problem->setTextFormat(Qt::PlainText);
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet(QStringLiteral("color: #c62828;"));
    m_problem->setVisible(false);
    layout->addWidget(m_problem);

    connect(m_edit, &QPlainTextEdit::textChanged, this, &CoverageEditor::onEdited);
    connect(m_automaticButton, &QPushButton::clicked, this, &CoverageEditor::resetToAutomatic);
    resetToAutomatic();
}

void CoverageEditor::showUsed(const std::vector<engine::CoverageSetting>& settings, std::int64_t n) {
    if (!m_automatic) return;
    QStringList lines;
    for (const auto& s : settings) lines << QString::fromStdString(engine::coverageSettingText(s));
    m_filling = true;
    m_edit->setPlainText(lines.join(QLatin1Char('\n')));
    m_filling = false;
    m_note->setText(n < engine::kCoverageReferenceLength
                        ? tr("Automatic: the catalog's settings, their windows, strides, blocks and k scaled to %1 tokens "
                             "(they are written for %2). Edit the lines to choose your own.")
                              .arg(n)
                              .arg(engine::kCoverageReferenceLength)
                        : tr("Automatic: the catalog's settings. Edit the lines to choose your own."));
}

std::optional<std::vector<engine::CoverageSetting>> CoverageEditor::settingsForNextRun() {
    showProblem(QString());
    if (m_automatic) return std::vector<engine::CoverageSetting>{};
    std::vector<engine::CoverageSetting> out;
    for (QTextBlock block = m_edit->document()->begin(); block.isValid(); block = block.next()) {
        const QString line = block.text().trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#'))) continue;
        auto parsed = engine::parseCoverageSetting(line.toStdString());
        if (!parsed) {
            QTextCursor cursor(block);
            cursor.select(QTextCursor::LineUnderCursor);
            m_edit->setTextCursor(cursor);
            showProblem(tr("Line %1: %2").arg(block.blockNumber() + 1).arg(QString::fromStdString(parsed.error().message)));
            return std::nullopt;
        }
        out.push_back(std::move(parsed.value()));
    }
    if (out.empty()) {
        showProblem(tr("No coverage setting: write at least one line, or press Automatic."));
        return std::nullopt;
    }
    return out;
}

void CoverageEditor::resetToAutomatic() {
    m_automatic = true;
    showProblem(QString());
    m_filling = true;
    m_edit->clear();
    m_filling = false;
    m_edit->setPlaceholderText(tr("The settings fitted to the input appear here after Analyze."));
    m_note->setText(tr("Automatic: the catalog's settings, fitted to the input's length when you press Analyze."));
    m_automaticButton->setEnabled(false);
}

QString CoverageEditor::problem() const { return m_problem->text(); }

QString CoverageEditor::note() const { return m_note->text(); }

void CoverageEditor::onEdited() {
    if (m_filling) return;
    if (m_automatic) {
        m_automatic = false;
        m_automaticButton->setEnabled(true);
        m_note->setText(tr("Edited: the next Analyze measures these lines (VARIANT:NAME=VALUE,… one per line)."));
    }
    showProblem(QString());
}

void CoverageEditor::showProblem(const QString& text) {
    m_problem->setText(text);
    m_problem->setVisible(!text.isEmpty());
    m_edit->setStyleSheet(text.isEmpty() ? QString() : QStringLiteral("QPlainTextEdit { border: 1px solid #c62828; }"));
}

}  // namespace attnscope::views
