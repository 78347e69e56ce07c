// Figures as a teacher puts them on a slide: one title, no widgets (selection frames, hover help),
// a slide's plot filling its page, the heads grid with its colour bar, SVG cells without seams.
#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "gui/settings/app_settings.h"
#include "gui/engine/engine_runner.h"
#include "gui/export/export_controller.h"
#include "gui/export/figure_exporter.h"
#include "gui/export/figure_metadata.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/window/view_tabs.h"

#include "views/heatmap/head_heatmap.h"
#include "views/heatmap/heads_grid.h"
#include "views/data/inspection_state.h"
#include "views/mask/mask_view.h"

#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <map>

using attnscope::app::FigureExporter;
using attnscope::app::FigureFormat;
using attnscope::app::FigureMetadata;
using attnscope::app::FigureRequest;
using attnscope::app::FigureSubject;
using attnscope::views::InspectionState;
namespace engine = attnscope::engine;

namespace {

// The box of pixels that are not white, below `top`.
QRect inkBox(const QImage& image, int top = 0) {
    QRect box;
    for (int y = top; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            if ((image.pixel(x, y) & 0xffffff) != 0xffffff) box = box.united(QRect(x, y, 1, 1));
    return box;
}

FigureRequest requestFor(QWidget* view, std::shared_ptr<const engine::RunResult> run, FigureFormat format) {
    const FigureSubject subject = FigureSubject::describe(view, std::move(run), 0, 0, 0, {});
    FigureRequest request;
    request.format = format;
    request.dpi = 96;
    request.title = FigureMetadata::title(subject);
    request.caption = FigureMetadata::caption(subject);
    request.sidecar = FigureMetadata::sidecar(subject);
    return request;
}

// A heatmap of `run` on screen at `size`, as a figure is exported from.
struct ShownHeatmap {
    InspectionState state;
    attnscope::views::HeadHeatmap heatmap;
    ShownHeatmap(std::shared_ptr<const engine::RunResult> run, QSize size) {
        heatmap.setInspectionState(&state);
        heatmap.setResult(std::move(run));
        heatmap.resize(size);
        heatmap.show();
    }
};

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

}  // namespace

class TestExportLayout : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aSlideFillsItsPageAndAllHeadsIsAFigureWithoutWidgets() {
        attnscope::app::EngineRunner runner(std::make_unique<attnscope::app::LocalEngineBackend>());
        attnscope::app::MainWindow::Options options;
        options.showErrorDialogs = false;
        attnscope::app::MainWindow window(&runner, attnscope::app::AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, 60000);
        auto* exporter = window.exportController();
        QTemporaryDir dir;

        // The heatmap on a 16:9 slide: below the title, its ink spans most of the page's height.
        const auto slide = exporter->exportFigureTo(dir.filePath(QStringLiteral("slide.png")), 96, true);
        QVERIFY2(slide.ok(), qPrintable(slide.error));
        const QImage page(dir.filePath(QStringLiteral("slide.png")));
        QCOMPARE(page.size(), QSize(1280, 720));
        const QRect plot = inkBox(page, 60);
        QVERIFY2(plot.height() >= 0.8 * (720 - 60), qPrintable(QStringLiteral("%1 px of %2").arg(plot.height()).arg(720 - 60)));

        // Every head: thumbnails and a colour bar across the figure, no selection frame.
        attnscope::views::HeadsGrid* grid = window.views()->headsGrid();
        const QColor selection = grid->palette().color(QPalette::Highlight);
        const auto heads = exporter->exportAllHeadsTo(dir.filePath(QStringLiteral("heads.png")), 96);
        QVERIFY2(heads.ok(), qPrintable(heads.error));
        const QImage figure(dir.filePath(QStringLiteral("heads.png")));
        const QRect ink = inkBox(figure);
        QVERIFY2(ink.right() >= figure.width() * 0.85, qPrintable(QStringLiteral("ink ends at %1 of %2").arg(ink.right()).arg(figure.width())));
        int framePixels = 0;
        for (int y = 0; y < figure.height(); ++y)
            for (int x = 0; x < figure.width(); ++x) framePixels += QColor(figure.pixel(x, y)) == selection;
        QCOMPARE(framePixels, 0);
        QVERIFY(!grid->inFigureLayout());  // the window's grid is back
        // The colour bar right of the last thumbnail: viridis, yellow at its top, purple at its foot.
        const attnscope::views::FigureLayoutScope asFigure(grid, false);
        const QImage drawn = grid->grab().toImage();
        const QRect last = grid->thumbnailRect(0, grid->headCount() - 1);
        const int barX = (last.right() + 20) * drawn.width() / grid->width();
        const auto at = [&](int y) { return QColor(drawn.pixel(barX, y * drawn.height() / grid->height())); };
        QVERIFY2(at(last.top() + 2).red() > 200 && at(last.top() + 2).blue() < 100, qPrintable(at(last.top() + 2).name()));
        QVERIFY2(at(last.bottom() - 2).red() < 100 && at(last.bottom() - 2).blue() > 60, qPrintable(at(last.bottom() - 2).name()));
    }

