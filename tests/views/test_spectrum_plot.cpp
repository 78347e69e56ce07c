#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/diagnostics/spectrum_plot.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QTest>

using attnscope::views::InspectionState;
using attnscope::views::SpectrumPlot;
namespace engine = attnscope::engine;

namespace {

constexpr int kHeads = 2, kN = 6;

// A linformer result with a hand-made spectrum: σ and energy per head, rank90 = {3, 1}.
std::shared_ptr<engine::RunResult> makeSpectrumRun() {
    auto run = std::const_pointer_cast<engine::RunResult>(attnscope::testing::makeDenseResult(kHeads, kN));
    engine::AttentionResult& r = run->results[0];
    r.variantId = "linformer";
    r.params["k"] = std::int64_t{4};
    std::vector<float> sv = {3.0f, 2.0f, 1.0f, 0.5f, 0.25f, 0.0f,  // head 0 ends in an exact zero
                             1.0f, 0.1f, 0.01f, 0.001f, 1e-4f, 1e-5f};
    std::vector<float> energy(sv.size());
    for (int h = 0; h < kHeads; ++h) {
        double total = 0, run2 = 0;
        for (int i = 0; i < kN; ++i) total += double(sv[h * kN + i]) * sv[h * kN + i];
        for (int i = 0; i < kN; ++i) {
            run2 += double(sv[h * kN + i]) * sv[h * kN + i];
            energy[h * kN + i] = static_cast<float>(run2 / total);
        }
    }
    r.diagnostics["singular_values"] = engine::PlainTensor::fromF32({kHeads, kN}, sv);
    r.diagnostics["energy"] = engine::PlainTensor::fromF32({kHeads, kN}, energy);
    r.diagnostics["rank90"] = engine::PlainTensor::fromI64({kHeads}, {3, 1});
    return run;
}

}  // namespace

class TestSpectrumPlot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void holdsTheSingularValuesAndEnergyAndMarksRank90() {
        const auto run = makeSpectrumRun();
        InspectionState state;
        SpectrumPlot view;
        view.setInspectionState(&state);
        view.setResult(run);
        QVERIFY(view.hasSpectrum());
        QVERIFY(view.message().isEmpty());
        const auto& sv = run->results[0].diagnostics.at("singular_values").f32;
        const auto& energy = run->results[0].diagnostics.at("energy").f32;
        for (int head : {0, 1}) {
            state.setHead(head);
            QCOMPARE(view.shownHead(), head);
            QCOMPARE(view.singularValues().size(), kN);
            const QVector<double> plotted = view.plottedSingularValues();
            const QVector<double> plottedEnergy = view.plottedEnergy();
            QCOMPARE(plotted.size(), kN);
            QCOMPARE(plottedEnergy.size(), kN);
            for (int i = 0; i < kN; ++i) {
                const float s = sv[static_cast<std::size_t>(head * kN + i)];
                QCOMPARE(view.singularValues()[i], static_cast<double>(s));
                if (s > 0) QCOMPARE(plotted[i], static_cast<double>(s));
                else QVERIFY(plotted[i] > 0 && plotted[i] < 0.25);  // the log axis' floor, below every σ
                QCOMPARE(plottedEnergy[i], static_cast<double>(energy[static_cast<std::size_t>(head * kN + i)]));
            }
            QCOMPARE(view.rank90Marker(), head == 0 ? 3.0 : 1.0);
            QVERIFY(view.rank90Label().contains(QStringLiteral("rank at 90 %: %1").arg(head == 0 ? 3 : 1)));
            QCOMPARE(view.kMarker(), 4.0);
        }
    }

    void markerLabelsStayInsideTheAxes() {
        // k = 4 of 6 lies in the right half: its label goes on the line's left (it ran off the plot).
        const auto run = makeSpectrumRun();
        InspectionState state;
        SpectrumPlot view;
        view.setInspectionState(&state);
        view.setResult(run);
        view.resize(420, 360);  // a narrow diagnostics tab
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto* plot = view.findChild<QCustomPlot*>();
        QVERIFY(plot);
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const QRect axes = plot->axisRect()->rect();
        int labels = 0;
        for (int i = 0; i < plot->itemCount(); ++i) {
            auto* text = qobject_cast<QCPItemText*>(plot->item(i));
            if (!text || !text->visible() || text->text().isEmpty()) continue;
            ++labels;
            QVERIFY2(text->right->pixelPosition().x() <= axes.right() + 1 && text->left->pixelPosition().x() >= axes.left() - 1,
                     qPrintable(text->text()));
        }
        QCOMPARE(labels, 2);
    }

    void saysInWordsWhenTheSpectrumWasNotComputed() {
        auto run = makeSpectrumRun();
        auto& r = run->results[0];
        r.diagnostics.erase("singular_values");
        r.diagnostics.erase("energy");
        r.diagnostics.erase("rank90");
        run->warnings.push_back("linformer: spectrum skipped: n = 5000 exceeds 2048 tokens (the SVD costs O(n^3) per head)");
        SpectrumPlot view;
        view.setResult(run);
        QVERIFY(!view.hasSpectrum());
        QVERIFY2(view.message().contains(QStringLiteral("No spectrum")), qPrintable(view.message()));
        QVERIFY2(view.message().contains(QStringLiteral("spectrum skipped: n = 5000")), qPrintable(view.message()));
        QVERIFY(view.plottedSingularValues().isEmpty());

        SpectrumPlot other;
        other.setResult(attnscope::testing::makeDenseResult(1, 3));  // a `full` result
        QVERIFY(!other.hasSpectrum());
        QVERIFY(other.message().contains(QStringLiteral("linformer")));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestSpectrumPlot)
#include "test_spectrum_plot.moc"
