#include "support/qt_test_support.h"

#include "views/atlas/head_atlas.h"
#include "views/widgets/qcp.h"
#include "views/atlas/rollout_view.h"

#include <QComboBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include <cmath>
#include <limits>
#include <memory>

using attnscope::engine::HeadAtlas;
using attnscope::views::AtlasMetric;
using attnscope::views::HeadAtlasView;

namespace {

constexpr int kLayers = 3, kHeads = 4, kTokens = 5;

// Every metric of every head gets a distinct value, so a cell showing another head's value or
// another metric's fails; setting 1 does not apply (NaN, as the engine reports it).
std::shared_ptr<const HeadAtlas> makeAtlas() {
    auto atlas = std::make_shared<HeadAtlas>();
    atlas->model.arch = "bert";
    atlas->layers = kLayers;
    atlas->heads = kHeads;
    atlas->n = kTokens;
    atlas->settings = {{"longformer window=2", "longformer", {}}, {"bigbird block=4", "bigbird", {}}};
    atlas->settingNotes = {"", "block 4 does not divide n = 5"};
    for (int l = 0; l < kLayers; ++l) {
        for (int h = 0; h < kHeads; ++h) {
            attnscope::engine::HeadMetrics m;
            m.layer = l;
            m.head = h;
            const double base = l * kHeads + h;
            m.entropy = 0.1 + base * 0.01;
            m.meanDistance = 1.0 + base * 0.25;
            m.selfShare = base / 100.0;
            m.previousShare = base / 200.0;
            m.nextShare = base / 300.0;
            m.specialShare = base / 400.0;
            m.firstShare = base / 500.0;
            m.rank90 = 1 + l + h;
            m.keptMass = {0.5 + base / 50.0, std::numeric_limits<double>::quiet_NaN()};
            m.outputError = {0.02 * base, std::numeric_limits<double>::quiet_NaN()};
            m.bestWindow = h;
            atlas->metrics.push_back(m);
        }
    }
    atlas->rollout = attnscope::engine::PlainTensor::zeros(attnscope::engine::DType::F32, {kTokens, kTokens});
    for (int i = 0; i < kTokens; ++i)
        for (int j = 0; j < kTokens; ++j)
            atlas->rollout.f32[static_cast<std::size_t>(i * kTokens + j)] = 0.01f * (i * kTokens + j);
    atlas->flow = attnscope::engine::PlainTensor::zeros(attnscope::engine::DType::F32, {kTokens, kTokens});
    for (int i = 0; i < kTokens * kTokens; ++i) atlas->flow.f32[static_cast<std::size_t>(i)] = 2.0f + 0.5f * i;
    for (int i = 0; i < kTokens; ++i) atlas->input.tokens.push_back({"t" + std::to_string(i), i, i + 1, i});
    return atlas;
}

bool sameValue(double shown, double expected) {
    if (std::isnan(expected)) return std::isnan(shown);
    return std::abs(shown - expected) <= 1e-12 * std::max(1.0, std::abs(expected));
}

}  // namespace