    void oneTitleAndNoHoverHelpInAFigure() {
        auto run = attnscope::testing::makeDenseResult(2, 6);
        InspectionState state;
        attnscope::views::MaskView mask;
        mask.setInspectionState(&state);
        mask.setResult(run);
        mask.resize(760, 520);
        mask.show();
        QVERIFY(QTest::qWaitForWindowExposed(&mask));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("mask.svg"));
        const auto out = FigureExporter::exportFigure(&mask, path, requestFor(&mask, run, FigureFormat::Svg));
        QVERIFY2(out.ok(), qPrintable(out.error));
        const QByteArray svg = readAll(path);
        QVERIFY(svg.contains("(mask)"));          // the figure's title
        QVERIFY(!svg.contains("Pattern of"));     // not the plot's own as well
        QVERIFY(!svg.contains("Hover a cell"));   // nor the row panel's hover help
        QVERIFY(!svg.contains("Row panel"));
    }

    void aOneRowMapExportsAsVectorCells() {
        // A single row: the painter looks at the row after the last one, which does not exist.
        auto run = attnscope::testing::makeDenseResult(1, 1);
        ShownHeatmap shown(run, QSize(300, 300));
        auto& heatmap = shown.heatmap;
        QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
        QTemporaryDir dir;
        for (const FigureFormat format : {FigureFormat::Svg, FigureFormat::Pdf}) {
            const QString path = dir.filePath(format == FigureFormat::Svg ? QStringLiteral("one.svg") : QStringLiteral("one.pdf"));
            const auto out = FigureExporter::exportFigure(&heatmap, path, requestFor(&heatmap, run, format));
            QVERIFY2(out.ok(), qPrintable(out.error));
            QVERIFY(QFileInfo(path).size() > 0);
        }
    }

    void svgCellsOverlapTheirNeighboursSoNoSeamShows() {
        auto run = attnscope::testing::makeDenseResult(1, 7);
        ShownHeatmap shown(run, QSize(500, 460));
        auto& heatmap = shown.heatmap;
        QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("head.svg"));
        const auto out = FigureExporter::exportFigure(&heatmap, path, requestFor(&heatmap, run, FigureFormat::Svg));
        QVERIFY2(out.ok(), qPrintable(out.error));
        // The cells: rectangles grouped by their top edge, each row's runs left to right.
        std::map<double, std::vector<std::pair<double, double>>> rows;
        const QRegularExpression rect(QStringLiteral(R"re(<rect x="([-0-9.e]+)" y="([-0-9.e]+)" width="([-0-9.e]+)" height="([-0-9.e]+)")re"));
        for (auto it = rect.globalMatch(QString::fromUtf8(readAll(path))); it.hasNext();) {
            const auto m = it.next();
            const double w = m.captured(3).toDouble(), h = m.captured(4).toDouble();
            if (w > 200 || h > 200) continue;  // backgrounds
            rows[m.captured(2).toDouble()].push_back({m.captured(1).toDouble(), m.captured(1).toDouble() + w});
        }
        QVERIFY2(rows.size() >= 7, qPrintable(QString::number(rows.size())));
        int overlaps = 0;
        for (auto& [top, runs] : rows) {
            std::sort(runs.begin(), runs.end());
            for (std::size_t i = 1; i < runs.size(); ++i) {
                QVERIFY2(runs[i - 1].second >= runs[i].first, "a gap between two cells of a row");
                overlaps += runs[i - 1].second > runs[i].first;
            }
        }
        QVERIFY(overlaps > 0);
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestExportLayout)
#include "test_export_layout.moc"
