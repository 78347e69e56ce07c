#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/diagnostics/diagnostics_stack.h"
#include "views/diagnostics/rotary_profile_view.h"
#include "views/data/inspection_state.h"

#include <QTabWidget>
#include <QTest>

using attnscope::views::DiagnosticsStack;
using attnscope::views::InspectionState;
using attnscope::views::RotaryProfileView;
namespace engine = attnscope::engine;

namespace {

constexpr int kHeads = 4, kN = 5;

// A `full` run on a layer of a grouped-query model (2 key/value heads) with a hand-made profile:
// head h at distance δ scores (h + 1) / (δ + 1) with the rotation and h − δ without.
std::shared_ptr<engine::RunResult> makeRotaryRun(double attentionFactor = 1.0) {
    auto run = std::const_pointer_cast<engine::RunResult>(attnscope::testing::makeDenseResult(kHeads, kN));
    run->modelLayer = 3;
    run->modelKvHeads = 2;
    engine::RotaryDistanceProfile profile;
    profile.heads = kHeads;
    profile.n = kN;
    profile.attentionFactor = attentionFactor;
    for (int h = 0; h < kHeads; ++h)
        for (int d = 0; d < kN; ++d) {
            profile.rotated.push_back(static_cast<float>(h + 1) / static_cast<float>(d + 1));
            profile.unrotated.push_back(static_cast<float>(h - d));
        }
    run->rotaryProfile = profile;
    return run;
}

}  // namespace

class TestRotaryProfileView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void plotsTheSelectedHeadsCurvesWithAndWithoutTheRotation() {
        const auto run = makeRotaryRun();
        InspectionState state;
        RotaryProfileView view;
        view.setInspectionState(&state);
        view.setResult(run);
        QVERIFY(view.message().isEmpty());
        for (int head : {0, 3}) {
            state.setHead(head);
            QCOMPARE(view.shownHead(), head);
            const QVector<double> rotated = view.plottedRotated(), unrotated = view.plottedUnrotated();
            QCOMPARE(rotated.size(), kN);
            QCOMPARE(unrotated.size(), kN);
            for (int d = 0; d < kN; ++d) {
                QCOMPARE(rotated[d], double(static_cast<float>(head + 1) / static_cast<float>(d + 1)));
                QCOMPARE(unrotated[d], double(head - d));
            }
        }
        // Head 3 of 4 over 2 key/value heads reads key/value head 1
        QVERIFY2(view.title().contains(QStringLiteral("layer 3, head 3 (kv 1)")), qPrintable(view.title()));
    }

    void saysWhyWhenTheRunHasNoProfile() {
        RotaryProfileView view;
        view.setResult(attnscope::testing::makeDenseResult(1, 3));
        QVERIFY2(view.message().contains(QStringLiteral("rotary positions")), qPrintable(view.message()));
        QCOMPARE(view.shownHead(), -1);
        QVERIFY(view.plottedRotated().isEmpty());
    }

    void theDiagnosticsTabShowsItForAVariantWithoutAPageOfItsOwn() {
        InspectionState state;
        DiagnosticsStack stack;
        stack.setInspectionState(&state);
        stack.setResult(attnscope::testing::makeDenseResult(1, 3));  // `full`, no model: the sentence
        QVERIFY(stack.showsPlaceholder());
        stack.setResult(makeRotaryRun());
        QVERIFY(!stack.showsPlaceholder());
        QCOMPARE(stack.currentWidget(), static_cast<QWidget*>(stack.modelTabs()));
        QCOMPARE(stack.modelTabs()->currentWidget(), static_cast<QWidget*>(stack.rotaryProfileView()));
        QVERIFY(!stack.modelTabs()->isTabVisible(1));  // no soft-cap on this layer
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestRotaryProfileView)
#include "test_rotary_profile_view.moc"
