// Batch export recipes: a recipe writes exactly the files it lists (figures decode), the shipped
// recipe covers every registered variant, and every broken recipe gets a message naming the problem.
#include "support/qt_test_support.h"

#include "gui/engine/local_engine_backend.h"
#include "gui/recipe/recipe.h"
#include "gui/recipe/recipe_runner.h"

#include <QDir>
#include <QFile>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

using attnscope::app::LocalEngineBackend;
using attnscope::app::Recipe;
using attnscope::app::RecipeError;
using attnscope::app::RecipeParser;
using attnscope::app::RecipeRunner;

namespace {

constexpr char kGood[] = R"({
  "recipe": 1,
  "title": "test",
  "inputs": {"cat": {"text": "The cat sat on the mat because it was tired."}},
  "seed": 3, "heads": 2, "headDim": 8,
  "variants": {"full": {}, "lf": {"id": "longformer", "params": {"window": 1}}},
  "defaults": {"width": 420, "height": 360, "dpi": 96},
  "figures": [
    {"file": "mask-lf", "view": "mask", "variant": "lf", "head": 1, "formats": ["png", "svg", "pdf"]},
    {"file": "pair", "view": "compare", "variant": "full", "compareWith": "lf", "formats": ["png"]},
    {"file": "weights", "view": "heatmap", "variant": "full", "formats": ["svg"], "sidecar": false, "colormap": "magma"},
    {"file": "links", "view": "links", "variant": "lf", "formats": ["png"]},
    {"file": "heads", "view": "heads", "variant": "lf", "formats": ["svg"], "sidecar": false}
  ]
})";

/// kGood with `from` replaced by `to` (exactly once).
QByteArray edited(const char* from, const char* to) {
    QByteArray json(kGood);
    const qsizetype at = json.indexOf(from);
    Q_ASSERT(at >= 0 && json.indexOf(from, at + 1) < 0);
    return json.replace(at, static_cast<qsizetype>(qstrlen(from)), to);
}

QSet<QString> filesIn(const QString& dir) {
    const QStringList names = QDir(dir).entryList(QDir::Files | QDir::Hidden | QDir::System);
    return {names.begin(), names.end()};
}

}  // namespace

class TestRecipe : public QObject {
    Q_OBJECT
    LocalEngineBackend m_backend;
    std::vector<attnscope::engine::VariantInfo> m_registry;

private Q_SLOTS:
    void initTestCase() {
        m_registry = m_backend.variants();
        QVERIFY(m_registry.size() > 3);
    }

    void recipeWritesExactlyTheFilesItLists() {
        RecipeError error;
        const auto recipe = RecipeParser::parse(kGood, QDir::currentPath(), QStringLiteral("good.json"), m_registry, &error);
        QVERIFY2(recipe, qPrintable(error.message));
        const QStringList expected{QStringLiteral("mask-lf.png"), QStringLiteral("mask-lf.svg"), QStringLiteral("mask-lf.pdf"),
                                   QStringLiteral("mask-lf.json"), QStringLiteral("pair.png"),   QStringLiteral("pair.json"),
                                   QStringLiteral("weights.svg"),  QStringLiteral("links.png"),  QStringLiteral("links.json"),
                                   QStringLiteral("heads.svg")};
        QCOMPARE(recipe->outputFiles(), expected);

        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("figures/nested"));  // created by the run
        QStringList log;
        RecipeRunner runner(&m_backend, [&](const QString& line) { log << line; });
        const auto outcome = runner.run(*recipe, out, QStringLiteral("good.json"));
        QVERIFY2(outcome.ok(), qPrintable(outcome.error));
        QCOMPARE(outcome.files, expected + QStringList{QStringLiteral("manifest.json")});
        QCOMPARE(filesIn(out), QSet<QString>(outcome.files.begin(), outcome.files.end()));
        // Figures sharing (input, variants) share a run: mask-lf and links run longformer once.
        QCOMPARE(log.filter(QStringLiteral("running")).size(), 3);

