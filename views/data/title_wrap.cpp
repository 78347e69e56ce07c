#include "views/data/title_wrap.h"

#include <QFontMetrics>
#include <QStringList>

namespace attnscope::views {
namespace {

// The line cut after each separator, the separator kept at the end of its piece.
QStringList piecesOf(const QString& line) {
    static const QString separators[] = {QStringLiteral(" — "), QStringLiteral(", ")};
    QStringList pieces;
    int start = 0;
    for (int i = 0; i < line.size(); ++i)
        for (const QString& sep : separators)
            if (line.mid(i, sep.size()) == sep) {
                pieces << line.mid(start, i + sep.size() - start);
                start = i + static_cast<int>(sep.size());
                i = start - 1;
                break;
            }
    if (start < line.size()) pieces << line.mid(start);
    return pieces;
}

}  // namespace

QString wrapTitle(const QString& text, const QFont& font, int width) {
    if (width <= 0) return text;
    const QFontMetrics metrics(font);
    QStringList out;
    for (const QString& line : text.split(QLatin1Char('\n'))) {
        if (metrics.horizontalAdvance(line) <= width) {
            out << line;
            continue;
        }
        QString current;
        for (const QString& piece : piecesOf(line)) {
            if (!current.isEmpty() && metrics.horizontalAdvance((current + piece).trimmed()) > width) {
                out << current.trimmed();
                current.clear();
            }
            current += piece;
        }
        if (!current.isEmpty()) out << current.trimmed();
    }
    return out.join(QLatin1Char('\n'));
}

}  // namespace attnscope::views
