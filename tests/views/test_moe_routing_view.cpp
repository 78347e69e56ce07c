// The Experts tab as a user drives it: the controls reach the router (capacity by hand, drops
// falling as the capacity rises, top-k), the strip strikes through exactly the dropped tokens,
// and the routing is the router's own on the same logits.

#include "support/qt_test_support.h"

#include "views/moe/expert_layers_grid.h"
#include "views/moe/routing_view.h"

#include <attnscope/moe_router.h>
#include <attnscope/safetensors.h>
#include <attnscope/tokenize.h>

#include <QCheckBox>
#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QComboBox>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTest>

#include <cmath>

using attnscope::views::MoeRoutingView;
namespace engine = attnscope::engine;

namespace {

engine::TokenizedInput words(const char* text) {
    engine::InputSpec spec;
    spec.text = text;
    spec.tokenizer = engine::TokenizerKind::Words;
    auto tokens = engine::tokenize(spec);
    return tokens.ok() ? tokens.value() : engine::TokenizedInput{};
}

}  // namespace

class TestMoeRoutingView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void controlsReachTheRouter() {
        MoeRoutingView view;
        view.resize(1000, 700);
        view.show();
        QVERIFY(!view.routing());
        const auto input = words("the cat sat on the mat because it was very tired");  // 11 words
        QCOMPARE(input.tokens.size(), std::size_t{11});
        view.setTokens(input, 3);
        QVERIFY2(view.routing().has_value(), qPrintable(view.message()));
        const engine::Routing& r = *view.routing();
        QCOMPARE(r.n, std::int64_t{11});
        QCOMPARE(r.experts, std::int64_t{8});
        QCOMPARE(r.k, std::int64_t{1});
        // capacity = ⌈k · n / E · factor⌉ = ⌈11 / 8 · 1.25⌉ = ⌈1.72⌉ = 2
        QCOMPARE(r.capacity, std::int64_t{2});
        QVERIFY2(view.message().contains(QStringLiteral("Capacity 2 tokens per expert")), qPrintable(view.message()));

        // the router's own answer on the same logits and options
        auto again = engine::routeTokens(view.logits(), view.options());
        QVERIFY(again.ok());
        QCOMPARE(again->expert, r.expert);
        QCOMPARE(again->kept, r.kept);
        // and the logits are the command line's: seeded token states times a seeded router
        auto logits = engine::routerLogits(engine::randomTokenStates(input, MoeRoutingView::kStateDim, 3),
                                           engine::randomRouter(8, MoeRoutingView::kStateDim, 3));
        QVERIFY(logits.ok());
        QCOMPARE(logits->f32, view.logits().f32);

        // every dropped token is struck through in the strip, and only those
        QCOMPARE(static_cast<std::int64_t>(view.stripHtml().count(QStringLiteral("line-through"))), r.dropped);