        QFile manifestFile(QDir(out).filePath(QStringLiteral("manifest.json")));
        QVERIFY(manifestFile.open(QIODevice::ReadOnly));
        const QJsonObject manifest = QJsonDocument::fromJson(manifestFile.readAll()).object();
        QStringList listed;
        for (const QJsonValue& entry : manifest.value(QStringLiteral("files")).toArray())
            listed << entry.toObject().value(QStringLiteral("file")).toString();
        QCOMPARE(listed, expected);
        QCOMPARE(manifest.value(QStringLiteral("recipe")).toString(), QStringLiteral("good.json"));

        // PNG decodes at 96 dpi (one pixel per logical unit, at least the view's size).
        QImageReader png(QDir(out).filePath(QStringLiteral("pair.png")));
        const QImage image = png.read();
        QVERIFY2(!image.isNull(), qPrintable(png.errorString()));
        QVERIFY(image.width() >= 420 && image.height() >= 360);
        QVERIFY(QImageReader(QDir(out).filePath(QStringLiteral("mask-lf.png"))).canRead());
        QVERIFY(!QImageReader(QDir(out).filePath(QStringLiteral("links.png"))).read().isNull());
        // SVG parses as XML with an <svg> root.
        // The heads grid is custom-painted: its thumbnails come out as images in the SVG.
        for (const QString& name : {QStringLiteral("mask-lf.svg"), QStringLiteral("weights.svg"), QStringLiteral("heads.svg")}) {
            QFile svg(QDir(out).filePath(name));
            QVERIFY(svg.open(QIODevice::ReadOnly));
            QXmlStreamReader xml(&svg);
            QVERIFY(xml.readNextStartElement());
            QCOMPARE(xml.name().toString(), QStringLiteral("svg"));
            while (!xml.atEnd()) xml.readNext();
            QVERIFY2(!xml.hasError(), qPrintable(name + QStringLiteral(": ") + xml.errorString()));
        }
        QFile pdf(QDir(out).filePath(QStringLiteral("mask-lf.pdf")));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QCOMPARE(pdf.read(5), QByteArray("%PDF-"));

