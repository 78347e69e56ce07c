// Token link view: the drawn lines are the result's weights, filtered by threshold, window and
// isolation; attention leaving the window is accounted for.

#include "support/qt_test_support.h"
#include "views/explicit_run.h"
#include "views/test_fixtures.h"

#include "views/data/inspection_state.h"
#include "views/links/token_links.h"

#include <QTest>

using attnscope::testing::fixtureWeight;
using attnscope::views::InspectionState;
using attnscope::views::TokenLink;
using attnscope::views::TokenLinks;
namespace engine = attnscope::engine;

class TestTokenLinks : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void linesCarryTheResultWeights() {
        InspectionState state;
        TokenLinks view;
        view.setInspectionState(&state);
        view.setResult(attnscope::testing::makeDenseResult(2, 5));
        state.setHead(1);
        view.setThreshold(0.0);
        const auto links = view.visibleLinks();
        QCOMPARE(links.size(), std::size_t{25});
        for (const TokenLink& l : links) QCOMPARE(l.weight, fixtureWeight(1, l.query, l.key));
        QCOMPARE(view.headMax(), fixtureWeight(1, 4, 4));
        QCOMPARE(view.tokenText(1), QStringLiteral("<b>x</b>"));  // plain text, drawn as is
    }

    void theAutomaticThresholdDrawsAFewLinksPerTokenAtAnyLength() {
        for (int n : {11, 600}) {
            InspectionState state;
            TokenLinks view;
            view.setInspectionState(&state);
            view.resize(900, 600);
            view.show();
            QTRY_VERIFY(view.isVisible());
            view.setResult(attnscope::testing::makeDenseResult(1, n));
            QVERIFY(view.autoThreshold());
            // The window holds the tokens whose labels fit the height (a label per text line),
            // never more than the text has.
            const int shown = std::min(view.windowSize(), n - view.windowFirst());
            QVERIFY2(shown >= std::min(n, 11) && shown <= TokenLinks::kMaxWindow, qPrintable(QString::number(shown)));
            // About kAutoLinksPerToken links per shown token (ties at the cut may add a few).
            const auto links = view.visibleLinks().size();
            const std::size_t wanted = static_cast<std::size_t>(TokenLinks::kAutoLinksPerToken * shown);
            QVERIFY2(links >= std::min<std::size_t>(wanted, static_cast<std::size_t>(shown * shown)) && links <= wanted + 2,
                     qPrintable(QStringLiteral("n = %1: %2 links for %3 tokens").arg(n).arg(links).arg(shown)));
            // A threshold chosen by hand stays.
            view.setThreshold(0.5);
            QVERIFY(!view.autoThreshold());
            view.setResult(attnscope::testing::makeDenseResult(1, n));
            QCOMPARE(view.threshold(), 0.5);
            view.setAutoThreshold(true);
            QVERIFY(view.threshold() != 0.5);
            QCOMPARE(view.visibleLinks().size(), links);
        }
    }

    void theWindowFollowsTheHeight() {
        InspectionState state;
        TokenLinks view;
        view.setInspectionState(&state);
        view.setResult(attnscope::testing::makeDenseResult(1, 400));
        view.resize(900, 300);
        view.show();
        QTRY_VERIFY(view.isVisible());
        const int small = view.windowSize();
        view.resize(900, 900);
        QTRY_VERIFY(view.windowSize() > small * 2);
        QVERIFY(view.windowSize() <= TokenLinks::kMaxWindow);
    }

    void thresholdKeepsOnlyStrongLinks() {
        InspectionState state;
        TokenLinks view;
        view.setInspectionState(&state);
        view.setResult(attnscope::testing::makeDenseResult(1, 5));
        // Weights are (31 q + k + 1) / 4096, the largest 129 / 4096. Threshold 0.5 keeps
        // 31 q + k + 1 >= 64.5: for q = 2 (63 + k) the keys 2, 3, 4; every key of q = 3 and 4.
        view.setThreshold(0.5);
        int expected = 0;
        for (int q = 0; q < 5; ++q)
            for (int k = 0; k < 5; ++k) expected += fixtureWeight(0, q, k) >= 0.5f * fixtureWeight(0, 4, 4);
        QCOMPARE(static_cast<int>(view.visibleLinks().size()), expected);
        QCOMPARE(expected, 3 + 5 + 5);
        for (const TokenLink& l : view.visibleLinks()) QVERIFY(l.weight >= 0.5f * view.headMax());
    }

    void hoveringATokenIsolatesItsLinks() {
        InspectionState state;
        TokenLinks view;
        view.setInspectionState(&state);
        view.setResult(attnscope::testing::makeDenseResult(1, 6));
        view.setThreshold(0.0);
        view.isolateQuery(3);
        auto links = view.visibleLinks();
        QCOMPARE(links.size(), std::size_t{6});
        for (const TokenLink& l : links) QCOMPARE(l.query, 3);
        view.isolateQuery(-1);
        view.isolateKey(2);
        links = view.visibleLinks();
        QCOMPARE(links.size(), std::size_t{6});
        for (const TokenLink& l : links) QCOMPARE(l.key, 2);
    }

    void longInputsScrollAWindowAndCountTheMassOutside() {
        InspectionState state;
        TokenLinks view;
        view.resize(600, 400);
        view.setInspectionState(&state);
        view.setResult(attnscope::testing::makeDenseResult(1, 100));
        view.setThreshold(0.0);
        view.setWindow(40, 10);
        QCOMPARE(view.windowFirst(), 40);
        const auto links = view.visibleLinks();
        QCOMPARE(links.size(), std::size_t{100});
        for (const TokenLink& l : links) {
            QVERIFY(l.query >= 40 && l.query < 50);
            QVERIFY(l.key >= 40 && l.key < 50);
        }
        double before = 0, after = 0;
        for (int k = 0; k < 40; ++k) before += fixtureWeight(0, 45, k);
        for (int k = 50; k < 100; ++k) after += fixtureWeight(0, 45, k);
        QVERIFY(std::abs(view.outsideMass(45).before - before) < 1e-5);
        QVERIFY(std::abs(view.outsideMass(45).after - after) < 1e-5);
        view.setWindow(1000, 10);  // clamped to the last full window
        QCOMPARE(view.windowFirst(), 90);
        view.setHorizontal(true);
        QVERIFY(view.horizontal());
    }

    // A head past kMaxHeadScanWeights is not visited whole on the window's thread: the largest weight
    // is the visible window's (exactly), the status says so, and scrolling follows it.
    void aHugeHeadTakesItsLargestWeightFromTheWindow() {
        const auto run = attnscope::testing::randomExplicitRun(1, 12000, 8, "linear", {}, 9);  // 1.44·10⁸ weights
        QVERIFY(run);
        InspectionState state;
        TokenLinks view;
        view.resize(600, 400);
        view.setInspectionState(&state);
        view.setResult(run);
        view.setWindow(5000, 20);
        QVERIFY(view.headMaxOfWindow());
        const auto windowMax = [&](std::int64_t first) {
            const engine::WeightTile t = run->results[0].weights->tile(0, first, first + 20, first, first + 20);
            float largest = 0;
            for (float w : t.weights) largest = std::max(largest, std::abs(w));
            return largest;
        };
        QCOMPARE(view.headMax(), windowMax(5000));
        view.setWindow(9000, 20);
        QCOMPARE(view.headMax(), windowMax(9000));
        QVERIFY(windowMax(9000) != windowMax(5000));
        const auto small = attnscope::testing::randomExplicitRun(1, 300, 8, "linear", {}, 9);
        view.setResult(small);
        QVERIFY(!view.headMaxOfWindow());
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestTokenLinks)
#include "test_token_links.moc"
