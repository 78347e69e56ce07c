#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/diagnostics/diagnostics_stack.h"
#include "views/diagnostics/softcap_view.h"
#include "views/data/inspection_state.h"

#include <QTabWidget>
#include <QTest>

using attnscope::views::DiagnosticsStack;
using attnscope::views::InspectionState;
using attnscope::views::SoftcapView;
namespace engine = attnscope::engine;

namespace {

// A Gemma 2 layer's own attention: 4 heads, capped at 50, a sliding window of 3, head h with
// h/10 of its scores within 10 % of the cap.
std::shared_ptr<engine::RunResult> makeCappedRun(std::int64_t window) {
    auto run = std::const_pointer_cast<engine::RunResult>(attnscope::testing::makeDenseResult(4, 5));
    engine::AttentionResult& own = run->results[0];
    own.variantId = "model_softmax";
    own.params = {{"causal", true}, {"window", window}, {"scale", 0.0625}, {"softcap", 50.0}};
    engine::PlainTensor shares = engine::PlainTensor::zeros(engine::DType::F32, {4});
    for (int h = 0; h < 4; ++h) shares.f32[static_cast<std::size_t>(h)] = 0.1f * static_cast<float>(h);
    own.diagnostics["softcap_saturation"] = shares;
    return run;
}

}  // namespace

class TestSoftcapView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void plotsEachHeadsShareOfScoresAtTheCap() {
        InspectionState state;
        SoftcapView view;
        view.setInspectionState(&state);
        view.setResult(makeCappedRun(3));
        const QVector<double> percent = view.saturatedPercent();
        QCOMPARE(percent.size(), 4);
        for (int h = 0; h < 4; ++h) QVERIFY(qAbs(percent[h] - 10.0 * h) < 1e-4);
        state.setHead(2);
        // the cap, the 10 % line at 45, head 2's 20 %, the mean 15 %, the layer's kind
        for (const char* part : {"c = 50", "|s| ≥ 45", "20.00 % of those head 2 sees", "15.00 % over all heads", "local: each query sees its last 3 keys"})
            QVERIFY2(view.text().contains(QString::fromUtf8(part)), qPrintable(view.text()));
        view.setResult(makeCappedRun(0));
        QVERIFY2(view.text().contains(QStringLiteral("global")), qPrintable(view.text()));
    }

    void saysWhatItIsForWithoutACap() {
        SoftcapView view;
        view.setResult(attnscope::testing::makeDenseResult(2, 3));
        QVERIFY(view.saturatedPercent().isEmpty());
        QVERIFY2(view.text().contains(QStringLiteral("soft-capped model layer")), qPrintable(view.text()));
    }

    void theDiagnosticsTabShowsItForACappedLayer() {
        InspectionState state;
        DiagnosticsStack stack;
        stack.setInspectionState(&state);
        stack.setResult(makeCappedRun(3));
        QCOMPARE(stack.currentWidget(), static_cast<QWidget*>(stack.modelTabs()));
        QCOMPARE(stack.modelTabs()->currentWidget(), static_cast<QWidget*>(stack.softcapView()));
        QVERIFY(!stack.modelTabs()->isTabVisible(0));  // no rotary profile in this run
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestSoftcapView)
#include "test_softcap_view.moc"
