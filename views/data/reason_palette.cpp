#include "views/data/reason_palette.h"

#include "views/data/palette_csv.h"

#include <QFile>
#include <QLoggingCategory>

static void initReasonResources() { Q_INIT_RESOURCE(resources); }

namespace attnscope::views {

Q_LOGGING_CATEGORY(lcReasonPalette, "attnscope.views.palette")

std::optional<ReasonPalette> ReasonPalette::fromCsv(const QByteArray& csv, QString* error) {
    auto fail = [&](const QString& why) -> std::optional<ReasonPalette> {
        if (error) *error = QStringLiteral("pattern_reasons.csv: ") + why;
        return std::nullopt;
    };
    ReasonPalette palette;
    QString why;
    const auto rows = parsePaletteCsv(csv, /*named=*/true, &why);
    if (!rows) return fail(why);
    for (const PaletteRow& row : *rows) {
        const int index = palette.m_colors.size();
        const QByteArray expected =
            index < engine::kPatternReasonCount
                ? QByteArray(engine::patternReasonName(static_cast<engine::PatternReason>(index)))
                : QByteArray("exact_zero");
        if (index >= kSize || row.name != expected)
            return fail(QStringLiteral("line %1: expected the entry \"%2\"").arg(row.line).arg(QString::fromLatin1(expected)));
        palette.m_colors.push_back(QColor(row.color));
    }
    if (palette.m_colors.size() != kSize) return fail(QStringLiteral("expected %1 entries").arg(kSize));
    return palette;
}

const ReasonPalette& ReasonPalette::standard() {
    static const ReasonPalette palette = [] {
        initReasonResources();
        QFile file(QStringLiteral(":/colormaps/pattern_reasons.csv"));
        QString error = file.errorString();
        if (file.open(QIODevice::ReadOnly)) {
            if (auto loaded = fromCsv(file.readAll(), &error)) return *loaded;
        }
        qCWarning(lcReasonPalette) << "using grey for every pattern reason:" << error;
        ReasonPalette grey;
        grey.m_colors.fill(QColor(Qt::gray), kSize);
        return grey;
    }();
    return palette;
}

}  // namespace attnscope::views
