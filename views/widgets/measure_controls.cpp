#include "views/widgets/measure_controls.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

#include <algorithm>

namespace attnscope::views {
namespace {

constexpr int kControlsWidth = 220;

}  // namespace

QVector<int> MeasureControls::parseSizes(const QString& text, const MeasureSizes& sizes, QString* error) {
    QVector<int> out;
    for (const QString& part : text.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int n = part.toInt(&ok);
        if (!ok || n < sizes.least || n > sizes.most) {
            if (error)
                *error = tr("“%1” is not %2: expected whole numbers from %3 to %4").arg(part, sizes.one).arg(sizes.least).arg(sizes.most);
            return {};
        }
        out << n;
    }
    if (out.isEmpty()) {
        if (error) *error = tr("no %1: type some, e.g. %2").arg(sizes.many, sizes.defaults);
        return {};
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

MeasureControls::MeasureControls(MeasureSizes sizes, QWidget* parent) : QWidget(parent), m_spec(std::move(sizes)) {
    setMaximumWidth(kControlsWidth);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    m_form = new QFormLayout;
    m_form->setRowWrapPolicy(QFormLayout::WrapAllRows);  // (a narrow column: each label above its field)
    m_sizes = new QLineEdit(m_spec.defaults, this);
    m_sizes->setObjectName(m_spec.objectName);
    m_sizes->setToolTip(m_spec.tip);
    connect(m_sizes, &QLineEdit::returnPressed, this, [this] {
        if (!m_running) Q_EMIT measureWanted();
    });
    connect(m_sizes, &QLineEdit::textEdited, this, [this] { m_error->clear(); });
    m_form->addRow(m_spec.label, m_sizes);
    column->addLayout(m_form);
    m_error = new QLabel(this);
    m_error->setObjectName(m_spec.objectName + QStringLiteral("Error"));
    m_error->setTextFormat(Qt::PlainText);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #b00020"));
    column->addWidget(m_error);
    auto* buttons = new QHBoxLayout;
    m_measure = new QPushButton(tr("Measure"), this);
    m_measure->setToolTip(m_spec.measureTip);
    connect(m_measure, &QPushButton::clicked, this, [this] {
        if (!m_running) Q_EMIT measureWanted();
    });
    m_cancel = new QPushButton(tr("Cancel"), this);
    connect(m_cancel, &QPushButton::clicked, this, &MeasureControls::cancelRequested);
    buttons->addWidget(m_measure);
    buttons->addWidget(m_cancel);
    column->addLayout(buttons);
    m_progress = new QProgressBar(this);
    column->addWidget(m_progress);
    m_status = new QLabel(this);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);
    column->addWidget(m_status);
    column->addStretch(1);
    updateControls();
}

QString MeasureControls::status() const { return m_status->text(); }

void MeasureControls::setStatus(const QString& text, const QString& tip) {
    m_status->setText(text);
    m_status->setToolTip(tip);
}

QVector<int> MeasureControls::sizes() {
    QString error;
    const QVector<int> out = parseSizes(m_sizes->text(), m_spec, &error);
    m_error->setText(out.isEmpty() ? error : QString());
    return out;
}

void MeasureControls::setStarted(int total) {
    m_running = true;
    m_progress->setRange(0, std::max(total, 1));
    m_progress->setValue(0);
    m_status->setText(tr("Measuring…"));
    updateControls();
}

void MeasureControls::setProgress(int done, int total, const QString& text) {
    m_progress->setRange(0, std::max(total, 1));
    m_progress->setValue(done);
    m_status->setText(text);
}

void MeasureControls::setFinished(const QString& message) {
    m_running = false;
    m_status->setText(message);
    updateControls();
}

void MeasureControls::updateControls() {
    m_measure->setEnabled(!m_running);
    m_cancel->setEnabled(m_running);
    m_progress->setVisible(m_running);
}

}  // namespace attnscope::views
