#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/diagnostics/diagnostics_stack.h"
#include "views/diagnostics/sink_view.h"
#include "views/data/inspection_state.h"

#include <QTabWidget>
#include <QTest>

#include <cmath>

using attnscope::views::DiagnosticsStack;
using attnscope::views::InspectionState;
using attnscope::views::SinkView;
namespace engine = attnscope::engine;

namespace {

// A GPT-OSS layer's own attention: 2 heads over 4 queries, head 0 giving its sink 10, 20, 30, 40 %
// of each row (25 % on average), head 1 half of every row.
std::shared_ptr<engine::RunResult> makeSinkRun() {
    auto run = std::const_pointer_cast<engine::RunResult>(attnscope::testing::makeDenseResult(2, 4));
    engine::AttentionResult& own = run->results[0];
    own.variantId = "model_softmax";
    own.diagnostics["sink_share"] = engine::PlainTensor::fromF32({2, 4}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.5f, 0.5f, 0.5f});
    return run;
}

bool near(double a, double b) { return std::abs(a - b) < 1e-4; }

}  // namespace

class TestSinkView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void plotsEachHeadsMeanAndTheSelectedHeadsRows() {
        InspectionState state;
        SinkView view;
        view.setInspectionState(&state);
        view.setResult(makeSinkRun());
        QCOMPARE(view.headPercent().size(), 2);
        QVERIFY(near(view.headPercent()[0], 25.0) && near(view.headPercent()[1], 50.0));
        QCOMPARE(view.rowPercent().size(), 4);
        QVERIFY(near(view.rowPercent()[3], 40.0));
        for (const char* part : {"head 0 gives it 25.0 %", "head 1 the most, 50.0 %"})
            QVERIFY2(view.text().contains(QString::fromUtf8(part)), qPrintable(view.text()));
        state.setHead(1);
        QVERIFY(near(view.rowPercent()[0], 50.0));
    }

    void saysWhatItIsForWithoutSinks() {
        SinkView view;
        view.setResult(attnscope::testing::makeDenseResult(2, 3));
        QVERIFY(view.headPercent().isEmpty());
        QVERIFY2(view.text().contains(QStringLiteral("learned sinks")), qPrintable(view.text()));
    }

    void theDiagnosticsTabShowsItForALayerWithSinks() {
        InspectionState state;
        DiagnosticsStack stack;
        stack.setInspectionState(&state);
        stack.setResult(makeSinkRun());
        QCOMPARE(stack.currentWidget(), static_cast<QWidget*>(stack.modelTabs()));
        QCOMPARE(stack.modelTabs()->currentWidget(), static_cast<QWidget*>(stack.sinkView()));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestSinkView)
#include "test_sink_view.moc"
