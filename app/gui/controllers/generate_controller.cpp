#include "gui/controllers/generate_controller.h"

#include "gui/engine/engine_runner.h"
#include "gui/controllers/model_controller.h"
#include "gui/panels/model_source_panel.h"
#include "gui/panels/run_settings_panel.h"

#include <attnscope/model.h>

#include <QAction>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>

#include <cmath>
#include <utility>

namespace attnscope::app {

namespace {

// Between two runs shown while writing: a redraw of the heatmap and the heads strip takes tens of
// milliseconds beside the writing thread on a two-core machine.
constexpr int kLiveRunInterval = 200;

// "‘ fox’ looked most at ‘ brown’ 41 %, ‘ quick’ 22 %, ‘The’ 9 %": what the model attended to when it
// wrote the token (the watched layer's row, mean over heads).
QString lookedAtText(const engine::GeneratedToken& token) {
    if (token.strongest.empty()) return {};
    QStringList parts;
    for (const auto& s : token.strongest)
        parts << QStringLiteral("‘%1’ %2 %").arg(QString::fromStdString(s.text)).arg(std::lround(100.0 * s.weight));
    return GenerateController::tr("‘%1’ looked most at %2").arg(QString::fromStdString(token.text), parts.join(QStringLiteral(", ")));
}

}  // namespace

GenerateController::GenerateController(EngineRunner* runner, RunSettingsPanel* inputs, ModelController* models, QObject* parent)
    : QObject(parent), m_runner(runner), m_inputs(inputs), m_models(models) {
    buildBox();
    m_liveTimer = new QTimer(this);
    m_liveTimer->setSingleShot(true);
    m_liveTimer->setInterval(kLiveRunInterval);
    connect(m_liveTimer, &QTimer::timeout, this, &GenerateController::emitLiveRun);
    m_action = new QAction(tr("&Generate"), this);
    m_action->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    m_action->setToolTip(tr("Continue the input text with the open model (Ctrl+G; Esc stops)"));
    connect(m_action, &QAction::triggered, this, &GenerateController::start);
    connect(m_button, &QPushButton::clicked, this, &GenerateController::start);
    // the text edited: the written sequence is no longer what the window shows
    connect(m_inputs->text(), &QPlainTextEdit::textChanged, this, [this] {
        if (!isGenerating()) m_models->clearGeneratedIds();
    });
    modelChanged(nullptr);
}

void GenerateController::buildBox() {
    m_box = new QGroupBox(tr("Generate"));
    auto* layout = new QVBoxLayout(m_box);
    auto* form = new QFormLayout;
    m_maxTokens = new QSpinBox(m_box);
    m_maxTokens->setRange(1, 4096);
    m_maxTokens->setValue(32);
    m_maxTokens->setToolTip(tr("Tokens the model writes at most (it stops earlier at its end-of-text token)"));
    m_temperature = new QDoubleSpinBox(m_box);
    m_temperature->setRange(0.0, 100.0);
    m_temperature->setSingleStep(0.1);
    m_temperature->setDecimals(2);
    m_temperature->setSpecialValueText(tr("0 (greedy)"));
    m_temperature->setToolTip(tr("0: always the most likely token; above 0: drawn from softmax(logits / T), the seed's draws"));
    m_topK = new QSpinBox(m_box);
    m_topK->setRange(0, 1 << 20);
    m_topK->setSpecialValueText(tr("all"));
    m_topK->setToolTip(tr("Sample among the K most likely tokens only"));
    m_seed = new QSpinBox(m_box);
    m_seed->setRange(0, 1 << 30);
    auto* sampling = new QHBoxLayout;
    sampling->addWidget(m_temperature, 1);
    sampling->addWidget(new QLabel(tr("top-k"), m_box));
    sampling->addWidget(m_topK, 1);
    form->addRow(tr("New tokens"), m_maxTokens);
    form->addRow(tr("Temperature"), sampling);
    form->addRow(tr("Seed"), m_seed);
    layout->addLayout(form);
    m_button = new QPushButton(tr("Generate"));  // (beside Run: RunSettingsPanel::addBesideRun)
    m_button->setToolTip(tr("Continue the input text with the open model (Ctrl+G; Esc stops)"));
    m_written = new QPlainTextEdit(m_box);
    m_written->setReadOnly(true);
    m_written->setPlaceholderText(tr("The tokens the model writes appear here."));
    m_written->setMaximumHeight(90);
    layout->addWidget(m_written);
    m_looked = new QLabel(m_box);
    m_looked->setWordWrap(true);
    m_looked->setToolTip(tr("The newest token's attention in the shown layer, mean over its heads: what the model looked at when "
                            "it wrote it (the row of the token before it)"));
    m_looked->hide();
    layout->addWidget(m_looked);
    m_note = new QLabel(m_box);
    m_note->setWordWrap(true);
    layout->addWidget(m_note);
}

void GenerateController::modelChanged(const engine::ModelInfo* info) {
    m_modelGenerates = info && info->generates;
    m_note->setText(!info ? tr("Open a model (File ▸ Open Model… or Open GGUF Model…) to generate with it.")
                    : m_modelGenerates ? QString()
                                       : tr("%1 models do not generate here yet.").arg(QString::fromStdString(info->familyName)));
    m_note->setVisible(!m_note->text().isEmpty());
    updateEnabled();
}

void GenerateController::updateEnabled() {
    m_button->setEnabled(m_modelGenerates && !isGenerating());
    m_action->setEnabled(m_modelGenerates && !isGenerating());
    m_button->setText(isGenerating() ? tr("Generating…") : tr("Generate"));
}

void GenerateController::start() {
    if (!m_modelGenerates || isGenerating()) return;
    engine::GenerateRequest request;
    request.prompt = m_inputs->text()->toPlainText().toStdString();
    if (request.prompt.empty()) {
        Q_EMIT report(tr("Type a prompt in the input box first: the model continues it."));
        return;
    }
    request.maxNewTokens = m_maxTokens->value();
    request.temperature = m_temperature->value();
    request.topK = m_topK->value();
    request.seed = static_cast<std::uint64_t>(m_seed->value());
    request.watchLayer = m_models->panel()->layer();  // the layer the window shows
    request.liveResults = true;
    m_written->clear();
    m_looked->clear();
    m_inputs->scrollTo(m_box);  // (below the model's settings: the text it writes in view)
    m_pendingLive.reset();
    m_promptLength = 0;
    const quint64 job = ++m_job;
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    m_cancel = cancel;
    updateEnabled();
    Q_EMIT busyChanged();
    Q_EMIT report(tr("Generating up to %1 tokens…").arg(request.maxNewTokens));
    QPointer<GenerateController> self(this);
    m_runner->postTask([self, job, cancel, request](EngineBackend& backend) {
        // Esc during the prompt's pass cancels; once tokens are written it stops and keeps them
        auto written = std::make_shared<bool>(false);
        auto result = backend.generate(
            request,
            [self, job, cancel, written](const engine::GeneratedToken& token) {
                *written = true;
                const QString text = QString::fromStdString(token.text);
                const QString looked = lookedAtText(token);
                QMetaObject::invokeMethod(
                    self, [self, job, text, looked, soFar = token.soFar] { if (self) self->uiAppend(job, text, looked, soFar); },
                    Qt::QueuedConnection);
                return !cancel->load();
            },
            [cancel, written](const engine::Progress&) { return *written || !cancel->load(); });
        if (result) {
            auto done = std::make_shared<engine::GenerateResult>(std::move(result.value()));
            QMetaObject::invokeMethod(self, [self, job, done] { if (self) self->uiFinished(job, *done); }, Qt::QueuedConnection);
        } else {
            const QString message = QString::fromStdString(result.error().message);
            const bool cancelled = result.error().code == engine::ErrorCode::Cancelled;
            QMetaObject::invokeMethod(self, [self, job, message, cancelled] { if (self) self->uiFailed(job, message, cancelled); },
                                      Qt::QueuedConnection);
        }
        return false;
    });
}

void GenerateController::cancel() {
    if (m_cancel) m_cancel->store(true);
}

void GenerateController::uiAppend(quint64 job, const QString& text, const QString& looked,
                                  std::shared_ptr<const engine::RunResult> soFar) {
    if (job != m_job) return;
    if (soFar) {
        if (m_promptLength == 0) m_promptLength = soFar->n;  // (the first token was written from the prompt's last row)
        m_pendingLive = std::move(soFar);
        if (!m_liveTimer->isActive()) emitLiveRun();  // (the first at once, then one per interval)
    }
    m_written->moveCursor(QTextCursor::End);
    m_written->insertPlainText(text);
    m_written->ensureCursorVisible();
    m_looked->setText(looked);
    if (!looked.isEmpty() && m_looked->isHidden()) {
        m_looked->show();
        // (the first token's line: the box grew under the fold; scrolled once it is laid out)
        QTimer::singleShot(0, m_looked, [this] { m_inputs->scrollTo(m_looked); });
    }
    if (looked.isEmpty()) m_looked->hide();
}

void GenerateController::emitLiveRun() {
    if (!m_pendingLive || !isGenerating()) return;
    m_liveTimer->start();
    QVector<int> written;
    for (std::int64_t i = m_promptLength; i < m_pendingLive->n; ++i) written.push_back(static_cast<int>(i));
    Q_EMIT liveRun(std::exchange(m_pendingLive, nullptr), written);
}

void GenerateController::uiFinished(quint64 job, const engine::GenerateResult& result) {
    if (job != m_job) return;
    m_liveTimer->stop();
    m_pendingLive.reset();  // (the run on the whole sequence follows)
    m_cancel.reset();
    updateEnabled();
    Q_EMIT busyChanged();
    const QString why = result.stoppedAtEos ? tr(" (end of text)") : result.stoppedByCaller ? tr(" (stopped)") : QString();
    Q_EMIT report(tr("Wrote %1 tokens in %2 s (%3 tokens/s) after the prompt's %4 tokens%5; showing the attention of the whole sequence.")
                      .arg(result.generatedIds.size())
                      .arg(result.generateSeconds, 0, 'f', 1)
                      .arg(result.generateSeconds > 0 ? static_cast<double>(result.generatedIds.size()) / result.generateSeconds : 0.0, 0, 'f', 1)
                      .arg(result.promptIds.size())
                      .arg(why));
    if (result.generatedIds.empty()) return;
    std::vector<std::int64_t> ids = result.promptIds;
    ids.insert(ids.end(), result.generatedIds.begin(), result.generatedIds.end());
    m_writtenTokens.clear();
    for (std::size_t i = result.promptIds.size(); i < ids.size(); ++i) m_writtenTokens.push_back(static_cast<int>(i));
    m_models->setGeneratedIds(std::move(ids));
    Q_EMIT runRequested();
}

void GenerateController::uiFailed(quint64 job, const QString& message, bool cancelled) {
    if (job != m_job) return;
    m_liveTimer->stop();
    m_pendingLive.reset();
    m_cancel.reset();
    updateEnabled();
    Q_EMIT busyChanged();
    Q_EMIT report(cancelled ? tr("Generation stopped.") : tr("Generation failed: %1").arg(message));
}

QVector<int> GenerateController::takeWrittenTokens() {
    QVector<int> out;
    out.swap(m_writtenTokens);
    return out;
}

}  // namespace attnscope::app