        // Sidecars carry the request the recipe asked for.
        QFile sidecarFile(QDir(out).filePath(QStringLiteral("mask-lf.json")));
        QVERIFY(sidecarFile.open(QIODevice::ReadOnly));
        const QJsonObject sidecar = QJsonDocument::fromJson(sidecarFile.readAll()).object();
        QCOMPARE(sidecar.value(QStringLiteral("view")).toString(), QStringLiteral("mask"));
        QCOMPARE(sidecar.value(QStringLiteral("head")).toInt(), 1);
        QCOMPARE(sidecar.value(QStringLiteral("seed")).toInt(), 3);
        QCOMPARE(sidecar.value(QStringLiteral("format")).toString(), QStringLiteral("png"));
        QCOMPARE(sidecar.value(QStringLiteral("recipe")).toObject().value(QStringLiteral("figure")).toInt(), 0);
        const QJsonObject params = sidecar.value(QStringLiteral("params")).toObject();
        QCOMPARE(params.value(QStringLiteral("window")).toVariant().toString(), QStringLiteral("1"));
    }

    void shippedRecipeDrawsEveryRegisteredVariant() {
        RecipeError error;
        const auto recipe =
            RecipeParser::load(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/samples/recipes/all-variants.json"), m_registry, &error);
        QVERIFY2(recipe, qPrintable(error.message));
        QSet<QString> masked;
        for (const auto& figure : recipe->figures)
            if (figure.view == QLatin1String("mask")) masked.insert(recipe->variants[static_cast<std::size_t>(figure.variant)].id);
        QSet<QString> registered;
        for (const auto& info : m_registry) registered.insert(QString::fromStdString(info.id));
        QCOMPARE(masked, registered);
        QVERIFY(recipe->inputs.front().text.contains(QStringLiteral("Attention")));
    }

    void badRecipesAreRefusedWithTheirProblem_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("message");
        QTest::addColumn<bool>("inputError");
        QTest::newRow("not json") << QByteArray("{\"recipe\": 1,") << QStringLiteral("good.json: not valid JSON") << false;
        QTest::newRow("top-level key") << edited("\"title\"", "\"titel\"")
                                       << QStringLiteral("good.json: top level: unknown key \"titel\" (allowed: recipe, title,")
                                       << false;
        QTest::newRow("figure key") << edited("\"sidecar\": false", "\"sidecars\": false")
                                    << QStringLiteral("figures[2]: unknown key \"sidecars\"") << false;
        QTest::newRow("variant key") << edited("\"params\": {\"window\"", "\"param\": {\"window\"")
                                     << QStringLiteral("variants.lf: unknown key \"param\"") << false;
        QTest::newRow("defaults key") << edited("\"dpi\": 96", "\"dpis\": 96") << QStringLiteral("defaults: unknown key \"dpis\"")
                                      << false;
        QTest::newRow("unknown variant") << edited("\"longformer\"", "\"longformr\"")
                                         << QStringLiteral("variants.lf: unknown variant \"longformr\" (registered: ") << false;
        QTest::newRow("unknown parameter") << edited("\"window\": 1", "\"windw\": 1")
                                           << QStringLiteral("variants.lf.params: \"windw\" is not a parameter of longformer")
                                           << false;
        QTest::newRow("parameter type") << edited("\"window\": 1", "\"window\": \"wide\"")
                                        << QStringLiteral("variants.lf.params.window: expected a number") << false;
        QTest::newRow("parameter range") << edited("\"window\": 1", "\"window\": -4")
                                         << QStringLiteral("variants.lf.params: ") << false;
        QTest::newRow("newer version") << edited("\"recipe\": 1", "\"recipe\": 7")
                                       << QStringLiteral("recipe format 7 is newer than this AttnScope reads (1)") << false;
        QTest::newRow("figure variant") << edited("\"variant\": \"lf\", \"head\"", "\"variant\": \"lff\", \"head\"")
                                        << QStringLiteral("figures[0].variant: no variant named \"lff\"") << false;
        QTest::newRow("head") << edited("\"head\": 1", "\"head\": 2") << QStringLiteral("figures[0].head: expected an integer in [0, 1]")
                              << false;
        QTest::newRow("format") << edited("\"formats\": [\"svg\"]", "\"formats\": [\"jpg\"]")
                                << QStringLiteral("figures[2].formats: expected one of png, svg, pdf") << false;
        QTest::newRow("path") << edited("\"file\": \"pair\"", "\"file\": \"../pair\"")
                              << QStringLiteral("figures[1].file: \"../pair\" must be a plain file name") << false;
        QTest::newRow("duplicate") << edited("\"file\": \"links\"", "\"file\": \"pair\"")
                                   << QStringLiteral("figures[3].file: pair.png is written by an earlier figure too") << false;
        QTest::newRow("manifest") << edited("\"file\": \"links\"", "\"file\": \"manifest\"")
                                  << QStringLiteral("\"manifest.json\" is reserved for the manifest") << false;
        QTest::newRow("compare") << edited(", \"compareWith\": \"lf\"", "")
                                 << QStringLiteral("figures[1]: the compare view needs \"compareWith\"") << false;
        QTest::newRow("too many compared") << edited("\"compareWith\": \"lf\"", "\"compareWith\": [\"lf\", \"lf\", \"full\", \"lf\"]")
                                           << QStringLiteral("figures[1].compareWith: expected a variant name or an array of 1 to 3 names")
                                           << false;
        QTest::newRow("each variant without a place for its id")
            << edited("\"file\": \"links\", \"view\": \"links\", \"variant\": \"lf\"", "\"file\": \"links\", \"view\": \"links\", \"variant\": \"*\"")
            << QStringLiteral("figures[3].file: \"variant\": \"*\" draws one figure per variant; put {variant} in the file name")
            << false;
        QTest::newRow("missing text file")
            << edited("{\"text\": \"The cat sat on the mat because it was tired.\"}", "{\"textFile\": \"no-such-input.txt\"}")
            << QStringLiteral("inputs.cat.textFile: cannot read ") << true;
    }

    void badRecipesAreRefusedWithTheirProblem() {
        QFETCH(QByteArray, json);
        QFETCH(QString, message);
        QFETCH(bool, inputError);
        RecipeError error;
        QTemporaryDir dir;
        const auto recipe = RecipeParser::parse(json, dir.path(), QStringLiteral("good.json"), m_registry, &error);
        QVERIFY(!recipe);
        QVERIFY2(error.message.contains(message), qPrintable(error.message));
        QVERIFY2(error.message.startsWith(QStringLiteral("good.json: ")), qPrintable(error.message));
        QCOMPARE(error.kind == RecipeError::Kind::Input, inputError);
    }

    void invalidUtf8InputAndMissingRecipeAreInputErrors() {
        QTemporaryDir dir;
        QFile bad(dir.filePath(QStringLiteral("bad.txt")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("caf\xc3(");
        bad.close();
        RecipeError error;
        const QByteArray json = edited("{\"text\": \"The cat sat on the mat because it was tired.\"}", "{\"textFile\": \"bad.txt\"}");
        QVERIFY(!RecipeParser::parse(json, dir.path(), QStringLiteral("good.json"), m_registry, &error));
        QVERIFY2(error.message.contains(QStringLiteral("is not valid UTF-8 text")), qPrintable(error.message));
        QCOMPARE(error.kind, RecipeError::Kind::Input);

        QVERIFY(!RecipeParser::load(dir.filePath(QStringLiteral("absent.json")), m_registry, &error));
        QVERIFY2(error.message.contains(QStringLiteral("cannot read the recipe")), qPrintable(error.message));
        QVERIFY2(error.message.contains(QStringLiteral("no such file")), qPrintable(error.message));
    }

    void unwritableOutputFolderIsRefusedBeforeAnyRun() {
        RecipeError error;
        const auto recipe = RecipeParser::parse(kGood, QDir::currentPath(), QStringLiteral("good.json"), m_registry, &error);
        QVERIFY2(recipe, qPrintable(error.message));
        QTemporaryDir dir;
        QFile blocker(dir.filePath(QStringLiteral("a-file")));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        QStringList log;
        RecipeRunner runner(&m_backend, [&](const QString& line) { log << line; });
        // A folder below a regular file cannot be created, whoever runs the test (root too).
        const auto below = runner.run(*recipe, dir.filePath(QStringLiteral("a-file/figures")));
        QVERIFY(!below.ok());
        QCOMPARE(below.exitCode, 1);
        QVERIFY2(below.error.startsWith(QStringLiteral("cannot create the output folder")), qPrintable(below.error));
        const auto onFile = runner.run(*recipe, dir.filePath(QStringLiteral("a-file")));
        QVERIFY2(onFile.error.contains(QStringLiteral("is a file")), qPrintable(onFile.error));
        QVERIFY(log.isEmpty());  // nothing ran
        QCOMPARE(filesIn(dir.path()), QSet<QString>{QStringLiteral("a-file")});
    }

    void sweepFiguresDrawTheSweepTable() {
        // A table as attnscope-cli sweep writes it: a quoted label with a comma, a skipped size.
        QTemporaryDir dir;
        QFile csv(dir.filePath(QStringLiteral("sweep.csv")));
        QVERIFY(csv.open(QIODevice::WriteOnly));
        csv.write("variant,n,status,wall_s,peak_rss_mib,speedup_vs_full,memory_vs_full,note\n"
                  "\"full\",1024,ok,0.5,160.0,1.00,1.00,\"\"\n"
                  "\"full\",4096,ok,2.0,200.0,1.00,1.00,\"\"\n"
                  "\"full\",16384,over budget,,,,,\"attnscope-cli: error: needs 9 GB\"\n"
                  "\"bigbird:block=64,random=3\",1024,ok,0.4,150.0,1.25,0.94,\"\"\n"
                  "\"bigbird:block=64,random=3\",4096,ok,0.8,170.0,2.50,0.85,\"\"\n");
        csv.close();
        const QByteArray json = R"({"recipe": 1, "figures": [
            {"file": "cost", "view": "sweep", "sweep": "sweep.csv", "formats": ["png", "svg"], "width": 900, "height": 400}]})";
        RecipeError error;
        const auto recipe = RecipeParser::parse(json, dir.path(), QStringLiteral("sweep.json"), m_registry, &error);
        QVERIFY2(recipe, qPrintable(error.message));  // no inputs or variants needed
        QCOMPARE(recipe->figures[0].sweep.size(), std::size_t{5});
        QCOMPARE(recipe->figures[0].sweep[3].label, QStringLiteral("bigbird:block=64,random=3"));
        QCOMPARE(recipe->figures[0].sweep[3].variantId, QStringLiteral("bigbird"));
        QVERIFY(recipe->figures[0].sweep[2].skipped);
        QVERIFY(recipe->figures[0].sweep[2].message.contains(QStringLiteral("needs 9 GB")));

        const QString out = dir.filePath(QStringLiteral("out"));
        RecipeRunner runner(&m_backend, {});
        const auto outcome = runner.run(*recipe, out, QStringLiteral("sweep.json"));
        QVERIFY2(outcome.ok(), qPrintable(outcome.error));
        QCOMPARE(outcome.files, (QStringList{QStringLiteral("cost.png"), QStringLiteral("cost.svg"), QStringLiteral("cost.json"),
                                             QStringLiteral("manifest.json")}));
        const QImage image = QImageReader(QDir(out).filePath(QStringLiteral("cost.png"))).read();
        QVERIFY(image.width() >= 900 && image.height() >= 400);
        QFile sidecarFile(QDir(out).filePath(QStringLiteral("cost.json")));
        QVERIFY(sidecarFile.open(QIODevice::ReadOnly));
        const QJsonObject sidecar = QJsonDocument::fromJson(sidecarFile.readAll()).object();
        QCOMPARE(sidecar.value(QStringLiteral("view")).toString(), QStringLiteral("sweep"));
        QCOMPARE(sidecar.value(QStringLiteral("rows")).toArray().size(), 5);
        QCOMPARE(sidecar.value(QStringLiteral("rows")).toArray()[1].toObject().value(QStringLiteral("wall_s")).toDouble(), 2.0);
        QVERIFY2(sidecar.value(QStringLiteral("caption")).toString().contains(QStringLiteral("Not drawn: full at n = 16384")),
                 qPrintable(sidecar.value(QStringLiteral("caption")).toString()));

        // A table that is not a sweep's, a missing table, "sweep" on another view.
        QFile bad(dir.filePath(QStringLiteral("bad.csv")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("variant,n,status,wall_s,peak_rss_mib\n\"full\",1024,ok,fast,160\n");
        bad.close();
        const auto refused = [&](const QByteArray& text) {
            RecipeError e;
            const bool parsed = RecipeParser::parse(text, dir.path(), QStringLiteral("sweep.json"), m_registry, &e).has_value();
            return parsed ? QStringLiteral("parsed") : e.message;
        };
        QVERIFY2(refused(R"({"recipe": 1, "figures": [{"file": "c", "view": "sweep", "sweep": "bad.csv"}]})")
                     .contains(QStringLiteral("line 2: wall_s \"fast\"")),
                 qPrintable(refused(R"({"recipe": 1, "figures": [{"file": "c", "view": "sweep", "sweep": "bad.csv"}]})")));
        QVERIFY(refused(R"({"recipe": 1, "figures": [{"file": "c", "view": "sweep", "sweep": "none.csv"}]})")
                    .contains(QStringLiteral("figures[0].sweep: cannot read")));
        QVERIFY(refused(R"({"recipe": 1, "figures": [{"file": "c", "view": "sweep"}]})").contains(QStringLiteral("needs \"sweep\"")));
        QVERIFY(refused(edited(R"({"file": "links", "view": "links", "variant": "lf", "formats": ["png"]})",
                               R"({"file": "links", "view": "links", "variant": "lf", "sweep": "sweep.csv"})"))
                    .contains(QStringLiteral("only read by the sweep view")));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestRecipe)
#include "test_recipe.moc"
