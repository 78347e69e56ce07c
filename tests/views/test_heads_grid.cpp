#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/data/background_job.h"
#include "views/data/colormap.h"
#include "views/heatmap/heads_grid.h"
#include "views/data/inspection_state.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTest>

using attnscope::testing::fixtureWeight;
using attnscope::testing::makeDenseResult;
using attnscope::views::Colormap;
using attnscope::views::HeadsGrid;
using attnscope::views::InspectionState;

namespace {

// A grid of four heads shown 700 pixels wide, as the clicks on its thumbnails need it.
struct ShownGrid {
    InspectionState state;
    HeadsGrid grid;
    ShownGrid() {
        grid.setInspectionState(&state);
        grid.setResult(makeDenseResult(4, 5));
        grid.resize(700, grid.heightForWidth(700));
        grid.show();
    }
};

}  // namespace

class TestHeadsGrid : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void backgroundPoolingKeepsTheOldThumbnailsUntilTheNewAreReady() {
        InspectionState state;
        HeadsGrid grid;
        grid.setInspectionState(&state);
        grid.setResult(makeDenseResult(2, 16));  // pooled at once by default
        QCOMPARE(grid.headCount(), 2);
        grid.setBackgroundPooling(0);  // every result on a worker thread
        QSignalSpy ready(&grid, &HeadsGrid::thumbnailsReady);
        const auto three = makeDenseResult(3, 40);
        grid.setResult(three);
        QVERIFY(grid.isPooling());
        QCOMPARE(grid.headCount(), 2);  // the previous thumbnails meanwhile
        grid.setResult(makeDenseResult(4, 24));  // supersedes the three heads before they arrive
        QTRY_VERIFY_WITH_TIMEOUT(!grid.isPooling(), 60000);
        attnscope::views::backgroundThreadPool()->waitForDone();  // the superseded pooling has ended too …
        QCoreApplication::sendPostedEvents();           // … and its answer was dropped
        QCoreApplication::processEvents();
        QCOMPARE(ready.count(), 1);
        QCOMPARE(grid.headCount(), 4);
        QCOMPARE(grid.headMax(0, 3), static_cast<double>(fixtureWeight(3, 23, 23)));
        grid.setResult(three);
        grid.finishPooling();  // exports: blocks until the thumbnails are shown
        QVERIFY(!grid.isPooling());
        QCOMPARE(grid.headCount(), 3);
        QCOMPARE(grid.headMax(0, 2), static_cast<double>(fixtureWeight(2, 39, 39)));
    }

    // While a new result's heads are pooled the previous result's thumbnails stay, dimmed, and a
    // click on them selects nothing (the new result may have other heads).
    void theOldThumbnailsAreDimmedAndInertWhileTheNewArePooled() {
        ShownGrid shown;
        HeadsGrid& grid = shown.grid;
        QVERIFY(QTest::qWaitForWindowExposed(&grid));
        const QPoint third = grid.thumbnailRect(0, 2).center();
        const QColor before = grid.grab().toImage().pixelColor(third);

        QSemaphore hold;  // the views' one worker busy, so the new heads wait
        attnscope::views::backgroundThreadPool()->start([&hold] { hold.acquire(); });
        grid.setBackgroundPooling(0);
        grid.setResult(makeDenseResult(6, 12));
        QVERIFY(grid.isPooling());
        QVERIFY(grid.grab().toImage().pixelColor(third) != before);  // dimmed
        QSignalSpy selected(&grid, &HeadsGrid::headSelected);
        QTest::mouseClick(&grid, Qt::LeftButton, {}, third);
        QCOMPARE(selected.count(), 0);

        hold.release();
        QTRY_VERIFY_WITH_TIMEOUT(!grid.isPooling(), 60000);
        QCOMPARE(grid.headCount(), 6);
        QTest::mouseClick(&grid, Qt::LeftButton, {}, grid.thumbnailRect(0, 5).center());
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.at(0).at(1).toInt(), 5);
    }

    void thumbnailsUseTheLut() {
        HeadsGrid grid;
        grid.setResult(makeDenseResult(3, 6));
        QCOMPARE(grid.layerCount(), 1);
        QCOMPARE(grid.headCount(), 3);
        const QImage thumb = grid.thumbnail(0, 2);
        QCOMPARE(thumb.size(), QSize(6, 6));
        // fixtureWeight grows with query and key: each head is scaled to [0, its own maximum], so
        // the largest cell is the LUT's last colour and the smallest the colour of its share of it.
        const Colormap& lut = Colormap::viridis();
        QCOMPARE(thumb.pixel(5, 5) & 0xffffff, lut.color(255) & 0xffffff);
        const double smallest = attnscope::testing::fixtureWeight(2, 0, 0), largest = attnscope::testing::fixtureWeight(2, 5, 5);
        QVERIFY(smallest < largest);
        QCOMPARE(thumb.pixel(0, 0) & 0xffffff, lut.map(smallest / largest) & 0xffffff);
        QVERIFY(grid.thumbnail(0, 3).isNull());
        QVERIFY(grid.thumbnail(1, 0).isNull());
    }

    void sharedOrPerHeadColourScale() {
        HeadsGrid grid;
        grid.setResult(makeDenseResult(3, 6));
        const double max0 = attnscope::testing::fixtureWeight(0, 5, 5);
        const double max2 = attnscope::testing::fixtureWeight(2, 5, 5);  // the largest weight of all heads
        // Per head (default): each thumbnail spans [0, its own maximum].
        QCOMPARE(grid.scaleMode(), HeadsGrid::ScaleMode::PerHead);
        QCOMPARE(grid.scaleRange(0, 0), std::make_pair(0.0, max0));
        QCOMPARE(grid.scaleRange(0, 2), std::make_pair(0.0, max2));
        const Colormap& lut = Colormap::viridis();
        QCOMPARE(grid.thumbnail(0, 0).pixel(5, 5) & 0xffffff, lut.color(255) & 0xffffff);

        QSignalSpy changed(&grid, &HeadsGrid::scaleModeChanged);
        grid.scaleCombo()->setCurrentIndex(grid.scaleCombo()->findData(static_cast<int>(HeadsGrid::ScaleMode::Shared)));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(grid.scaleMode(), HeadsGrid::ScaleMode::Shared);
        // Shared: one range [0, max over every head].
        for (int head = 0; head < 3; ++head) QCOMPARE(grid.scaleRange(0, head), std::make_pair(0.0, max2));
        QCOMPARE(grid.thumbnail(0, 2).pixel(5, 5) & 0xffffff, lut.color(255) & 0xffffff);
        const float w = attnscope::testing::fixtureWeight(0, 5, 5);
        QCOMPARE(grid.thumbnail(0, 0).pixel(5, 5) & 0xffffff, lut.map(static_cast<double>(w) * (1.0 / max2)) & 0xffffff);
        QVERIFY((grid.thumbnail(0, 0).pixel(5, 5) & 0xffffff) != (lut.color(255) & 0xffffff));
        QCOMPARE(grid.scaleRange(1, 0), std::make_pair(0.0, 0.0));  // no such layer

        grid.setScaleMode(HeadsGrid::ScaleMode::PerHead);  // a setter, not an intent
        QCOMPARE(changed.count(), 1);
        QCOMPARE(grid.scaleRange(0, 0), std::make_pair(0.0, max0));
    }

    void doubleClickOpensTheHead() {
        HeadsGrid grid;
        grid.setResult(makeDenseResult(2, 4));
        grid.resize(500, grid.heightForWidth(500));
        grid.show();
        QVERIFY(QTest::qWaitForWindowExposed(&grid));
        QSignalSpy opened(&grid, &HeadsGrid::headOpened);
        QTest::mouseDClick(&grid, Qt::LeftButton, {}, grid.thumbnailRect(0, 1).center());
        QCOMPARE(opened.count(), 1);
        QCOMPARE(opened.at(0).at(1).toInt(), 1);
    }

    void clickEmitsHeadSelected() {
        ShownGrid shown;
        HeadsGrid& grid = shown.grid;
        QVERIFY(QTest::qWaitForWindowExposed(&grid));

        QSignalSpy selected(&grid, &HeadsGrid::headSelected);
        const QRect third = grid.thumbnailRect(0, 2);
        QVERIFY(!third.isEmpty());
        QVERIFY(grid.rect().contains(third));
        QTest::mouseClick(&grid, Qt::LeftButton, {}, third.center());
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.at(0).at(0).toInt(), 0);
        QCOMPARE(selected.at(0).at(1).toInt(), 2);

        // Between thumbnails: no intent.
        QTest::mouseClick(&grid, Qt::LeftButton, {}, QPoint(third.right() + 3, third.center().y()));
        QCOMPARE(selected.count(), 1);
        // The grid only emits intents; the selection is the app's to change.
        QCOMPARE(shown.state.head(), 0);
    }

    void checkpointLayerIsNamedByTheModel() {
        // A run on a model's layer 3 is one row, named after the model's layer in its hover text.
        auto run = std::make_shared<attnscope::engine::RunResult>(*makeDenseResult(2, 4));
        run->modelLayer = 3;
        HeadsGrid grid;
        grid.resize(400, 200);
        grid.setResult(run);
        grid.show();
        QVERIFY(QTest::qWaitForWindowExposed(&grid));
        QCOMPARE(grid.layerCount(), 1);
        QTest::mouseMove(&grid, grid.thumbnailRect(0, 1).center());
        QTRY_VERIFY2(grid.toolTip().startsWith(QStringLiteral("Layer 3, head 1")), qPrintable(grid.toolTip()));
    }

    void groupedQueryHeadsStandTogether() {
        // 4 query heads over 2 key/value heads: a wider gap between heads 1 and 2 than inside a group
        auto run = std::make_shared<attnscope::engine::RunResult>(*makeDenseResult(4, 6));
        run->modelLayer = 0;
        run->modelKvHeads = 2;
        HeadsGrid grid;
        grid.resize(700, 200);
        grid.setResult(run);
        grid.show();
        QVERIFY(QTest::qWaitForWindowExposed(&grid));
        const int inside = grid.thumbnailRect(0, 1).left() - grid.thumbnailRect(0, 0).right();
        const int between = grid.thumbnailRect(0, 2).left() - grid.thumbnailRect(0, 1).right();
        QVERIFY2(between > inside, qPrintable(QStringLiteral("%1 vs %2").arg(between).arg(inside)));
        QTest::mouseMove(&grid, grid.thumbnailRect(0, 3).center());
        QTRY_VERIFY2(grid.toolTip().contains(QStringLiteral("reads key/value head 1 with heads 2–3")), qPrintable(grid.toolTip()));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestHeadsGrid)
#include "test_heads_grid.moc"
