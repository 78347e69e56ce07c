#pragma once
// Categorical colours for bucket and cluster ids, loaded from data (resources/colormaps/
// categorical.csv), never from code (CONVENTIONS.md rule 11). Ids past the end wrap around.

#include <QByteArray>
#include <QColor>
#include <QString>
#include <QVector>

#include <optional>

namespace attnscope::views {

class CategoricalPalette {
public:
    /// The palette from :/colormaps/categorical.csv; loaded once. A broken resource falls back to
    /// a few greys so the views still draw.
    static const CategoricalPalette& standard();

    /// Parses lines "r,g,b" (0-255; blank lines and '#' comments ignored), at least one.
    static std::optional<CategoricalPalette> fromCsv(const QByteArray& csv, QString* error = nullptr);

    int size() const { return m_colors.size(); }
    /// Colour of category `id` (id modulo size(); negative ids are grey).
    QColor color(long long id) const;

private:
    QVector<QColor> m_colors;
};

}  // namespace attnscope::views
