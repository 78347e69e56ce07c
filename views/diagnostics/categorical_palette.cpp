#include "views/diagnostics/categorical_palette.h"

#include "views/data/palette_csv.h"

#include <QFile>
#include <QLoggingCategory>

static void initDiagnosticsResources() { Q_INIT_RESOURCE(resources); }

namespace attnscope::views {

Q_LOGGING_CATEGORY(lcPalette, "attnscope.views.palette")

std::optional<CategoricalPalette> CategoricalPalette::fromCsv(const QByteArray& csv, QString* error) {
    CategoricalPalette palette;
    QString why;
    const auto rows = parsePaletteCsv(csv, /*named=*/false, &why);
    if (!rows) {
        if (error) *error = QStringLiteral("categorical.csv ") + why;
        return std::nullopt;
    }
    for (const PaletteRow& row : *rows) palette.m_colors.push_back(QColor(row.color));
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
