#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/diagnostics/diagnostics_stack.h"
#include "views/diagnostics/latent_view.h"
#include "views/data/inspection_state.h"

#include <QTabWidget>
#include <QTest>

using attnscope::views::DiagnosticsStack;
using attnscope::views::InspectionState;
using attnscope::views::LatentView;
namespace engine = attnscope::engine;

namespace {

// A DeepSeek layer: 2 heads of 3 non-rotary and 2 rotary features, a latent of 2, 4 tokens; the
// keys' spectrum (4, 2, 1e-9, 0): rank 2; head 0's rotary product a quarter of its score, head 1's
// three quarters.
std::shared_ptr<engine::RunResult> makeLatentRun() {
    auto run = std::const_pointer_cast<engine::RunResult>(attnscope::testing::makeDenseResult(2, 4));
    run->results[0].variantId = "model_softmax";
    engine::LatentAttentionProfile p;
    p.heads = 2;
    p.n = 4;
    p.nope = 3;
    p.rope = 2;
    p.latentRank = 2;
    p.keySingularValues = {4.0f, 2.0f, 1e-9f, 0.0f};
    p.nopeTerm = {3.0f, 1.0f};
    p.ropeTerm = {1.0f, 3.0f};
    run->latentProfile = p;
    return run;
}

}  // namespace

class TestLatentView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void plotsTheKeysSpectrumAndEachHeadsRotaryShare() {
        InspectionState state;
        LatentView view;
        view.setInspectionState(&state);
        view.setResult(makeLatentRun());
        QCOMPARE(view.singularValues().size(), 4);
        QCOMPARE(view.singularValues()[0], 4.0);
        QCOMPARE(view.numericalRank(), 2);
        QCOMPARE(view.rotaryPercent(), (QVector<double>{25.0, 75.0}));
        state.setHead(1);
        for (const char* part : {"one latent of 2 features", "2 × 3 = 6 features", "rank 2", "75.0 % of head 1", "50.0 % on average"})
            QVERIFY2(view.text().contains(QString::fromUtf8(part)), qPrintable(view.text()));
    }

    void saysWhatItIsForWithoutALatent() {
        LatentView view;
        view.setResult(attnscope::testing::makeDenseResult(2, 3));
        QVERIFY(view.singularValues().isEmpty());
        QVERIFY2(view.text().contains(QStringLiteral("latent-attention layer")), qPrintable(view.text()));
    }

    void theDiagnosticsTabShowsItForALatentLayer() {
        InspectionState state;
        DiagnosticsStack stack;
        stack.setInspectionState(&state);
        stack.setResult(makeLatentRun());
        QCOMPARE(stack.currentWidget(), static_cast<QWidget*>(stack.modelTabs()));
        QCOMPARE(stack.modelTabs()->currentWidget(), static_cast<QWidget*>(stack.latentView()));
        QVERIFY(!stack.modelTabs()->isTabVisible(0));
        QVERIFY(!stack.modelTabs()->isTabVisible(1));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestLatentView)
#include "test_latent_view.moc"
