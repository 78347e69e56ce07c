// Figure and data export: files decode, carry their sidecar, and fail politely.
#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "gui/settings/app_settings.h"
#include "gui/engine/engine_runner.h"
#include "gui/export/data_exporter.h"
#include "gui/export/export_controller.h"
#include "gui/export/figure_exporter.h"
#include "gui/export/figure_metadata.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"

#include "views/widgets/figure_painter.h"
#include "views/heatmap/head_heatmap.h"
#include "views/image/image_overlay_view.h"
#include "views/data/inspection_state.h"
#include "views/mask/mask_view.h"

#include <attnscope/safetensors.h>

#include <QAction>
#include <QFile>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeData>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <cmath>

using attnscope::app::DataExporter;
using attnscope::app::FigureExporter;
using attnscope::app::FigureFormat;
using attnscope::app::FigureMetadata;
using attnscope::app::FigureRequest;
using attnscope::app::FigureSubject;
using attnscope::testing::fixtureWeight;
using attnscope::testing::makeDenseResult;
using attnscope::views::FigurePainter;
using attnscope::views::HeadHeatmap;
using attnscope::views::InspectionState;
namespace engine = attnscope::engine;

namespace {

constexpr char kRequestJson[] = R"({"variants":[{"id":"full","params":{"causal":false}}],"projection":{"seed":7}})";

std::shared_ptr<const engine::RunResult> makeRun(int heads, int n) {
    auto run = std::make_shared<engine::RunResult>(*makeDenseResult(heads, n));
    run->requestJson = kRequestJson;
    run->projection.seed = 7;
    // The safetensors writer needs `output` [heads, n, d] and weights, as engine results have.
    auto& r = run->results[0];
    r.output.shape = {r.heads, r.n, r.d};
    r.output.values = std::make_shared<const std::vector<float>>(static_cast<std::size_t>(r.heads * r.n * r.d), 0.5f);
    return run;
}

// The fields of one CSV line (RFC 4180 quoting: "" is a quote inside a quoted field).
QStringList csvFields(const QByteArray& line) {
    QStringList fields;
    QString field;
    bool quoted = false;
    const QString text = QString::fromUtf8(line);
    for (int i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (quoted && c == QLatin1Char('"') && i + 1 < text.size() && text[i + 1] == QLatin1Char('"')) {
            field += c;
            ++i;
        } else if (c == QLatin1Char('"')) {
            quoted = !quoted;
        } else if (c == QLatin1Char(',') && !quoted) {
            fields << field;
            field.clear();
        } else {
            field += c;
        }
    }
    fields << field;
    return fields;
}

QJsonObject readJson(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

/// A shown heatmap of head 1 with its request.
struct Fixture {
    InspectionState state;
    HeadHeatmap heatmap;
    std::shared_ptr<const engine::RunResult> run;
    explicit Fixture(int n = 6) : run(makeRun(2, n)) {
        heatmap.setInspectionState(&state);
        heatmap.setVariantNames({{QStringLiteral("full"), QStringLiteral("Full softmax attention")}});
        heatmap.setResult(run);
        state.setHead(1);
        heatmap.resize(640, 520);
        heatmap.show();
    }
    FigureRequest request(FigureFormat format, int dpi) const {
        const FigureSubject subject = FigureSubject::describe(
            const_cast<HeadHeatmap*>(&heatmap), run, 0, 0, 1, {{QStringLiteral("full"), QStringLiteral("Full softmax attention")}});
        FigureRequest r;
        r.format = format;
        r.dpi = dpi;
        r.title = FigureMetadata::title(subject);
        r.caption = FigureMetadata::caption(subject);
        r.sidecar = FigureMetadata::sidecar(subject);
        return r;
    }
};

}  // namespace

class TestExport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void pngHasTheDpiSizeAndCarriesTheSidecar() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(&f.heatmap));
        QTemporaryDir dir;
        dir.setAutoRemove(!qEnvironmentVariableIsSet("ATTNSCOPE_KEEP_EXPORTS"));  // to look at the figures
        const QString path = dir.filePath(QStringLiteral("head.png"));
        const FigureRequest request = f.request(FigureFormat::Png, 192);
        QVERIFY2(request.caption.contains(QStringLiteral("seed 7")), qPrintable(request.caption));
        QVERIFY2(request.caption.contains(QStringLiteral("causal=false")), qPrintable(request.caption));
        const auto out = FigureExporter::exportFigure(&f.heatmap, path, request);
        QVERIFY2(out.ok(), qPrintable(out.error));

        // 192 dpi = 2 pixels per logical unit: twice the figure's logical size.
        const QSize logical = FigurePainter(&f.heatmap, request.title, request.caption).logicalSize();
        QVERIFY(!logical.isEmpty());
        QImageReader reader(path);
        QCOMPARE(reader.format(), QByteArray("png"));
        const QJsonObject embedded = QJsonDocument::fromJson(reader.text(QStringLiteral("attnscope")).toUtf8()).object();
        const QImage image = reader.read();
        QVERIFY2(!image.isNull(), qPrintable(reader.errorString()));
        QCOMPARE(image.size(), logical * 2);
        QCOMPARE(out.size, image.size());
        QCOMPARE(image.dotsPerMeterX(), qRound(192 / 0.0254));
        QCOMPARE(image.pixelColor(0, 0), QColor(Qt::white));

        // The sidecar: same basename + .json, also embedded in the PNG.
        QCOMPARE(out.sidecarPath, dir.filePath(QStringLiteral("head.json")));
        const QJsonObject sidecar = readJson(out.sidecarPath);
        QCOMPARE(sidecar, embedded);
        QCOMPARE(sidecar.value(QStringLiteral("request")).toObject(),
                 QJsonDocument::fromJson(QByteArray(kRequestJson)).object());
        QCOMPARE(sidecar.value(QStringLiteral("seed")).toInt(), 7);
        QCOMPARE(sidecar.value(QStringLiteral("variant")).toString(), QStringLiteral("full"));
        QCOMPARE(sidecar.value(QStringLiteral("params")).toObject().value(QStringLiteral("causal")).toString(),
                 QStringLiteral("false"));
        QCOMPARE(sidecar.value(QStringLiteral("head")).toInt(), 1);
        QCOMPARE(sidecar.value(QStringLiteral("colormap")).toString(), QStringLiteral("viridis"));
        QCOMPARE(sidecar.value(QStringLiteral("scale")).toString(), QStringLiteral("linear"));
        QCOMPARE(sidecar.value(QStringLiteral("dpi")).toInt(), 192);
        QCOMPARE(sidecar.value(QStringLiteral("format")).toString(), QStringLiteral("png"));
        QCOMPARE(sidecar.value(QStringLiteral("size")).toObject().value(QStringLiteral("width")).toInt(), image.width());
        QVERIFY(sidecar.value(QStringLiteral("app")).toObject().contains(QStringLiteral("version")));
    }

    void aModelsLayerIsNamedInTitleCaptionAndSidecar() {
        // Q, K, V of layer 1 of a model: the data is layer 1's, so everything says layer 1.
        auto run = std::make_shared<engine::RunResult>(*makeRun(2, 6));
        run->modelFolder = "/models/tiny-bert/";
        run->modelLayer = 1;
        InspectionState state;
        HeadHeatmap heatmap;
        heatmap.setInspectionState(&state);
        heatmap.setResult(run);
        QVERIFY2(heatmap.title().simplified().contains(QStringLiteral("model tiny-bert, layer 1")), qPrintable(heatmap.title()));
        const FigureSubject subject = FigureSubject::describe(&heatmap, run, 0, 0, 0, {});
        QCOMPARE(subject.layer, 1);
        QVERIFY2(FigureMetadata::caption(subject).contains(QStringLiteral("model tiny-bert, layer 1, head 0 of 2")),
                 qPrintable(FigureMetadata::caption(subject)));
        QCOMPARE(FigureMetadata::sidecar(subject).value(QStringLiteral("layer")).toInt(), 1);
        // random projections: no model named
        Fixture f;
        QVERIFY(!f.heatmap.title().contains(QStringLiteral("model")));
    }

    void everyCellGetsAPixel() {
        Fixture f(1200);  // 1200 cells across a ~500 pixel axis
        QVERIFY(QTest::qWaitForWindowExposed(&f.heatmap));
        QTemporaryDir dir;
        const FigureRequest request = f.request(FigureFormat::Png, 96);
        const auto out = FigureExporter::exportFigure(&f.heatmap, dir.filePath(QStringLiteral("big.png")), request);
        QVERIFY2(out.ok(), qPrintable(out.error));
        QVERIFY2(out.scale > 1.0, qPrintable(QString::number(out.scale)));
        QVERIFY(out.size.width() >= 1200);
    }

    void svgParsesAndPdfStartsWithTheMagic() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(&f.heatmap));
        QTemporaryDir dir;
        dir.setAutoRemove(!qEnvironmentVariableIsSet("ATTNSCOPE_KEEP_EXPORTS"));
        const QString svgPath = dir.filePath(QStringLiteral("head.svg"));
        auto out = FigureExporter::exportFigure(&f.heatmap, svgPath, f.request(FigureFormat::Svg, 300));
        QVERIFY2(out.ok(), qPrintable(out.error));
        QFile svg(svgPath);
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QByteArray svgBytes = svg.readAll();
        QXmlStreamReader xml(svgBytes);
        QString root;
        while (!xml.atEnd()) {
            xml.readNext();
            if (xml.isStartElement() && root.isEmpty()) root = xml.name().toString();
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QCOMPARE(root, QStringLiteral("svg"));
        QVERIFY(svgBytes.contains("Full softmax attention"));  // text stays text
        QCOMPARE(readJson(dir.filePath(QStringLiteral("head.json"))).value(QStringLiteral("format")).toString(),
                 QStringLiteral("svg"));

        const QString pdfPath = dir.filePath(QStringLiteral("head.pdf"));
        out = FigureExporter::exportFigure(&f.heatmap, pdfPath, f.request(FigureFormat::Pdf, 300));
        QVERIFY2(out.ok(), qPrintable(out.error));
        QFile pdf(pdfPath);
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        const QByteArray pdfBytes = pdf.readAll();
        QVERIFY(pdfBytes.startsWith("%PDF-"));
        // cells are vector rectangles: no lossy (JPEG) image stream for the heatmap
        QVERIFY2(!pdfBytes.contains("/DCTDecode"), "the PDF embeds a JPEG image");
        QVERIFY2(!svgBytes.contains("image/jpeg"), "the SVG embeds a JPEG image");
        QCOMPARE(readJson(dir.filePath(QStringLiteral("head.json"))).value(QStringLiteral("seed")).toInt(), 7);
    }

    void theImageTabExportsThePictureAtItsFullResolution() {
        // A 600 × 400 picture under a 2 × 3 patch grid: the SVG and PDF embed it whole (not the
        // on-screen size), PNG without JPEG loss; the overlay sits on it
        auto run = attnscope::testing::makeImageRun();
        engine::ImageGrid& grid = *run->input.image;
        grid.sourceWidth = grid.inputWidth = 600;
        grid.sourceHeight = grid.inputHeight = 400;
        grid.cell = 200;
        QImage picture(600, 400, QImage::Format_RGB888);
        for (int y = 0; y < 400; ++y)
            for (int x = 0; x < 600; ++x) picture.setPixelColor(x, y, QColor(x % 256, y % 256, (x + y) % 256));
        InspectionState state;
        attnscope::views::ImageOverlayView view;
        view.setInspectionState(&state);
        view.setPicture(picture);
        view.setResult(run);
        view.resize(500, 360);
        view.show();
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QTemporaryDir dir;
        FigureRequest request;
        request.title = QStringLiteral("Image");
        request.dpi = 96;
        request.format = FigureFormat::Svg;
        const QString svgPath = dir.filePath(QStringLiteral("image.svg"));
        auto out = FigureExporter::exportFigure(&view, svgPath, request);
        QVERIFY2(out.ok(), qPrintable(out.error));
        QFile svg(svgPath);
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QByteArray svgBytes = svg.readAll();
        QVERIFY2(!svgBytes.contains("image/jpeg"), "the SVG embeds a JPEG image");
        // the embedded picture decodes to 600 × 400
        const int at = svgBytes.indexOf("data:image/png;base64,");
        QVERIFY2(at >= 0, "no embedded PNG");
        const int begin = at + int(qstrlen("data:image/png;base64,"));
        const QByteArray png = QByteArray::fromBase64(svgBytes.mid(begin, svgBytes.indexOf('"', begin) - begin));
        QImage embedded;
        QVERIFY(embedded.loadFromData(png, "PNG"));
        QCOMPARE(embedded.size(), QSize(600, 400));
        QCOMPARE(embedded.pixelColor(300, 200), picture.pixelColor(300, 200));
        request.format = FigureFormat::Pdf;
        out = FigureExporter::exportFigure(&view, dir.filePath(QStringLiteral("image.pdf")), request);
        QVERIFY2(out.ok(), qPrintable(out.error));
    }

    void maskViewExportsToo() {
        InspectionState state;
        attnscope::views::MaskView mask;
        mask.setInspectionState(&state);
        mask.setResult(makeRun(1, 5));
        mask.resize(700, 500);
        mask.show();
        QVERIFY(QTest::qWaitForWindowExposed(&mask));
        QTemporaryDir dir;
        FigureRequest request;
        request.title = QStringLiteral("mask");
        const auto out = FigureExporter::exportFigure(&mask, dir.filePath(QStringLiteral("mask.png")), request);
        QVERIFY2(out.ok(), qPrintable(out.error));
        QVERIFY(!QImage(dir.filePath(QStringLiteral("mask.png"))).isNull());
    }

    void clipboardDataHasPngAndSvg() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(&f.heatmap));
        QString error;
        std::unique_ptr<QMimeData> mime(FigureExporter::mimeData(&f.heatmap, f.request(FigureFormat::Png, 96), &error));
        QVERIFY2(mime, qPrintable(error));
        QVERIFY(mime->hasFormat(QStringLiteral("image/png")));
        QVERIFY(mime->hasFormat(QStringLiteral("image/svg+xml")));
        QVERIFY(!QImage::fromData(mime->data(QStringLiteral("image/png")), "PNG").isNull());
        QVERIFY(mime->data(QStringLiteral("image/svg+xml")).contains("<svg"));
    }

    void csvHoldsTheHeadsWeights() {
        constexpr int kN = 7;
        const auto run = makeRun(2, kN);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("head.csv"));
        auto tokens = run->input.tokens;
        QCOMPARE(static_cast<int>(tokens.size()), kN);
        tokens[2].text = "say \"hi\", she";  // a quote and a comma stay inside their field
        QCOMPARE(DataExporter::exportHeadCsv(path, run->results[0], 1, tokens), QString());
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), kN + 1);
        // The header: the corner, then each key as "index:token".
        QVERIFY2(lines[0].startsWith(QByteArray("query \\ key,\"0:") + QByteArray::fromStdString(tokens[0].text)), lines[0].constData());
        QVERIFY2(lines[0].contains(",\"2:say\u2423\"\"hi\"\",\u2423she\","), lines[0].constData());  // (spaces shown as ␣)
        QCOMPARE(csvFields(lines[0]).value(3), QStringLiteral("2:say\u2423\"hi\",\u2423she"));
        for (int i = 0; i < kN; ++i) {
            // "i:token", then the weights (the token fields of this fixture hold no comma but row 2's)
            const QStringList cells = csvFields(lines[i + 1]);
            QCOMPARE(cells.size(), kN + 1);
            QVERIFY2(cells[0].startsWith(QString::number(i) + QLatin1Char(':')), qPrintable(cells[0]));
            for (int j = 0; j < kN; ++j) QCOMPARE(cells[j + 1].toFloat(), fixtureWeight(1, i, j));
        }
    }

    void safetensorsReadsBack() {
        const auto run = makeRun(2, 5);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("run.safetensors"));
        QCOMPARE(DataExporter::exportSafetensors(path, *run, 0), QString());
        auto file = engine::SafetensorsFile::open(path.toStdString());
        QVERIFY2(file, file ? "" : file.error().message.c_str());
        auto weights = (*file)->read("weights");
        QVERIFY2(weights, weights ? "" : weights.error().message.c_str());
        QCOMPARE(weights->numel(), std::int64_t{2 * 5 * 5});
    }

    void unwritablePathsGiveAClearError() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(&f.heatmap));
        QTemporaryDir dir;
        // A folder that does not exist, and a "folder" that is a file: both fail even as root.
        QFile blocker(dir.filePath(QStringLiteral("not-a-folder")));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        for (const QString& path : {dir.filePath(QStringLiteral("missing/fig.png")), dir.filePath(QStringLiteral("not-a-folder/fig.pdf"))}) {
            const auto out = FigureExporter::exportFigure(&f.heatmap, path, f.request(*FigureExporter::formatForPath(path), 96));
            QVERIFY(!out.ok());
            QVERIFY2(out.error.startsWith(QStringLiteral("Cannot write ")) && out.error.contains(QStringLiteral("fig.")),
                     qPrintable(out.error));
            QVERIFY(!QFile::exists(path));
        }
        const QString csv = DataExporter::exportHeadCsv(dir.filePath(QStringLiteral("missing/h.csv")), f.run->results[0], 0);
        QVERIFY2(csv.startsWith(QStringLiteral("Cannot write ")), qPrintable(csv));
        const QString st = DataExporter::exportSafetensors(dir.filePath(QStringLiteral("missing/r.safetensors")), *f.run, 0);
        QVERIFY2(st.startsWith(QStringLiteral("Cannot write ")), qPrintable(st));
        // A view with nothing drawable: a message, no file.
        QWidget empty;
        const auto none = FigureExporter::exportFigure(&empty, dir.filePath(QStringLiteral("none.png")), FigureRequest{});
        QVERIFY(!none.ok());
    }

    void mainWindowOffersTheExportActions() {
        attnscope::app::EngineRunner runner(std::make_unique<attnscope::app::LocalEngineBackend>());
        attnscope::app::MainWindow::Options options;
        options.showErrorDialogs = false;
        attnscope::app::AppSettings settings;
        settings.heatmapColormap = QStringLiteral("magma");
        settings.exportDpi = 150;
        attnscope::app::MainWindow window(&runner, settings, options);
        window.resize(1200, 800);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, 60000);
        auto* exporter = window.exportController();
        QCOMPARE(exporter->exportFigureAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_E));
        QCOMPARE(exporter->copyFigureAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
        QCOMPARE(window.views()->heatmap()->shownColormap(), QStringLiteral("magma"));
        QCOMPARE(window.settings().heatmapColormap, QStringLiteral("magma"));
        QCOMPARE(window.settings().exportDpi, 150);

        QTemporaryDir dir;
        const auto out = exporter->exportFigureTo(dir.filePath(QStringLiteral("main.png")), 96);
        QVERIFY2(out.ok(), qPrintable(out.error));
        const QJsonObject sidecar = readJson(dir.filePath(QStringLiteral("main.json")));
        QVERIFY(sidecar.value(QStringLiteral("request")).isObject());
        QCOMPARE(sidecar.value(QStringLiteral("colormap")).toString(), QStringLiteral("magma"));
        QCOMPARE(exporter->exportDataTo(dir.filePath(QStringLiteral("main.csv"))), QString());
        QFile csv(dir.filePath(QStringLiteral("main.csv")));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        QCOMPARE(csv.readAll().count('\n'), window.lastResult()->n + 1);  // the header and a line per query
        const QString error = exporter->exportDataTo(dir.filePath(QStringLiteral("main.txt")));
        QVERIFY2(error.contains(QStringLiteral(".safetensors or .csv")), qPrintable(error));
        // On the Experts tab the data is the routing: one CSV row per token (Switch: one choice each).
        window.showView(attnscope::app::MainWindow::View::Experts);
        window.flushPendingResult();
        QCOMPARE(exporter->exportDataTo(dir.filePath(QStringLiteral("routing.csv"))), QString());
        QFile routing(dir.filePath(QStringLiteral("routing.csv")));
        QVERIFY(routing.open(QIODevice::ReadOnly));
        const QByteArray rows = routing.readAll();
        QVERIFY(rows.startsWith("token,text,choice,expert,gate,router_prob,position,kept\n"));
        QCOMPARE(rows.count('\n'), 1 + window.lastResult()->n);
        window.showView(attnscope::app::MainWindow::View::Heatmap);
        const auto bad = exporter->exportFigureTo(dir.filePath(QStringLiteral("missing/x.png")), 96);
        QVERIFY(!bad.ok());
    }

    void slidesAreSixteenByNineWithLargeTextAndAllHeadsIsOneFigure() {
        attnscope::app::EngineRunner runner(std::make_unique<attnscope::app::LocalEngineBackend>());
        attnscope::app::MainWindow::Options options;
        options.showErrorDialogs = false;
        attnscope::app::MainWindow window(&runner, attnscope::app::AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, 60000);
        auto* exporter = window.exportController();
        QCOMPARE(exporter->exportSlideAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
        QVERIFY(exporter->exportAllHeadsAction()->isEnabled());
        const QSize shownSize = window.views()->heatmap()->size();

        QTemporaryDir dir;
        // PNG at 192 dpi: the 16:9 page of 1280 × 720 logical units, twice.
        const auto slide = exporter->exportFigureTo(dir.filePath(QStringLiteral("slide.png")), 192, true);
        QVERIFY2(slide.ok(), qPrintable(slide.error));
        QCOMPARE(QImage(dir.filePath(QStringLiteral("slide.png"))).size(), QSize(2560, 1440));
        QCOMPARE(window.views()->heatmap()->size(), shownSize);  // the view got its size back
        const QJsonObject sidecar = readJson(dir.filePath(QStringLiteral("slide.json")));
        QCOMPARE(sidecar.value(QStringLiteral("layout")).toString(), QStringLiteral("slide"));
        QVERIFY(!sidecar.value(QStringLiteral("caption")).toString().isEmpty());  // the caption stays in the sidecar
        // Vector formats: the same page, as points (PDF) and as the SVG's view box.
        const auto pdf = exporter->exportFigureTo(dir.filePath(QStringLiteral("slide.pdf")), 96, true);
        QVERIFY2(pdf.ok(), qPrintable(pdf.error));
        QCOMPARE(pdf.size, QSize(1280, 720));
        const auto svg = exporter->exportFigureTo(dir.filePath(QStringLiteral("slide.svg")), 96, true);
        QVERIFY2(svg.ok(), qPrintable(svg.error));
        QFile svgFile(dir.filePath(QStringLiteral("slide.svg")));
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        QVERIFY(svgFile.readAll().contains("viewBox=\"0 0 1280 720\""));

        // The heads grid, every head of the layer, named so in title and caption.
        const auto heads = exporter->exportAllHeadsTo(dir.filePath(QStringLiteral("heads.png")), 96);
        QVERIFY2(heads.ok(), qPrintable(heads.error));
        const QJsonObject headsSidecar = readJson(dir.filePath(QStringLiteral("heads.json")));
        QVERIFY2(headsSidecar.value(QStringLiteral("title")).toString().endsWith(QStringLiteral("(all heads)")),
                 qPrintable(headsSidecar.value(QStringLiteral("title")).toString()));
        QVERIFY(headsSidecar.value(QStringLiteral("caption")).toString().contains(QStringLiteral("all 4 heads")));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestExport)
#include "test_export.moc"
