// The Diagnostics page of sparse variants: keys kept per row and the exact softmax mass on them,
// against sums worked out from the fixture; top-k's and entmax's own numbers in its text.
#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/diagnostics/sparsity_view.h"
#include "views/data/inspection_state.h"

#include <QTest>

using attnscope::testing::fixtureWeight;
using attnscope::views::InspectionState;
using attnscope::views::SparsityView;
namespace engine = attnscope::engine;

namespace {

constexpr int kHeads = 2, kN = 6;

// A band |i − j| <= 1 of the given variant, then the dense fixture as `full`.
std::shared_ptr<engine::RunResult> makeBandBesideFull(const std::string& id) {
    auto run = std::make_shared<engine::RunResult>(*attnscope::testing::makeDenseResult(kHeads, kN));
    // Each band row renormalised to sum to 1 (as a sparse softmax is): its weights differ from the
    // mass exact softmax puts on the same keys.
    engine::AttentionResult band = attnscope::testing::makeBandResult(id, kHeads, kN, [](int h, int i, int j) {
        float sum = 0;
        for (int k = std::max(0, i - 1); k <= std::min(kN - 1, i + 1); ++k) sum += fixtureWeight(h, i, k);
        return fixtureWeight(h, i, j) / sum;
    });
    run->results.insert(run->results.begin(), std::move(band));
    return run;
}

}  // namespace

class TestSparsityView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void keptKeysAndMassAreTheBandsAgainstFull() {
        InspectionState state;
        SparsityView view;
        view.setInspectionState(&state);
        view.setResult(makeBandBesideFull("longformer"));
        for (int head : {0, 1}) {
            state.setHead(head);
            QCOMPARE(view.shownHead(), head);
            QCOMPARE(view.keptKeys().size(), kN);
            QCOMPARE(view.keptMass().size(), kN);
            for (int i = 0; i < kN; ++i) {
                double mass = 0;
                for (int j = std::max(0, i - 1); j <= std::min(kN - 1, i + 1); ++j) mass += fixtureWeight(head, i, j);
                QCOMPARE(view.keptKeys()[i], i == 0 || i == kN - 1 ? 2.0 : 3.0);
                QVERIFY(std::abs(view.keptMass()[i] - mass) < 1e-6);
                QVERIFY(mass < 0.99);  // (the fixture's rows spread over every key: the band keeps part)
            }
            QVERIFY2(view.text().contains(QStringLiteral("window")), qPrintable(view.text()));
            QVERIFY2(view.text().contains(QStringLiteral("exact softmax's mass")), qPrintable(view.text()));
        }
    }

    void withoutFullItSaysHowToGetTheMass() {
        auto run = makeBandBesideFull("bigbird");
        run->results.pop_back();  // no `full`
        SparsityView view;
        view.setResult(run);
        QCOMPARE(view.keptKeys().size(), kN);
        QVERIFY(view.keptMass().isEmpty());
        QVERIFY2(view.text().contains(QStringLiteral("F5")), qPrintable(view.text()));
    }

    void topkAndEntmaxExplainTheirCut() {
        auto topk = makeBandBesideFull("topk");
        topk->results[0].params["k"] = std::int64_t{2};
        topk->results[0].diagnostics["threshold"] = engine::PlainTensor::fromF32({kHeads, kN}, std::vector<float>(kHeads * kN, 0.25f));
        std::vector<std::int64_t> kept(kHeads * kN, 2);
        kept[3] = 3;  // a tie at the threshold in head 0, row 3
        topk->results[0].diagnostics["kept"] = engine::PlainTensor::fromI64({kHeads, kN}, kept);
        SparsityView view;
        view.setResult(topk);
        QVERIFY2(view.text().contains(QStringLiteral("k = 2")) && view.text().contains(QStringLiteral("averages 0.25")) &&
                     view.text().contains(QStringLiteral("1 rows keep more than k")),
                 qPrintable(view.text()));

        auto entmax = makeBandBesideFull("entmax");
        entmax->results[0].diagnostics["alpha"] = engine::PlainTensor::fromF32({kHeads}, {1.5f, 1.5f});
        entmax->results[0].stats["tau"] = engine::PlainTensor::fromF32({kHeads, kN}, std::vector<float>(kHeads * kN, -0.5f));
        entmax->results[0].diagnostics["zeros"] = engine::PlainTensor::fromI64({kHeads, kN}, std::vector<std::int64_t>(kHeads * kN, 3));
        view.setResult(entmax);
        QVERIFY2(view.text().contains(QStringLiteral("α = 1.5")) && view.text().contains(QStringLiteral("τ averages -0.5")) &&
                     view.text().contains(QStringLiteral("3.0 exact zeros")),
                 qPrintable(view.text()));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestSparsityView)
#include "test_sparsity_view.moc"
