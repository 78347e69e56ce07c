#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/colormap.h"
#include "views/heads_grid.h"
#include "views/inspection_state.h"

#include <QSignalSpy>
#include <QTest>

using attnscope::testing::makeDenseResult;
using attnscope::views::Colormap;
using attnscope::views::HeadsGrid;
using attnscope::views::InspectionState;

class TestHeadsGrid : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void thumbnailsUseTheLut() {
        HeadsGrid grid;
        grid.setResult(makeDenseResult(3, 6));
        QCOMPARE(grid.layerCount(), 1);
        QCOMPARE(grid.headCount(), 3);
        const QImage thumb = grid.thumbnail(0, 2);
        QCOMPARE(thumb.size(), QSize(6, 6));
        // fixtureWeight grows with query and key: the smallest cell is the LUT's first colour,
        // the largest its last (each head is scaled to its own maximum).
        const Colormap& lut = Colormap::viridis();
        QCOMPARE(thumb.pixel(5, 5) & 0xffffff, lut.color(255) & 0xffffff);
        QVERIFY(grid.thumbnail(0, 3).isNull());
        QVERIFY(grid.thumbnail(1, 0).isNull());
    }

    void clickEmitsHeadSelected() {
        InspectionState state;
        HeadsGrid grid;
        grid.setInspectionState(&state);
        grid.setResult(makeDenseResult(4, 5));
        grid.resize(700, grid.heightForWidth(700));
        grid.show();
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
        QCOMPARE(state.head(), 0);
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestHeadsGrid)
#include "test_heads_grid.moc"
