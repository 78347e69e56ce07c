#include "views/data/colormap.h"

#include "views/data/palette_csv.h"

#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QLoggingCategory>

#include <cmath>

// Resources compiled into a static library are dropped by the linker unless something references
// their initialiser; Q_INIT_RESOURCE must be used outside any namespace.
static void initViewsResources() { Q_INIT_RESOURCE(resources); }

namespace attnscope::views {

Q_LOGGING_CATEGORY(lcColormap, "attnscope.views.colormap")

std::optional<Colormap> Colormap::fromCsv(const QString& name, const QByteArray& csv, QString* error) {
    auto fail = [&](const QString& why) -> std::optional<Colormap> {
        if (error) *error = name + QLatin1String(": ") + why;
        return std::nullopt;
    };
    Colormap map;
    map.m_name = name;
    QString why;
    const auto rows = parsePaletteCsv(csv, /*named=*/false, &why);
    if (!rows) return fail(why);
    for (const PaletteRow& row : *rows) map.m_colors.push_back(row.color);
    if (map.m_colors.size() != kSize)
        return fail(QStringLiteral("%1 colours, expected %2").arg(map.m_colors.size()).arg(kSize));
    return map;
}

std::optional<Colormap> Colormap::load(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error) *error = path + QLatin1String(": ") + file.errorString();
        return std::nullopt;
    }
    return fromCsv(QFileInfo(path).baseName(), file.readAll(), error);
}

const Colormap& Colormap::viridis() { return builtin(QStringLiteral("viridis")); }

QStringList Colormap::builtinNames() {
    return {QStringLiteral("viridis"), QStringLiteral("magma"), QStringLiteral("cividis"), QStringLiteral("rdbu")};
}

const Colormap& Colormap::builtin(const QString& name) {
    // Loaded eagerly, once: function-local statics are thread-safe and references stay valid.
    static const QHash<QString, Colormap> maps = [] {
        initViewsResources();
        QHash<QString, Colormap> out;
        for (const QString& n : builtinNames()) {
            QString error;
            if (auto loaded = load(QStringLiteral(":/colormaps/%1.csv").arg(n), &error)) {
                out.insert(n, *loaded);
                continue;
            }
            // A missing resource is a build bug; a grey ramp keeps the views usable meanwhile.
            qCWarning(lcColormap) << "cannot load" << n << ":" << error;
        }
        Colormap grey;
        grey.m_name = QStringLiteral("grey");
        for (int i = 0; i < kSize; ++i) grey.m_colors.push_back(qRgb(i, i, i));
        out.insert(grey.m_name, grey);
        return out;
    }();
    const auto it = maps.constFind(name);
    if (it != maps.constEnd()) return *it;
    qCWarning(lcColormap) << "unknown colormap" << name;
    return *maps.constFind(QStringLiteral("grey"));
}

QRgb Colormap::map(double t) const {
    if (m_colors.isEmpty()) return qRgb(0, 0, 0);
    if (!(t > 0.0)) return m_colors.front();  // also NaN
    if (t >= 1.0) return m_colors.back();
    const int index = static_cast<int>(std::lround(t * (m_colors.size() - 1)));
    return m_colors[index];
}

}  // namespace attnscope::views
