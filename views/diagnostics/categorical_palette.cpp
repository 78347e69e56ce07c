#include "views/diagnostics/categorical_palette.h"

#include <QFile>
#include <QLoggingCategory>

static void initDiagnosticsResources() { Q_INIT_RESOURCE(resources); }

namespace attnscope::views {

Q_LOGGING_CATEGORY(lcPalette, "attnscope.views.palette")

std::optional<CategoricalPalette> CategoricalPalette::fromCsv(const QByteArray& csv, QString* error) {
    CategoricalPalette palette;
    int lineNo = 0;
    for (const QByteArray& raw : csv.split('\n')) {
        ++lineNo;
        const QByteArray line = raw.trimmed();
        if (line.isEmpty() || line.startsWith('#')) continue;
        const QList<QByteArray> parts = line.split(',');
        int rgb[3] = {0, 0, 0};
        bool ok = parts.size() == 3;
        for (int c = 0; ok && c < 3; ++c) {
            rgb[c] = parts[c].trimmed().toInt(&ok);
            ok = ok && rgb[c] >= 0 && rgb[c] <= 255;
        }
        if (!ok) {
            if (error) *error = QStringLiteral("categorical.csv line %1: expected \"r,g,b\" with 0-255").arg(lineNo);
            return std::nullopt;
        }
        palette.m_colors.push_back(QColor(rgb[0], rgb[1], rgb[2]));
    }
    if (palette.m_colors.isEmpty()) {
        if (error) *error = QStringLiteral("categorical.csv: no colours");
        return std::nullopt;
    }
    return palette;
}

const CategoricalPalette& CategoricalPalette::standard() {
    static const CategoricalPalette palette = [] {
        initDiagnosticsResources();
        QFile file(QStringLiteral(":/colormaps/categorical.csv"));
        QString error = file.errorString();
        if (file.open(QIODevice::ReadOnly))
            if (auto loaded = fromCsv(file.readAll(), &error)) return *loaded;
        qCWarning(lcPalette) << "cannot load the categorical palette:" << error;
        CategoricalPalette grey;
        for (int v : {60, 120, 180}) grey.m_colors.push_back(QColor(v, v, v));
        return grey;
    }();
    return palette;
}

QColor CategoricalPalette::color(long long id) const {
    if (id < 0 || m_colors.isEmpty()) return QColor(Qt::gray);
    return m_colors[static_cast<int>(id % m_colors.size())];
}

}  // namespace attnscope::views
