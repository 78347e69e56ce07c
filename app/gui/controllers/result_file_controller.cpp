#include "gui/controllers/result_file_controller.h"

#include <attnscope/result_file.h>

#include <QAction>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFile>
#include <QFileInfo>
#include <QKeySequence>
#include <QLocale>
#include <QMenu>
#include <QThread>

namespace attnscope::app {

struct ResultFileController::Outcome {
    engine::Result<std::shared_ptr<const engine::RunResult>> result = engine::makeError(engine::ErrorCode::Internal, "not read");
    double seconds = 0;
};

ResultFileController::ResultFileController(QWidget* window) : QObject(window), m_window(window) {}

ResultFileController::~ResultFileController() {
    if (m_reader) m_reader->wait();  // (it touches only its Outcome, which it shares)
}

void ResultFileController::addAction(QMenu* fileMenu) {
    QAction* open = fileMenu->addAction(tr("Open &Result…"), this, &ResultFileController::openInteractive);
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    open->setToolTip(tr("Show a result file written by attnscope-cli run or File ▸ Export Data: its heads, weights and "
                        "patterns, recomputed from the file's q and k as you look (any length; a million tokens too)"));
}

void ResultFileController::openInteractive() {
    const QString path = QFileDialog::getOpenFileName(m_window, tr("Open Result"), m_folder, tr("AttnScope results (*.safetensors)"));
    if (!path.isEmpty()) open(path);
}

std::optional<QString> ResultFileController::openPath(const QString& path) {
    if (!path.endsWith(QLatin1String(".safetensors"), Qt::CaseInsensitive) || !engine::isResultFile(path.toStdString()))
        return std::nullopt;
    open(path);
    return QString();
}

void ResultFileController::open(const QString& path) {
    const QString name = QFileInfo(path).fileName();
    if (m_reader) {
        Q_EMIT openFailed(tr("Cannot open %1 yet: another result file is still being read.").arg(name));
        return;
    }
    m_folder = QFileInfo(path).absolutePath();
    Q_EMIT opening(tr("Opening the result %1…").arg(name));
    auto outcome = std::make_shared<Outcome>();
    m_outcome = outcome;
    const std::string file = QFile::encodeName(path).toStdString();
    m_reader = QThread::create([outcome, file] {
        QElapsedTimer timer;
        timer.start();
        outcome->result = engine::readResultFile(file);
        outcome->seconds = static_cast<double>(timer.nsecsElapsed()) / 1e9;
    });
    connect(m_reader, &QThread::finished, this, [this, path] { finishReading(path); });
    m_reader->start();
}

void ResultFileController::finishReading(const QString& path) {
    m_reader->deleteLater();
    m_reader = nullptr;
    const auto outcome = std::exchange(m_outcome, nullptr);
    const QString name = QFileInfo(path).fileName();
    if (!outcome->result) {
        Q_EMIT openFailed(tr("Cannot open the result %1: %2").arg(name, QString::fromStdString(outcome->result.error().message)));
        return;
    }
    const auto result = outcome->result.value();
    const engine::AttentionResult& r = result->results.front();
    const QLocale locale;
    Q_EMIT opened(result, tr("Opened the result %1: %2 on %3 tokens, %4 heads of %5 (read in %6 s); weights are recomputed "
                             "from its q and k as they are drawn.")
                              .arg(name, QString::fromStdString(r.variantId), locale.toString(static_cast<qlonglong>(r.n)))
                              .arg(r.heads)
                              .arg(r.d)
                              .arg(outcome->seconds, 0, 'f', 2));
}

}  // namespace attnscope::app
