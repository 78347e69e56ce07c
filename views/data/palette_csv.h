#pragma once
// The one reader of the colour tables in resources/colormaps/: a colour per line as "r,g,b"
// (0-255), or "name,r,g,b" for named tables; blank lines and '#' comments skipped.

#include <QByteArray>
#include <QRgb>
#include <QString>

#include <optional>
#include <vector>

namespace attnscope::views {

struct PaletteRow {
    int line = 0;     ///< 1-based line in the file
    QByteArray name;  ///< named tables only
    QRgb color = 0;
};

/// The rows, or nothing with *error = "line N: …" naming the rule broken.
std::optional<std::vector<PaletteRow>> parsePaletteCsv(const QByteArray& csv, bool named, QString* error);

}  // namespace attnscope::views
