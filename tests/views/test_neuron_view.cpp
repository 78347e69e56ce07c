// The Neuron tab on a real run: the strongest keys drawn strongest first, each row's cells the
// products q_c · k_c (summing to the dot), the bars the result's weights (the heatmap's), the query
// following the hovered one and the head the selected one; an empty state before any run.

#include "support/qt_test_support.h"

#include "views/data/inspection_state.h"
#include "views/neuron/neuron_view.h"

#include "views/explicit_run.h"

#include <QTest>

using namespace attnscope;
using attnscope::views::InspectionState;
using attnscope::views::NeuronView;


class TestNeuronView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void drawsTheStrongestKeysProductsAndWeights() {
        InspectionState state;
        NeuronView view;
        view.setInspectionState(&state);
        QVERIFY(view.shownKeys().empty());
        QVERIFY(view.explanation().contains(QStringLiteral("Run a variant")));
        const auto run = attnscope::testing::randomExplicitRun(2, 40, 8, "full", {{"causal", true}}, 4);
        QVERIFY(run);
        view.setResult(run);
        view.setQuery(30);
        QCOMPARE(static_cast<int>(view.shownKeys().size()), NeuronView::kShownKeys);
        float previous = 2;
        for (const engine::NeuronKey& key : view.shownKeys()) {
            QVERIFY(key.weight <= previous);  // strongest first
            previous = key.weight;
            QVERIFY(key.index <= 30);  // causal: the strongest are all allowed here
            QCOMPARE(key.weight, run->results[0].weightAt(0, 30, key.index));
            double sum = 0;
            for (float p : key.product) sum += p;
            QVERIFY(std::abs(sum - key.dot) < 1e-5);
        }
        QVERIFY(view.cellText(0, 3).contains(QStringLiteral("dimension 3")));
        QVERIFY(view.cellText(NeuronView::kShownKeys, 0).isEmpty());
        // a query with fewer admissible keys than rows: they come first, then zero weights
        view.setQuery(2);
        QCOMPARE(view.shownKeys().front().index <= 2, true);
        QCOMPARE(view.shownKeys()[3].weight, 0.0f);

        // the head and the hovered query follow the state
        state.setHead(1);
        QCOMPARE(view.terms()->head, 1);
        state.setHovered(17, 4);
        QCOMPARE(view.query(), 17);
        QCOMPARE(view.terms()->query, std::int64_t{17});
        view.setResult(nullptr);
        QVERIFY(view.shownKeys().empty());
    }

    // A run with q and k before a rotation (here: every feature halved, as a stand-in the view
    // cannot tell from a real turn): the box is offered, the cells show the products before it,
    // a quarter of those after; the score parts are the scaled dot and no terms.
    void showsTheCellsBeforeTheRotation() {
        const auto plain = attnscope::testing::randomExplicitRun(2, 12, 4, "full", {}, 6);
        QVERIFY(plain);
        auto run = std::make_shared<engine::RunResult>(*plain);
        engine::RotaryDistanceProfile profile;
        profile.heads = 2;
        profile.n = 12;
        profile.headDim = 4;
        profile.unrotatedQ.assign(run->q.data.get(), run->q.data.get() + run->q.numel());
        profile.unrotatedK.assign(run->k.data.get(), run->k.data.get() + run->k.numel());
        for (float& x : profile.unrotatedQ) x *= 0.5f;
        for (float& x : profile.unrotatedK) x *= 0.5f;
        run->rotaryProfile = profile;
        InspectionState state;
        NeuronView view;
        view.setInspectionState(&state);
        view.setResult(plain);
        QVERIFY(!view.rotationOffered());
        view.setResult(run);
        view.setQuery(5);
        QVERIFY(view.rotationOffered());
        QVERIFY(!view.showsBeforeRotation());
        view.setBeforeRotation(true);
        QVERIFY(view.showsBeforeRotation());
        const engine::NeuronKey& key = view.shownKeys().front();
        QVERIFY(std::abs(key.dotBeforeRotation - key.dot / 4) < 1e-5);
        QVERIFY(std::abs(key.productBeforeRotation[1] - key.product[1] / 4) < 1e-6);
        QVERIFY(view.cellText(0, 1).contains(QStringLiteral("before the rotation")));
        QVERIFY(view.explanation().contains(QStringLiteral("before the rotation")));
        const auto [dot, terms] = view.scoreParts(0);
        QVERIFY(std::abs(dot - key.scaled) < 1e-9);
        QCOMPARE(terms, 0.0);
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestNeuronView)

#include "test_neuron_view.moc"