        // raising the capacity never drops more; dropless drops none
        std::int64_t previous = r.dropped;
        for (int hundredths : {150, 200, 300, 400}) {
            view.capacitySlider()->setValue(hundredths);
            QVERIFY(view.routing()->dropped <= previous);
            previous = view.routing()->dropped;
        }
        view.capacitySlider()->setValue(0);
        QCOMPARE(view.routing()->capacity, std::int64_t{0});
        QCOMPARE(view.routing()->dropped, std::int64_t{0});
        QVERIFY(view.message().contains(QStringLiteral("dropless")));
        QCOMPARE(view.stripHtml().count(QStringLiteral("line-through")), 0);
    }

    void topKAndExpertCount() {
        MoeRoutingView view;
        view.setTokens(words("one two three four five six seven eight"), 1);
        QVERIFY(!view.kSpin()->isEnabled());  // switch is top-1
        view.policyCombo()->setCurrentIndex(view.policyCombo()->findData(QStringLiteral("topk")));
        QVERIFY(view.kSpin()->isEnabled());
        QCOMPARE(view.routing()->k, std::int64_t{2});
        view.normalizeCheck()->setChecked(true);
        for (std::int64_t t = 0; t < view.routing()->n; ++t)
            QVERIFY(std::abs(view.routing()->gate[static_cast<std::size_t>(2 * t)] + view.routing()->gate[static_cast<std::size_t>(2 * t + 1)] - 1.0) < 1e-5);
        // fewer experts: k can never exceed E
        view.expertsSpin()->setValue(2);
        QCOMPARE(view.routing()->experts, std::int64_t{2});
        QCOMPARE(view.kSpin()->maximum(), 2);
        view.kSpin()->setValue(2);
        // k = E: every token goes to both experts
        view.capacitySlider()->setValue(0);
        for (std::int64_t t = 0; t < view.routing()->n; ++t)
            QVERIFY(view.routing()->expert[static_cast<std::size_t>(2 * t)] != view.routing()->expert[static_cast<std::size_t>(2 * t + 1)]);
        QCOMPARE(view.routing()->expertCounts, (std::vector<std::int64_t>{8, 8}));
    }

    // Export Data on the Experts tab: the shown routing, as the CLI writes it.
    void exportsTheShownRoutingAsSafetensorsAndCsv() {
        MoeRoutingView view;
        QTemporaryDir dir;
        QVERIFY(view.exportRouting(dir.filePath(QStringLiteral("none.csv"))).contains(QStringLiteral("Nothing to export")));
        view.setTokens(words("one two three four five six seven eight"), 3);
        view.expertsSpin()->setValue(4);
        view.capacitySlider()->setValue(50);  // capacity ceil(8 / 4 · 0.5) = 1: drops
        const engine::Routing& shown = *view.routing();
        QVERIFY(shown.dropped > 0);

        QCOMPARE(view.exportRouting(dir.filePath(QStringLiteral("r.safetensors"))), QString());
        auto file = engine::SafetensorsFile::open(dir.filePath(QStringLiteral("r.safetensors")).toStdString());
        QVERIFY(file.ok());
        QCOMPARE((*file)->read("moe.expert")->i64, shown.expert);
        QCOMPARE((*file)->read("moe.kept")->u8, shown.kept);
        QCOMPARE((*file)->read("moe.router_probs")->f32, shown.probs);

        QCOMPARE(view.exportRouting(dir.filePath(QStringLiteral("r.csv"))), QString());
        QFile csv(dir.filePath(QStringLiteral("r.csv")));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1 + 8);
        for (int t = 0; t < 8; ++t) {
            const QStringList cells = lines[t + 1].split(QLatin1Char(','));
            QCOMPARE(cells.size(), 8);
            QCOMPARE(cells[1], QStringLiteral("\"%1\"").arg(QString::fromStdString(words("one two three four five six seven eight").tokens[static_cast<std::size_t>(t)].text)));
            QCOMPARE(cells[3].toLongLong(), shown.expert[static_cast<std::size_t>(t)]);
            QCOMPARE(cells[7].toInt(), int{shown.kept[static_cast<std::size_t>(t)]});
        }
        QVERIFY(!view.exportRouting(dir.filePath(QStringLiteral("missing/r.csv"))).isEmpty());
    }

    // A model layer's own router: its logits routed with the model's fixed slots, its expert
    // count locked; the slider then routes the same logits by factor; a text run brings the
    // seeded router back.
    void aModelsRouterRoutesItsOwnLogits() {
        MoeRoutingView view;
        view.resize(1000, 700);
        view.show();
        const auto input = words("one two three four five");
        engine::ModelRouting model;
        // tokens 0, 1, 3 prefer expert 1, tokens 2, 4 expert 0 (worked by hand)
        model.logits = engine::PlainTensor::fromF32({5, 2}, {0.f, 2.f, 0.f, 1.f, 3.f, 0.f, -1.f, 1.f, 1.f, 0.f});
        model.expertCapacity = 2;
        view.setModelRouting(input, model, 1);
        QVERIFY(view.showsModelRouter());
        QVERIFY2(view.routing().has_value(), qPrintable(view.message()));
        const engine::Routing& r = *view.routing();
        QCOMPARE(r.experts, std::int64_t{2});
        QCOMPARE(r.capacity, std::int64_t{2});
        QCOMPARE(r.expert, (std::vector<std::int64_t>{1, 1, 0, 1, 0}));
        QCOMPARE(int{r.kept[3]}, 0);  // expert 1's third token: past its 2 slots
        QCOMPARE(r.dropped, std::int64_t{1});
        QVERIFY(!view.expertsSpin()->isEnabled());
        QCOMPARE(view.expertsSpin()->value(), 2);
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("moeSource"))->text().contains(QStringLiteral("the model's layer 1")));
        // the slider: ⌈5 / 2 · 2.00⌉ = 5 slots, nothing dropped
        view.capacitySlider()->setValue(200);
        QCOMPARE(view.routing()->capacity, std::int64_t{5});
        QCOMPARE(view.routing()->dropped, std::int64_t{0});
        QCOMPARE(view.routing()->expert, (std::vector<std::int64_t>{1, 1, 0, 1, 0}));
        view.setTokens(input, 3);
        QVERIFY(!view.showsModelRouter());
        QVERIFY(view.expertsSpin()->isEnabled());
        QVERIFY(!view.pages()->isTabEnabled(1));
    }

    // DeepSeek-V3's router (tests/engine/plain/test_moe_router.cpp worked it by hand): the view
    // routes the model's logits with the model's own sigmoid scores, correction bias, groups and
    // scale, which have no controls: token 0 goes to experts 2 and 3, gates σ(±1) · 2.5.
    void routesWithTheModelsOwnDeepSeekRules() {
        MoeRoutingView view;
        const auto input = words("one");
        engine::ModelRouting model;
        model.logits = engine::PlainTensor::fromF32({1, 4}, {0.f, 2.f, 1.f, -1.f});
        model.layerLogits = {model.logits};
        model.k = 2;
        model.normalize = true;
        model.scoring = "sigmoid";
        model.layerChoiceBias = {{0.f, 0.f, 0.3f, 0.3f}};
        model.expertGroups = 2;
        model.keptGroups = 1;
        model.groupScore = "top2";
        model.gateScale = 2.5;
        view.setModelRouting(input, model, 0);
        QVERIFY2(view.routing().has_value(), qPrintable(view.message()));
        QCOMPARE(view.routing()->expert, (std::vector<std::int64_t>{2, 3}));
        QVERIFY(std::abs(view.routing()->gate[0] - 2.5 / (1 + std::exp(-1.0))) < 1e-5);
        const QString source = view.findChild<QLabel*>(QStringLiteral("moeSource"))->text();
        for (const char* part : {"σ(logit)", "correction bias", "best 1 of 2 expert groups", "Gates × 2.5"})
            QVERIFY2(source.contains(QString::fromUtf8(part)), qPrintable(source));
    }

    // All layers: every expert layer of the model (a dense one between them left out) routed with
    // the same options, the grid's cells and the report's specialisation and load.
    void allLayersShowEveryExpertLayer() {
        MoeRoutingView view;
        view.resize(1000, 700);
        view.show();
        const auto input = words("one two one two");
        engine::ModelRouting model;
        model.logits = engine::PlainTensor::fromF32({4, 2}, {2.f, 0.f, 2.f, 0.f, 2.f, 0.f, 0.f, 2.f});  // layer 2
        model.layerLogits = {engine::PlainTensor::fromF32({4, 2}, {0.f, 1.f, 1.f, 0.f, 0.f, 1.f, 1.f, 0.f}),  // layer 0
                             engine::PlainTensor{},                                                          // dense
                             model.logits};
        model.expertCapacity = 2;
        view.setModelRouting(input, model, 2);
        QVERIFY(view.pages()->isTabEnabled(1));
        view.pages()->setCurrentIndex(1);
        QCOMPARE(view.layersGrid()->layerCount(), 2);
        // layer 2: tokens 0-2 choose expert 0 (slots 2: token 2 dropped), token 3 expert 1
        const QString html = view.layersReportHtml();
        QVERIFY2(html.contains(QStringLiteral("Tokens each expert of layer 2 takes most")), qPrintable(html));
        QVERIFY2(html.contains(QStringLiteral("one ×2")), qPrintable(html));  // expert 0 took "one" twice, "two" once
        QVERIFY2(html.contains(QStringLiteral("2 / 3")), qPrintable(html));   // expert 0 kept 2 of 3 in layer 2
        QTest::qWait(10);
        const QRect grid = view.layersGrid()->rect();
        const QString cell = view.layersGrid()->describeAt(QPoint(grid.width() - 10, 2 + 22 + 5));  // layer 2, last token
        QVERIFY2(cell.startsWith(QStringLiteral("layer 2, token 3 'two': expert 1")), qPrintable(cell));
        const QString first = view.layersGrid()->describeAt(QPoint(50, 5));  // layer 0, token 0
        QVERIFY2(first.startsWith(QStringLiteral("layer 0, token 0 'one': expert 1")), qPrintable(first));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestMoeRoutingView)
#include "test_moe_routing_view.moc"
