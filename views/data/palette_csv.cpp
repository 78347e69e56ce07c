#include "views/data/palette_csv.h"

#include <QList>

namespace attnscope::views {

std::optional<std::vector<PaletteRow>> parsePaletteCsv(const QByteArray& csv, bool named, QString* error) {
    std::vector<PaletteRow> rows;
    int lineNo = 0;
    const int fields = named ? 4 : 3;
    for (const QByteArray& raw : csv.split('\n')) {
        ++lineNo;
        const QByteArray line = raw.trimmed();
        if (line.isEmpty() || line.startsWith('#')) continue;
        const QList<QByteArray> parts = line.split(',');
        if (parts.size() != fields) {
            if (error) *error = QStringLiteral("line %1 is not \"%2\"").arg(lineNo).arg(named ? "name,r,g,b" : "r,g,b");
            return std::nullopt;
        }
        int rgb[3];
        for (int c = 0; c < 3; ++c) {
            bool ok = false;
            rgb[c] = parts[c + fields - 3].trimmed().toInt(&ok);
            if (!ok || rgb[c] < 0 || rgb[c] > 255) {
                if (error) *error = QStringLiteral("line %1: components must be integers 0-255").arg(lineNo);
                return std::nullopt;
            }
        }
        rows.push_back(PaletteRow{lineNo, named ? parts[0].trimmed() : QByteArray(), qRgb(rgb[0], rgb[1], rgb[2])});
    }
    return rows;
}

}  // namespace attnscope::views
