#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/diagnostics/approximation_view.h"
#include "views/data/inspection_state.h"

#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include <cmath>

using attnscope::testing::fixtureWeight;
using attnscope::views::ApproximationView;
using attnscope::views::InspectionState;
namespace engine = attnscope::engine;

namespace {

constexpr int kHeads = 2, kN = 5;

float impliedWeight(int h, int i, int j) { return fixtureWeight(h, i, j) * (1.0f + 0.1f * float((i + 2 * j) % 3 - 1)); }

// results[0]: a "performer" with hand-made implied weights; results[1]: the exact fixture as "full".
std::shared_ptr<const engine::RunResult> makePair() {
    auto run = std::const_pointer_cast<engine::RunResult>(attnscope::testing::makeDenseResult(kHeads, kN));
    engine::AttentionResult exact = run->results[0];
    engine::AttentionResult approx = exact;
    approx.variantId = "performer";
    std::vector<float> w(static_cast<std::size_t>(kHeads) * kN * kN);
    for (int h = 0; h < kHeads; ++h)
        for (int i = 0; i < kN; ++i)
            for (int j = 0; j < kN; ++j) w[(static_cast<std::size_t>(h) * kN + i) * kN + j] = impliedWeight(h, i, j);
    approx.weights = engine::makeDenseWeights(kHeads, kN, kN, std::move(w));
    run->results = {approx, exact};
    return run;
}

}  // namespace

class TestApproximationView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void errorMapIsImpliedMinusExactCellByCell() {
        const auto run = makePair();
        InspectionState state;
        ApproximationView view;
        view.setInspectionState(&state);
        view.setResult(run);
        QVERIFY2(view.hasComparison(), qPrintable(view.message()));
        QCOMPARE(view.approximationId(), QStringLiteral("performer"));
        state.setHead(1);
        QCOMPARE(view.shownHead(), 1);
        QCOMPARE(view.dataSize(), QSize(kN, kN));
        double largest = 0;
        const QVector<double> rows = view.rowL1Errors();
        QCOMPARE(rows.size(), kN);
        for (int i = 0; i < kN; ++i) {
            double l1 = 0;
            for (int j = 0; j < kN; ++j) {
                const double a = impliedWeight(1, i, j), e = fixtureWeight(1, i, j);
                QCOMPARE(view.impliedCell(i, j), a);
                QCOMPARE(view.exactCell(i, j), e);
                QCOMPARE(view.errorCell(i, j), a - e);
                l1 += std::abs(a - e);
                largest = std::max(largest, std::abs(a - e));
            }
            QVERIFY(std::abs(rows[i] - l1) < 1e-12);
        }
        // Diverging and symmetric around 0.
        QCOMPARE(view.errorRangeLimit(), largest);
        double mean = 0;
        for (int h = 0; h < kHeads; ++h)
            for (int i = 0; i < kN; ++i)
                for (int j = 0; j < kN; ++j) mean += std::abs(double(impliedWeight(h, i, j)) - fixtureWeight(h, i, j));
        QVERIFY(std::abs(ApproximationView::meanRowL1Error(run->results[0], run->results[1]) - mean / (kHeads * kN)) < 1e-12);
    }

    void withoutAnExactResultItSaysSo() {
        auto run = std::const_pointer_cast<engine::RunResult>(makePair());
        run->results.pop_back();
        ApproximationView view;
        view.setResult(run);
        QVERIFY(!view.hasComparison());
        QVERIFY2(view.message().contains(QStringLiteral("full")), qPrintable(view.message()));
    }

    void errorCurveIsRequestedAndPlotted() {
        ApproximationView view;
        view.setResult(makePair());
        QSignalSpy requested(&view, &ApproximationView::errorCurveRequested);
        QVERIFY(view.curveButton()->isEnabled());
        view.curveValuesEdit()->setText(QStringLiteral("64, 8, 512"));
        QTest::mouseClick(view.curveButton(), Qt::LeftButton);
        QCOMPARE(requested.count(), 1);
        QCOMPARE(requested.at(0).at(0).toString(), QStringLiteral("performer"));
        QCOMPARE(requested.at(0).at(1).toString(), QStringLiteral("nb_features"));
        QCOMPARE(requested.at(0).at(2).value<QVector<double>>(), (QVector<double>{8, 64, 512}));
        QCOMPARE(requested.at(0).at(3).toDouble(), 0.0);  // Q, K as they are unless asked
        QVERIFY(view.curveScaleBox()->isVisibleTo(&view));  // (a Performer curve)
        QVERIFY(!view.curveButton()->isEnabled());  // one curve at a time
        view.setErrorCurve(QStringLiteral("performer"), QStringLiteral("nb_features"), {8, 64, 512}, {0.5, 0.2, 0.05});
        QCOMPARE(view.curveValues(), (QVector<double>{8, 64, 512}));
        QCOMPARE(view.curveErrors(), (QVector<double>{0.5, 0.2, 0.05}));
        QVERIFY(view.curveButton()->isEnabled());

        view.curveValuesEdit()->setText(QStringLiteral("8, x"));
        view.requestErrorCurve();
        QCOMPARE(requested.count(), 1);
        QVERIFY(view.curveStatus().contains(QStringLiteral("x")));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestApproximationView)
#include "test_approximation_view.moc"
