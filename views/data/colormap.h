#pragma once
// A 256-entry colour lookup table loaded from data (resources/colormaps/*.csv), never from code.

#include <QtGui/qrgb.h>
#include <QByteArray>
#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>

namespace attnscope::views {

class Colormap {
public:
    static constexpr int kSize = 256;

    /// viridis from the resource :/colormaps/viridis.csv; loaded once, thread-safe.
    static const Colormap& viridis();
    /// A built-in map by file name: "viridis", "magma", "cividis" (sequential) or "rdbu"
    /// (diverging, index 0 = blue = most negative). Loaded once, thread-safe; unknown names and
    /// broken resources give a grey ramp named "grey" (a build bug, logged).
    static const Colormap& builtin(const QString& name);
    /// Names accepted by builtin(), sequential maps first.
    static QStringList builtinNames();
    static bool isDiverging(const QString& name) { return name == QLatin1String("rdbu"); }

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
