#include "gui/export/star_cycle_export.h"

#include "gui/export/figure_exporter.h"

#include "views/diagnostics/star_player.h"

#include <QDir>
#include <QImage>
#include <QImageWriter>
#include <QJsonObject>
#include <QPainter>
#include <QSaveFile>

#include <algorithm>

namespace attnscope::app {

namespace {

QString framePath(const QDir& dir, int cycle) { return dir.filePath(QStringLiteral("star-cycle-%1.png").arg(cycle, 2, 10, QLatin1Char('0'))); }

/// Every frame side by side at the height of the first, written through a temporary file.
QString writeStrip(const QDir& dir, int frames, QString* path) {
    QList<QImage> images;
    for (int c = 1; c <= frames; ++c) images << QImage(framePath(dir, c));
    const int height = images.front().height();
    int width = 0;
    for (QImage& image : images) {
        image = image.scaledToHeight(height, Qt::SmoothTransformation);
        width += image.width();
    }
    QImage strip(width, height, QImage::Format_RGB32);
    strip.fill(Qt::white);
    QPainter painter(&strip);
    int x = 0;
    for (const QImage& image : images) {
        painter.drawImage(x, 0, image);
        x += image.width();
    }
    painter.end();
    *path = dir.filePath(QStringLiteral("star-cycles.png"));
    QSaveFile out(*path);
    if (!out.open(QIODevice::WriteOnly) || !strip.save(&out, "PNG") || !out.commit())
        return QObject::tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(*path), out.errorString());
    return {};
}

}  // namespace

StarCycleExport exportStarCycles(views::StarPlayer* player, const QString& folder, int dpi) {
    StarCycleExport result;
    const engine::StarPass* pass = player ? player->pass() : nullptr;
    if (!pass) {
        result.error = QObject::tr("No cycles to export: choose star, run, and open the Diagnostics tab.");
        return result;
    }
    const QDir dir(folder);
    if (!dir.exists()) {
        result.error = QObject::tr("Cannot export to %1: the folder does not exist.").arg(QDir::toNativeSeparators(folder));
        return result;
    }
    const int shown = player->cycle();
    for (int c = 1; c <= pass->cycles; ++c) {
        player->showCycle(c);
        FigureRequest request;
        request.format = FigureFormat::Png;
        request.dpi = dpi;
        request.title = QObject::tr("Star-Transformer, cycle %1 of %2 — head %3").arg(c).arg(pass->cycles).arg(player->head());
        request.caption = player->message();
        request.sidecar = QJsonObject{{QStringLiteral("view"), QStringLiteral("star-cycles")},
                                      {QStringLiteral("cycle"), c},
                                      {QStringLiteral("cycles"), static_cast<qint64>(pass->cycles)},
                                      {QStringLiteral("head"), player->head()},
                                      {QStringLiteral("cyclic"), pass->cyclic},
                                      {QStringLiteral("satellites"), static_cast<qint64>(pass->n)}};
        const FigureOutcome out = FigureExporter::exportFigure(player->canvas(), framePath(dir, c), request);
        if (!out.ok()) {
            player->showCycle(shown);
            result.error = out.error;
            return result;
        }
        ++result.frames;
    }
    player->showCycle(shown);
    result.error = writeStrip(dir, result.frames, &result.stripPath);
    return result;
}

}  // namespace attnscope::app
