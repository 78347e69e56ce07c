#include "views/reason_palette.h"

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
    int lineNo = 0;
    for (const QByteArray& raw : csv.split('\n')) {
        ++lineNo;
        const QByteArray line = raw.trimmed();
        if (line.isEmpty() || line.startsWith('#')) continue;
        const QList<QByteArray> parts = line.split(',');
        if (parts.size() != 4) return fail(QStringLiteral("line %1 is not \"name,r,g,b\"").arg(lineNo));
        const int index = palette.m_colors.size();
        const QByteArray expected =
            index < engine::kPatternReasonCount
                ? QByteArray(engine::patternReasonName(static_cast<engine::PatternReason>(index)))
                : QByteArray("exact_zero");
        if (index >= kSize || parts[0].trimmed() != expected)
            return fail(QStringLiteral("line %1: expected the entry \"%2\"").arg(lineNo).arg(QString::fromLatin1(expected)));
        int rgb[3];
        for (int c = 0; c < 3; ++c) {
            bool ok = false;
            rgb[c] = parts[c + 1].trimmed().toInt(&ok);
            if (!ok || rgb[c] < 0 || rgb[c] > 255)
                return fail(QStringLiteral("line %1: components must be integers 0-255").arg(lineNo));
        }
        palette.m_colors.push_back(QColor(rgb[0], rgb[1], rgb[2]));
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