class TestHeadAtlas : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void saysHowFarTheModelWasTrained() {
        attnscope::engine::ModelInfo model;
        QVERIFY(HeadAtlasView::trainingSummary(model).isEmpty());  // no record: nothing to say
        attnscope::engine::TrainingRecord record;
        record.steps = 3000;
        record.task = "text";
        record.finalAccuracy = 0.523;
        record.chanceAccuracy = 0.0039;
        record.finalLoss = 1.571;
        model.training = record;
        QCOMPARE(HeadAtlasView::trainingSummary(model),
                 QStringLiteral("This model was trained 3000 steps (text), held-out accuracy 0.523 (chance 0.004), loss 1.571."));
        record.finalAccuracy = 0.005;
        model.training = record;
        QVERIFY(HeadAtlasView::trainingSummary(model).startsWith(QStringLiteral("Near chance: this model has learned little")));
    }

    void offersEveryMetricAndCoverageSetting() {
        const auto atlas = makeAtlas();
        const auto metrics = AtlasMetric::listFor(*atlas);
        // ten per-head metrics (no group similarity: these heads share no key/value head)
        QCOMPARE(metrics.size(), std::size_t{10 + 2 * 2});
        QCOMPARE(metrics[7].kind, AtlasMetric::Kind::StreamingKept);
        QCOMPARE(metrics[10].kind, AtlasMetric::Kind::KeptMass);
        QCOMPARE(metrics[10].setting, 0);
        QCOMPARE(metrics[13].kind, AtlasMetric::Kind::OutputError);
        QCOMPARE(metrics[13].setting, 1);
        QCOMPARE(metrics[10].name(*atlas), QStringLiteral("kept mass: longformer window=2"));
        QVERIFY(!metrics[0].definition().isEmpty());
        HeadAtlasView view;
        view.setAtlas(atlas);
        QCOMPARE(view.metricCount(), 14);
        QCOMPARE(view.metricCombo()->count(), 14);
        QCOMPARE(view.layerCount(), kLayers);
        QCOMPARE(view.headCount(), kHeads);
        // a grouped-query model also offers how alike the heads of a key/value group are
        auto grouped = std::make_shared<attnscope::engine::HeadAtlas>(*atlas);
        grouped->model.kvHeads = 2;
        const auto withGroups = AtlasMetric::listFor(*grouped);
        QCOMPARE(withGroups.size(), metrics.size() + 1);
        QCOMPARE(withGroups[10].kind, AtlasMetric::Kind::GroupSimilarity);
    }

    // GPT-OSS: rows summing to less than 1 offer the learned sink's share; its alternating local
    // and global layers are named on the layer axis, row against row.
    void sinkShareAndLayerKinds() {
        auto atlas = std::make_shared<HeadAtlas>(*makeAtlas());
        QVERIFY(!HeadAtlasView().layerTickLabels().size());
        for (auto& m : atlas->metrics) m.sinkShare = 0.1 + 0.01 * (m.layer * kHeads + m.head);
        atlas->model.layerWindows = {128, 0, 128};
        const auto metrics = AtlasMetric::listFor(*atlas);
        QCOMPARE(metrics[10].kind, AtlasMetric::Kind::SinkShare);
        QCOMPARE(metrics[10].name(*atlas), QStringLiteral("learned-sink share"));
        HeadAtlasView view;
        view.setAtlas(atlas);
        view.metricCombo()->setCurrentIndex(10);
        QVERIFY(sameValue(view.cellValue(2, 3), 0.1 + 0.01 * 11));
        QCOMPARE(view.layerTickLabels(), (QStringList{QStringLiteral("0 L"), QStringLiteral("1 G"), QStringLiteral("2 L")}));
        QVERIFY2(view.layerAxisLabel().contains(QStringLiteral("last 128 keys")), qPrintable(view.layerAxisLabel()));
        // every layer alike: plain numbers, and no sink metric without sinks
        view.setAtlas(makeAtlas());
        QVERIFY(view.layerTickLabels().isEmpty());
        QCOMPARE(view.layerAxisLabel(), QStringLiteral("layer"));
    }

    void cellsEqualTheAtlasForEveryMetric() {
        const auto atlas = makeAtlas();
        HeadAtlasView view;
        view.setAtlas(atlas);
        const auto metrics = AtlasMetric::listFor(*atlas);
        for (int index = 0; index < view.metricCount(); ++index) {
            view.metricCombo()->setCurrentIndex(index);  // as the user picks it
            const AtlasMetric& metric = metrics[static_cast<std::size_t>(index)];
            QCOMPARE(view.metric().kind, metric.kind);
            QCOMPARE(view.metricCombo()->toolTip(), metric.definition());
            for (int l = 0; l < kLayers; ++l) {
                for (int h = 0; h < kHeads; ++h) {
                    const auto& m = atlas->metrics[static_cast<std::size_t>(l * kHeads + h)];
                    const double expected = metric.valueOf(m);
                    if (!sameValue(view.cellValue(l, h), expected))
                        QFAIL(qPrintable(QStringLiteral("metric %1, layer %2, head %3: shown %4, atlas %5")
                                             .arg(metric.name(*atlas))
                                             .arg(l)
                                             .arg(h)
                                             .arg(view.cellValue(l, h))
                                             .arg(expected)));
                }
            }
        }
        // Spot checks against the fields themselves, not only through valueOf.
        view.setMetricIndex(1);  // mean distance
        QCOMPARE(view.cellValue(2, 3), 1.0 + 11 * 0.25);
        view.setMetricIndex(9);  // rank at 90 %
        QCOMPARE(view.cellValue(1, 2), 4.0);
        view.setMetricIndex(11);  // output error of longformer
        QCOMPARE(view.cellValue(2, 1), 0.02 * 9);
        view.setMetricIndex(12);  // kept mass of the setting that does not apply
        QVERIFY(std::isnan(view.cellValue(0, 0)));
        QVERIFY(std::isnan(view.cellValue(kLayers, 0)));  // out of range
    }

    void hoverTextHasTheValueAndTheDefinition() {
        const auto atlas = makeAtlas();
        HeadAtlasView view;
        view.setAtlas(atlas);
        view.setMetricIndex(2);  // self share: (1 * 4 + 2) / 100
        const QString tip = view.cellToolTip(1, 2);
        QVERIFY2(tip.contains(QStringLiteral("Layer 1, head 2")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("self share = 0.06")), qPrintable(tip));
        QVERIFY(tip.contains(AtlasMetric{AtlasMetric::Kind::SelfShare, -1}.definition()));
        view.setMetricIndex(12);
        QVERIFY(view.cellToolTip(0, 0).contains(QStringLiteral("not applicable")));
        QVERIFY(view.cellToolTip(0, 0).contains(QStringLiteral("does not divide")));
    }

    void keepsTheMetricAcrossAtlases() {
        HeadAtlasView view;
        view.setAtlas(makeAtlas());
        view.setMetricIndex(9);
        view.setAtlas(makeAtlas());
        QCOMPARE(view.metricIndex(), 9);
        view.setAtlas(nullptr);
        QCOMPARE(view.metricCount(), 0);
        QVERIFY(std::isnan(view.cellValue(0, 0)));
    }

    void clickingACellSelectsThatHead() {
        HeadAtlasView view;
        view.resize(900, 500);
        view.setAtlas(makeAtlas());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.gridPlot()->replot();  // pixel <-> coordinate mapping needs a laid-out plot
        QSignalSpy selected(&view, &HeadAtlasView::headSelected);
        const QPoint center = view.cellCenter(2, 1);
        QVERIFY(center.x() >= 0);
        QTest::mouseClick(view.gridPlot(), Qt::LeftButton, {}, center);
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.at(0).at(0).toInt(), 2);
        QCOMPARE(selected.at(0).at(1).toInt(), 1);
        QTest::mouseClick(view.gridPlot(), Qt::LeftButton, {}, view.cellCenter(0, 3));
        QCOMPARE(selected.count(), 2);
        QCOMPARE(selected.at(1).at(0).toInt(), 0);
        QCOMPARE(selected.at(1).at(1).toInt(), 3);
        // Outside the grid: no intent.
        QTest::mouseClick(view.gridPlot(), Qt::LeftButton, {}, QPoint(2, 2));
        QCOMPARE(selected.count(), 2);
    }

    void analyzeAndCancelAreIntents() {
        HeadAtlasView view;
        QSignalSpy analyze(&view, &HeadAtlasView::analyzeRequested);
        QSignalSpy cancel(&view, &HeadAtlasView::cancelRequested);
        QVERIFY(view.analyzeButton()->isEnabled());
        QVERIFY(!view.cancelButton()->isEnabled());
        view.analyzeButton()->click();
        QCOMPARE(analyze.count(), 1);
        view.setBusy(true);
        QVERIFY(!view.analyzeButton()->isEnabled());
        view.cancelButton()->click();
        QCOMPARE(cancel.count(), 1);
        view.setBusy(false);
        QVERIFY(view.analyzeButton()->isEnabled());
    }

    void rolloutCellsEqualTheAtlas() {
        const auto atlas = makeAtlas();
        HeadAtlasView view;
        view.setAtlas(atlas);
        QCOMPARE(view.rolloutView()->size(), kTokens);
        for (int i = 0; i < kTokens; ++i)
            for (int j = 0; j < kTokens; ++j)
                QCOMPARE(view.rolloutView()->value(i, j),
                         static_cast<double>(atlas->rollout.f32[static_cast<std::size_t>(i * kTokens + j)]));
        // Attention flow: the other matrix of the atlas, through the view's switch.
        view.rolloutView()->setKind(attnscope::views::RolloutView::Kind::Flow);
        QCOMPARE(view.rolloutView()->size(), kTokens);
        QCOMPARE(view.rolloutView()->value(1, 3), static_cast<double>(atlas->flow.f32[1 * kTokens + 3]));
        auto noFlow = std::make_shared<HeadAtlas>(*atlas);
        noFlow->flow = {};  // the engine leaves it empty past 64 tokens
        view.setAtlas(noFlow);
        QCOMPARE(view.rolloutView()->size(), 0);
        view.rolloutView()->setKind(attnscope::views::RolloutView::Kind::Rollout);
        QCOMPARE(view.rolloutView()->value(4, 4), static_cast<double>(atlas->rollout.f32[4 * kTokens + 4]));
        attnscope::views::RolloutView bad;
        bad.setRollout(attnscope::engine::PlainTensor::zeros(attnscope::engine::DType::F32, {2, 3}), {});
        QCOMPARE(bad.size(), 0);  // not square: refused, not drawn
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestHeadAtlas)
#include "test_head_atlas.moc"
