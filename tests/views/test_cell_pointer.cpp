// CellPointer, the pointer and keys every matrix view shares: the cell under the pointer from the
// plot's coordinates, one signal per new cell, none outside the matrix, the arrow keys' cursor
// from the hovered cell or the anchor, +/− zoom asked for with the factor set.
#include "support/qt_test_support.h"

#include "views/widgets/cell_pointer.h"
#include "views/widgets/qcp.h"

#include <QSignalSpy>
#include <QTest>

using attnscope::views::CellPointer;

namespace {

// A 5 × 7 matrix drawn with cell centres on integer coordinates, query 0 on top.
struct PointerFixture {
    QCustomPlot plot;
    CellPointer pointer{&plot};
    std::int64_t queries = 5, keys = 7;

    PointerFixture() {
        plot.resize(400, 300);
        plot.xAxis->setRange(-0.5, 6.5);
        plot.yAxis->setRange(-0.5, 4.5);
        plot.yAxis->setRangeReversed(true);
        pointer.setExtent([this] { return CellPointer::Extent{queries, keys}; });
        pointer.setCellText([](int q, int k) { return QStringLiteral("cell %1 %2").arg(q).arg(k); });
    }
    QPoint pixelOf(int query, int key) {
        return {qRound(plot.xAxis->coordToPixel(key)), qRound(plot.yAxis->coordToPixel(query))};
    }
};

}  // namespace

class TestCellPointer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void hoversTheCellUnderThePointerOncePerCell() {
        PointerFixture f;
        f.plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&f.plot));
        f.plot.replot();
        QSignalSpy hovered(&f.pointer, &CellPointer::cellHovered);
        QTest::mouseMove(&f.plot, f.pixelOf(3, 5));
        QTRY_COMPARE(hovered.count(), 1);
        QCOMPARE(hovered.last().at(0).toInt(), 3);
        QCOMPARE(hovered.last().at(1).toInt(), 5);
        QCOMPARE(f.pointer.hoveredQuery(), 3);
        QCOMPARE(f.pointer.hoveredKey(), 5);
        // A quarter of a cell further is the same cell: no signal for it (the next cell's signal,
        // delivered after it, is the second).
        QTest::mouseMove(&f.plot, f.pixelOf(3, 5) + QPoint(qRound(f.plot.xAxis->coordToPixel(0.25) - f.plot.xAxis->coordToPixel(0)), 0));
        QTest::mouseMove(&f.plot, f.pixelOf(3, 6));
        QTRY_COMPARE(hovered.count(), 2);
        QCOMPARE(hovered.last().at(1).toInt(), 6);
        // Nothing drawn: the same place hovers nothing and says so once.
        f.queries = f.keys = 0;
        QTest::mouseMove(&f.plot, f.pixelOf(1, 1));
        QTRY_COMPARE(hovered.count(), 3);
        QCOMPARE(hovered.last().at(0).toInt(), -1);
        QCOMPARE(f.pointer.hoveredQuery(), -1);
    }

    void arrowKeysStepFromTheAnchorWithinTheMatrix() {
        PointerFixture f;
        QSignalSpy moved(&f.pointer, &CellPointer::cursorMoved);
        QSignalSpy hovered(&f.pointer, &CellPointer::cellHovered);
        QTest::keyClick(&f.plot, Qt::Key_Down);  // from no cell: the first
        QCOMPARE(moved.last().at(0).toInt(), 0);
        QCOMPARE(moved.last().at(1).toInt(), 0);
        QCOMPARE(hovered.count(), 1);
        f.pointer.clearHover();  // the pointer left: the cursor goes on from its cell
        QTest::keyClick(&f.plot, Qt::Key_Right, Qt::ShiftModifier);  // ten keys on: the last of 7
        QCOMPARE(moved.last().at(0).toInt(), 0);
        QCOMPARE(moved.last().at(1).toInt(), 6);
        f.pointer.clearHover();
        f.pointer.setAnchor(2, 3);  // a cell marked by a linked view
        QTest::keyClick(&f.plot, Qt::Key_Up);
        QCOMPARE(moved.last().at(0).toInt(), 1);
        QCOMPARE(moved.last().at(1).toInt(), 3);
        QTest::keyClick(&f.plot, Qt::Key_Home);
        QCOMPARE(moved.last().at(1).toInt(), 0);
        // Outside the matrix nothing moves.
        const int before = moved.count();
        f.pointer.moveCursorTo(5, 0);
        QCOMPARE(moved.count(), before);
        // Off: the keys are left to the plot.
        f.pointer.setKeyboardCursor(false);
        QTest::keyClick(&f.plot, Qt::Key_Down);
        QCOMPARE(moved.count(), before);
    }

    void zoomKeysAskForTheFactorSet() {
        PointerFixture f;
        QSignalSpy zoom(&f.pointer, &CellPointer::zoomRequested);
        QTest::keyClick(&f.plot, Qt::Key_Plus);
        QCOMPARE(zoom.count(), 0);  // off by default
        f.pointer.setZoomKeyFactor(0.8);
        QTest::keyClick(&f.plot, Qt::Key_Plus);
        QTest::keyClick(&f.plot, Qt::Key_Minus);
        QCOMPARE(zoom.count(), 2);
        QCOMPARE(zoom.at(0).at(0).toDouble(), 0.8);
        QCOMPARE(zoom.at(1).at(0).toDouble(), 1.0 / 0.8);
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestCellPointer)
#include "test_cell_pointer.moc"
