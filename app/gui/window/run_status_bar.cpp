#include "gui/window/run_status_bar.h"

#include "views/widgets/elided_label.h"
#include "views/widgets/notices_panel.h"

#include <attnscope/types.h>

#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QStatusBar>
#include <QTimer>
#include <QToolButton>

#include <algorithm>
#include <utility>

namespace attnscope::app {

RunStatusBar::RunStatusBar(QStatusBar* bar, views::NoticesPanel* notices, std::function<bool()> running, QObject* parent)
    : QObject(parent), m_notices(notices) {
    m_message = new views::ElidedLabel(bar);  // plain text: engine messages may quote user input
    m_noticesButton = new QToolButton(bar);
    m_noticesButton->setAutoRaise(true);
    m_noticesButton->setToolTip(tr("Every message of this session, whole (View ▸ Messages, Ctrl+Shift+L)"));
    m_noticesButton->setVisible(false);
    connect(m_noticesButton, &QToolButton::clicked, m_notices, [this] {
        m_notices->show();
        m_notices->raise();
    });
    connect(m_notices, &views::NoticesPanel::countChanged, this, [this](int count) {
        m_noticesButton->setText(tr("Messages (%1)").arg(count));
        m_noticesButton->setVisible(count > 0);
    });
    m_progress = new QProgressBar(bar);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(220);
    m_progress->setVisible(false);
    m_timeLabel = new QLabel(bar);
    m_timeLabel->setToolTip(tr("Wall time of the attention computation (no tokenizing, no projections)"));
    m_memoryLabel = new QLabel(bar);
    m_memoryLabel->setToolTip(tr("Peak bytes of engine-owned buffers during the run"));
    m_outOfDate = new QLabel(tr("<b>Out of date</b> — the views show the last run; press Run (F5)"), bar);
    m_outOfDate->setObjectName(QStringLiteral("outOfDate"));
    m_outOfDate->setToolTip(tr("The input, the variant or its parameters changed after the run the views show"));
    m_outOfDate->setVisible(false);
    for (QLabel* label : {static_cast<QLabel*>(m_message), m_timeLabel, m_memoryLabel, m_outOfDate})
        label->setContentsMargins(6, 0, 6, 0);
    bar->addWidget(m_message, 1);
    bar->addPermanentWidget(m_noticesButton);
    bar->addPermanentWidget(m_progress);
    bar->addPermanentWidget(m_timeLabel);
    bar->addPermanentWidget(m_memoryLabel);
    bar->addPermanentWidget(m_outOfDate);
    m_progressDelay = new QTimer(this);
    m_progressDelay->setSingleShot(true);
    m_progressDelay->setInterval(kProgressDelayMs);
    connect(m_progressDelay, &QTimer::timeout, this, [this, running = std::move(running)] {
        if (running()) m_progress->setVisible(true);
    });
}

void RunStatusBar::setMessage(const QString& text, const QString& details) {
    m_message->setText(text);
    // The whole message on hover (the bar shows one line of it), its details when it has them.
    const QString tip = details.isEmpty() ? text : text + QStringLiteral("\n\n") + details;
    m_message->setToolTip(
        tip.isEmpty() ? QString() : QStringLiteral("<p style='white-space:pre-wrap'>%1</p>").arg(tip.toHtmlEscaped()));
    m_notices->add(text, details);
}

QString RunStatusBar::message() const { return m_message->text(); }

void RunStatusBar::runStarted() {
    m_progress->setValue(0);
    m_progress->setVisible(false);
    m_progressDelay->start();
}

void RunStatusBar::runEnded() {
    m_progressDelay->stop();
    m_progress->setVisible(false);
}

void RunStatusBar::setProgress(int permille, const QString& stage) {
    m_progress->setValue(permille);
    m_progress->setFormat(tr("%1 %p%").arg(stage));
}

void RunStatusBar::setCounters(double seconds, std::uint64_t peakBytes) {
    m_timeLabel->setText(tr("attention %1").arg(formatSeconds(seconds)));
    m_memoryLabel->setText(
        tr("peak %1").arg(QLocale().formattedDataSize(static_cast<qint64>(peakBytes), 1, QLocale::DataSizeIecFormat)));
}

void RunStatusBar::setOutOfDate(bool outOfDate) { m_outOfDate->setVisible(outOfDate); }

bool RunStatusBar::outOfDate() const { return !m_outOfDate->isHidden(); }

QString RunStatusBar::formatSeconds(double seconds) {
    if (seconds < 1e-3) return tr("%1 µs").arg(seconds * 1e6, 0, 'f', 0);
    if (seconds < 1.0) return tr("%1 ms").arg(seconds * 1e3, 0, 'f', 1);
    return tr("%1 s").arg(seconds, 0, 'f', 2);
}

void RunStatusBar::showResult(const engine::RunResult& result) {
    double seconds = 0;
    std::uint64_t peak = 0;
    for (const auto& r : result.results) {
        seconds += r.counters.seconds;
        peak = std::max(peak, r.counters.peakBytes);
    }
    setCounters(seconds, peak);
    const QString tokenizer = QString::fromLatin1(engine::tokenizerName(result.input.kind));
    const QString summary = result.n == 1 ? tr("1 token (%1), %2 heads").arg(tokenizer).arg(result.heads)
                                          : tr("%1 tokens (%2), %3 heads").arg(result.n).arg(tokenizer).arg(result.heads);
    if (result.warnings.empty()) return setMessage(summary);
    QStringList warnings;
    for (const auto& w : result.warnings) warnings << QString::fromStdString(w);
    setMessage(tr("%1 — warning: %2").arg(summary, warnings.join(QStringLiteral("; "))), warnings.join(QLatin1Char('\n')));
}

}  // namespace attnscope::app
