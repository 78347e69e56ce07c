#include "gui/settings/text_autosave.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QPlainTextEdit>
#include <QSaveFile>
#include <QStandardPaths>
#include <QTimer>

namespace attnscope::app {

TextAutosave::TextAutosave(QPlainTextEdit* edit, QString path, int delayMs, QObject* parent)
    : QObject(parent), m_edit(edit), m_path(std::move(path)), m_timer(new QTimer(this)) {
    m_timer->setSingleShot(true);
    m_timer->setInterval(delayMs);
    connect(m_timer, &QTimer::timeout, this, &TextAutosave::save);
    connect(m_edit, &QPlainTextEdit::textChanged, this, [this] {
        m_dirty = true;
        m_timer->start();
    });
}

TextAutosave::~TextAutosave() {
    if (m_dirty && m_edit) save();
}

bool TextAutosave::save() {
    m_timer->stop();
    QDir().mkpath(QFileInfo(m_path).absolutePath());
    QSaveFile file(m_path);
    if (!file.open(QIODevice::WriteOnly) || file.write(m_edit->toPlainText().toUtf8()) < 0 || !file.commit()) {
        m_lastError = tr("Cannot save the typed text to %1: %2").arg(m_path, file.errorString());
        return false;
    }
    m_dirty = false;
    m_lastError.clear();
    Q_EMIT saved();
    return true;
}

std::optional<QString> TextAutosave::load(const QString& path) {
    QFile file(path);
    if (!file.exists() || !file.open(QIODevice::ReadOnly)) return std::nullopt;
    return QString::fromUtf8(file.readAll());
}

QString TextAutosave::defaultPath() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/autosave.txt");
}

}  // namespace attnscope::app
