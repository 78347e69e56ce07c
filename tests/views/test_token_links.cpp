// Token link view: the drawn lines are the result's weights, filtered by threshold, window and
// isolation; attention leaving the window is accounted for.

#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/inspection_state.h"
#include "views/token_links.h"

#include <QTest>

using attnscope::testing::fixtureWeight;
using attnscope::views::InspectionState;
using attnscope::views::TokenLink;
using attnscope::views::TokenLinks;

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
};

ATTNSCOPE_REGISTER_QT_TEST(TestTokenLinks)
#include "test_token_links.moc"
