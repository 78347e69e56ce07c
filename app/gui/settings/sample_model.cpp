#include "gui/settings/sample_model.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

namespace attnscope::app {

std::optional<QString> extractSampleModel(const QString& dataDir, QString* error) {
    const QString folder = QDir(dataDir).filePath(QStringLiteral("sample-models/transfo-xl-moby"));
    if (!QDir().mkpath(folder)) {
        if (error) *error = QObject::tr("cannot create %1").arg(folder);
        return std::nullopt;
    }
    for (const char* name : {"config.json", "model.safetensors"}) {
        QFile source(QStringLiteral("%1/%2").arg(QLatin1String(kSampleModelResource), QLatin1String(name)));
        const QString target = QDir(folder).filePath(QLatin1String(name));
        if (QFileInfo(target).size() == source.size()) continue;  // written before
        QSaveFile out(target);
        if (!source.open(QIODevice::ReadOnly) || !out.open(QIODevice::WriteOnly) || out.write(source.readAll()) != source.size() ||
            !out.commit()) {
            if (error) *error = QObject::tr("cannot write %1: %2").arg(target, out.errorString());
            return std::nullopt;
        }
    }
    return folder;
}

}  // namespace attnscope::app
