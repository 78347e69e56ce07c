#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/data/colormap.h"
#include "views/diagnostics/categorical_palette.h"
#include "views/help/view_guide.h"
#include "views/image/image_canvas.h"
#include "views/image/image_overlay_view.h"
#include "views/image/overlay_image.h"
#include "views/data/inspection_state.h"
#include "views/data/reason_palette.h"

#include <attnscope/vit_views.h>

#include <QSignalSpy>
#include <QTest>

#include <cmath>

using attnscope::views::ImageCanvas;
using attnscope::views::ImageOverlayView;
using attnscope::views::InspectionState;
using attnscope::views::OverlayFacts;
using attnscope::views::OverlayKind;
using attnscope::views::OverlaySettings;
namespace engine = attnscope::engine;

namespace {

using attnscope::testing::kImageCols;
using attnscope::testing::kImageHeads;
using attnscope::testing::kImageRows;
using attnscope::testing::kImageTokens;
using attnscope::testing::makeImageRun;
constexpr int kRows = kImageRows, kCols = kImageCols, kTokens = kImageTokens, kHeads = kImageHeads;

QImage picture() {
    QImage image(60, 40, QImage::Format_RGB888);
    image.fill(Qt::gray);
    return image;
}

}  // namespace

class TestImageOverlay : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void weightsAreColouredAndMoreOpaqueTheLargerTheyAre() {
        const auto run = makeImageRun();
        OverlaySettings settings;
        settings.opacity = 0.8;
        OverlayFacts facts;
        const QImage overlay = overlayImage(*run, 0, 0, /*query=*/0, settings, &facts);
        QCOMPARE(overlay.size(), QSize(kCols, kRows));
        // Row of head 0: weight of key j = (j + 1) / 28; the grid's largest is key 6 (patch (1, 2))
        QCOMPARE(facts.maxWeight, double(7.0f / 28.0f));
        QVERIFY(std::abs(facts.prefixWeight - 1.0 / 28.0) < 1e-6);
        const attnscope::views::Colormap& map = attnscope::views::Colormap::builtin(settings.colormap);
        for (int cell = 0; cell < kRows * kCols; ++cell) {
            const double w = double(cell + 2) / 28.0, share = w / facts.maxWeight;
            const QRgb pixel = overlay.pixel(cell % kCols, cell / kCols);
            QCOMPARE(qAlpha(pixel), attnscope::views::weightAlpha(w, facts.maxWeight, 0.8));
            QCOMPARE(qAlpha(pixel), int(std::lround(255 * 0.8 * share)));
            const QRgb expected = map.map(share);
            QCOMPARE(qRed(pixel), qRed(expected));
            QCOMPARE(qGreen(pixel), qGreen(expected));
            QCOMPARE(qBlue(pixel), qBlue(expected));
        }
    }

    void theMaskColoursAllowedKeysByReasonAndDimsTheOthers() {
        // Query 3 = patch (0, 2) may attend CLS (global) and patches (0, 1), (0, 2), (1, 2) (local)
        std::vector<std::uint8_t> reasons(std::size_t(kHeads * kTokens * kTokens), engine::kNotListed);
        for (int h = 0; h < kHeads; ++h) {
            const auto at = [&](int key) -> std::uint8_t& { return reasons[std::size_t((h * kTokens + 3) * kTokens + key)]; };
            at(0) = std::uint8_t(engine::PatternReason::Global);
            for (int key : {2, 3, 6}) at(key) = std::uint8_t(engine::PatternReason::Local);
        }
        const auto run = makeImageRun(reasons);
        OverlaySettings settings;
        settings.kind = OverlayKind::Mask;
        settings.opacity = 1.0;
        OverlayFacts facts;
        const QImage overlay = overlayImage(*run, 0, 1, 3, settings, &facts);
        QCOMPARE(facts.allowedCells, 3);
        const QColor local = attnscope::views::ReasonPalette::standard().color(engine::PatternReason::Local);
        for (int cell = 0; cell < kRows * kCols; ++cell) {
            const QRgb pixel = overlay.pixel(cell % kCols, cell / kCols);
            const bool allowed = cell == 1 || cell == 2 || cell == 5;
            if (allowed) {
                QCOMPARE(QColor::fromRgba(pixel).rgb(), local.rgb());
                QCOMPARE(qAlpha(pixel), 255);
            } else {
                QCOMPARE(qRed(pixel) + qGreen(pixel) + qBlue(pixel), 0);
                QVERIFY(qAlpha(pixel) > 0 && qAlpha(pixel) < 255);
            }
        }
    }

    void groupsComeFromTheVariantsTokenGroupsDiagnostic() {
        auto run = makeImageRun();
        engine::AttentionResult& r = run->results[0];
        r.variantId = "reformer";
        // buckets [H, 2 rounds, n]: round 1 of head 1 puts the query (CLS) and patches 0, 4 in bucket 5
        std::vector<std::int64_t> buckets(std::size_t(kHeads * 2 * kTokens), 0);
        const auto at = [&](int h, int round, int t) -> std::int64_t& { return buckets[std::size_t((h * 2 + round) * kTokens + t)]; };
        for (int t = 0; t < kTokens; ++t) at(1, 1, t) = t % 3;
        at(1, 1, 0) = 5;
        at(1, 1, 1) = 5;
        at(1, 1, 5) = 5;
        r.diagnostics["buckets"] = engine::PlainTensor::fromI64({kHeads, 2, kTokens}, buckets);
        OverlaySettings settings;
        settings.kind = OverlayKind::Groups;
        settings.round = 1;
        settings.opacity = 1.0;
        OverlayFacts facts;
        const QImage overlay = overlayImage(*run, 0, 1, 0, settings, &facts);
        QCOMPARE(facts.queryGroup, 5LL);
        QCOMPARE(facts.sameGroupCells, 2);
        const auto& palette = attnscope::views::CategoricalPalette::standard();
        QCOMPARE(QColor::fromRgba(overlay.pixel(0, 0)).rgb(), palette.color(5).rgb());
        QCOMPARE(QColor::fromRgba(overlay.pixel(1, 0)).rgb(), palette.color(at(1, 1, 2)).rgb());
        // full has no groups: said in words
        run->results[0].variantId = "full";
        overlayImage(*run, 0, 1, 0, settings, &facts);
        QVERIFY(facts.message.contains(QStringLiteral("Reformer")));
    }

    void theViewOpensOnTheClsTokenAndAClickChoosesTheQuery() {
        const auto run = makeImageRun();
        InspectionState state;
        ImageOverlayView view;
        view.resize(700, 500);
        view.setInspectionState(&state);
        view.setPicture(picture());
        view.setResult(run);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.query(), 0);  // the CLS token
        QVERIFY2(view.status().contains(QStringLiteral("CLS takes")), qPrintable(view.status()));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        ImageCanvas* canvas = view.canvas();
        QSignalSpy chosen(&view, &ImageOverlayView::queryChosen);
        // The centre of patch (1, 1) = token 1 + 3 + 1 = 5
        const QRectF cell = canvas->cellRect(0, 1, 1);
        QVERIFY(cell.width() > 10);
        QTest::mouseClick(canvas, Qt::LeftButton, {}, cell.center().toPoint());
        QCOMPARE(chosen.count(), 1);
        QCOMPARE(chosen.at(0).at(0).toInt(), 5);
        QCOMPARE(view.query(), 5);
        QVERIFY2(view.status().contains(QStringLiteral("query row 1, column 1")), qPrintable(view.status()));
        QCOMPARE(canvas->tokenAt(canvas->cellRect(0, 0, 2).center().toPoint()), 3);
        // All heads: one tile each, each head scaled to its own largest weight
        view.setAllHeads(true);
        QCOMPARE(canvas->tiles().size(), kHeads);
        QCOMPARE(view.shownFacts().size(), kHeads);
    }

    void aVisionModelsLayersRolloutAndDinoViewAreDrawnFromEveryLayer() {
        auto run = makeImageRun();
        // Two layers of the model's own attention: layer l, head h, every query puts weight
        // proportional to (key + 1)^(l + 1) · (h + 1) on each key.
        for (int l = 0; l < 2; ++l) {
            std::vector<float> a(std::size_t(kHeads * kTokens * kTokens));
            for (int h = 0; h < kHeads; ++h)
                for (int i = 0; i < kTokens; ++i) {
                    float sum = 0;
                    for (int j = 0; j < kTokens; ++j) sum += std::pow(float(j + 1), float(l + 1)) * float(h + 1);
                    for (int j = 0; j < kTokens; ++j)
                        a[std::size_t((h * kTokens + i) * kTokens + j)] = std::pow(float(j + 1), float(l + 1)) * float(h + 1) / sum;
                }
            run->modelLayerAttention.push_back(engine::PlainTensor::fromF32({kHeads, kTokens, kTokens}, a));
        }
        InspectionState state;
        ImageOverlayView view;
        view.resize(900, 600);
        view.setInspectionState(&state);
        view.setPicture(picture());
        view.setResult(run);
        view.setKind(OverlayKind::Layers);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.canvas()->tiles().size(), 2);  // one per layer
        QCOMPARE(view.canvas()->tiles()[1].label, QStringLiteral("layer 1"));
        // Layer 1 from CLS: weights (j + 1)² / 140, the largest on the grid 49 / 140
        QVERIFY(std::abs(view.shownFacts()[1].maxWeight - 49.0 / 140.0) < 1e-6);

        view.setKind(OverlayKind::Rollout);
        view.setDiscardRatio(0.0);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const std::vector<double> rollout = engine::attentionRollout(run->modelLayerAttention, engine::HeadFusion::Mean, 0.0);
        double top = 0;
        for (int cell = 0; cell < kRows * kCols; ++cell) top = std::max(top, rollout[std::size_t(1 + cell)]);
        QVERIFY(std::abs(view.shownFacts()[0].maxWeight - top) < 1e-9);
        QVERIFY2(view.status().contains(QStringLiteral("rollout through 2 layers, heads mean")), qPrintable(view.status()));

        view.setKind(OverlayKind::Flow);  // computed on the views' worker thread
        QVERIFY2(view.message().contains(QStringLiteral("Computing the attention flow")), qPrintable(view.message()));
        QTRY_VERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const std::vector<double> flow = engine::attentionFlowTo(run->modelLayerAttention, 0);
        double flowTop = 0;
        for (int cell = 0; cell < kRows * kCols; ++cell) flowTop = std::max(flowTop, flow[std::size_t(1 + cell)]);
        QVERIFY(flowTop > 0);
        QVERIFY(std::abs(view.shownFacts()[0].maxWeight - flowTop) < 1e-9);

        view.setKind(OverlayKind::MassShare);
        view.setMassShare(0.6);
        // Last layer from CLS over the patches: (j + 1)² for j = 1…6 = 4, 9, 16, 25, 36, 49 (sum 139);
        // the largest two hold 85 / 139 = 0.61 ≥ 0.6: patches (1, 1) and (1, 2) stay clear
        QCOMPARE(view.shownFacts()[0].allowedCells, 2);
        const QImage mask = view.canvas()->tiles()[0].overlay;
        QCOMPARE(qAlpha(mask.pixel(2, 1)), 0);
        QCOMPARE(qAlpha(mask.pixel(1, 1)), 0);
        QVERIFY(qAlpha(mask.pixel(0, 0)) > 0);
        view.setAllHeads(true);
        QCOMPARE(view.canvas()->tiles().size(), kHeads);

        // A run without the model's layers offers none of these
        view.setResult(makeImageRun());
        QCOMPARE(view.kind(), OverlayKind::Weights);
    }

    void everyTabHasAGuideTheImageTabsAmongThem() {
        const QStringList keys = attnscope::views::viewGuideKeys();
        QVERIFY(keys.contains(QStringLiteral("image")));
        for (const QString& key : keys) {
            const attnscope::views::ViewGuide guide = attnscope::views::viewGuide(key);
            QVERIFY2(!guide.title.isEmpty() && !guide.shows.isEmpty() && !guide.read.isEmpty(), qPrintable(key));
        }
        QVERIFY(attnscope::views::helpPageHtml(QStringLiteral("image"), nullptr).contains(QStringLiteral("Rollout")));
    }

    void aPictureOtherThanTheRunsOneIsNotDrawnOn() {
        const auto run = makeImageRun();
        ImageOverlayView view;
        view.setPicture(QImage(30, 30, QImage::Format_RGB888));
        view.setResult(run);
        QVERIFY2(view.message().contains(QStringLiteral("run again")), qPrintable(view.message()));
        view.setResult(attnscope::testing::makeDenseResult(1, 3));  // a text run
        QVERIFY2(view.message().contains(QStringLiteral("input is text")), qPrintable(view.message()));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestImageOverlay)
#include "test_image_overlay.moc"
