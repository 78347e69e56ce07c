#include "gui/recipe/sweep_csv.h"

#include <QCoreApplication>
#include <QStringList>

#include <cmath>

namespace attnscope::app {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("SweepCsv", text); }

// One CSV line into fields: quoted fields may hold commas, "" is a quote.
QStringList splitCsvLine(const QString& line) {
    QStringList fields;
    QString field;
    bool quoted = false;
    for (qsizetype i = 0; i < line.size(); ++i) {
        const QChar c = line[i];
        if (quoted) {
            if (c == QLatin1Char('"') && i + 1 < line.size() && line[i + 1] == QLatin1Char('"')) {
                field += c;
                ++i;
            } else if (c == QLatin1Char('"')) {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == QLatin1Char('"')) {
            quoted = true;
        } else if (c == QLatin1Char(',')) {
            fields << field;
            field.clear();
        } else {
            field += c;
        }
    }
    fields << field;
    return fields;
}

}  // namespace

std::optional<std::vector<views::ScalingPoint>> parseSweepCsv(const QString& text, QString* error) {
    const QStringList lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    const QStringList expected{QStringLiteral("variant"), QStringLiteral("n"), QStringLiteral("status"),
                               QStringLiteral("wall_s"), QStringLiteral("peak_rss_mib")};
    if (lines.isEmpty() || splitCsvLine(lines[0].trimmed()).mid(0, expected.size()) != expected) {
        *error = tr("line 1: expected the header of attnscope-cli sweep (%1, …)").arg(expected.join(QLatin1Char(',')));
        return std::nullopt;
    }
    std::vector<views::ScalingPoint> points;
    for (qsizetype l = 1; l < lines.size(); ++l) {
        const QStringList f = splitCsvLine(lines[l].trimmed());
        const QString where = tr("line %1").arg(l + 1);
        if (f.size() < expected.size()) {
            *error = tr("%1: expected at least %2 fields, found %3").arg(where).arg(expected.size()).arg(f.size());
            return std::nullopt;
        }
        views::ScalingPoint p;
        p.label = f[0];
        p.variantId = f[0].section(QLatin1Char(':'), 0, 0);
        bool ok = false;
        p.n = f[1].toLongLong(&ok);
        if (!ok || p.n < 1) {
            *error = tr("%1: n \"%2\" is not a token count").arg(where, f[1]);
            return std::nullopt;
        }
        if (f[2] != QLatin1String("ok")) {
            p.skipped = true;
            p.message = f.size() > 7 && !f[7].isEmpty() ? f[2] + QStringLiteral(": ") + f[7] : f[2];
            points.push_back(p);
            continue;
        }
        bool okWall = false, okPeak = false;
        p.seconds = f[3].toDouble(&okWall);
        const double mib = f[4].toDouble(&okPeak);
        if (!okWall || !okPeak || !(p.seconds > 0) || !(mib > 0) || !std::isfinite(p.seconds) || !std::isfinite(mib)) {
            *error = tr("%1: wall_s \"%2\" and peak_rss_mib \"%3\" must be positive numbers").arg(where, f[3], f[4]);
            return std::nullopt;
        }
        p.peakBytes = static_cast<std::uint64_t>(mib * 1024.0 * 1024.0);
        points.push_back(p);
    }
    if (points.empty()) {
        *error = tr("the table has no rows");
        return std::nullopt;
    }
    return points;
}

}  // namespace attnscope::app
