#pragma once
// A 256-entry colour lookup table loaded from data (resources/colormaps/*.csv), never from code.

#include <QtGui/qrgb.h>
#include <QByteArray>
#include <QString>
#include <QVector>

#include <optional>

namespace attnscope::views {

class Colormap {
public:
    static constexpr int kSize = 256;

    /// viridis from the resource :/colormaps/viridis.csv; loaded once, thread-safe.
    static const Colormap& viridis();

    /// Parses kSize lines "r,g,b" (0-255; blank lines and '#' comments ignored).
    /// Returns nullopt and sets *error on any other content.
    static std::optional<Colormap> fromCsv(const QString& name, const QByteArray& csv, QString* error = nullptr);
    /// Reads a file or a resource path (":/colormaps/…").
    static std::optional<Colormap> load(const QString& path, QString* error = nullptr);

    const QString& name() const { return m_name; }
    int size() const { return m_colors.size(); }
    QRgb color(int index) const { return m_colors[index]; }
    const QVector<QRgb>& colors() const { return m_colors; }

    /// Colour of t in [0, 1] (clamped); NaN maps to the lowest colour.
    QRgb map(double t) const;

private:
    QString m_name;
    QVector<QRgb> m_colors;
};

}  // namespace attnscope::views
