// The Q–K map tab on a real run: every query and key placed, a selected query's lines going to the
// keys it weighs most (the result's weights), a click selecting the token for every view, the
// options reaching the map (without them nothing is moved or scaled).

#include "support/qt_test_support.h"

#include "views/data/inspection_state.h"
#include "views/qkmap/qk_map_grid.h"
#include "views/qkmap/qk_map_view.h"
#include "views/widgets/qcp.h"

#include "views/explicit_run.h"

#include <QTest>

using namespace attnscope;
using attnscope::views::InspectionState;
using attnscope::views::QkMapView;

class TestQkMapView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void placesQueriesAndKeysAndLinksTheStrongest() {
        const std::int64_t heads = 2, n = 16, d = 8;
        const auto shared = attnscope::testing::randomExplicitRun(heads, n, d, "full", {}, 5);
        QVERIFY(shared);
        InspectionState state;
        QkMapView view;
        view.resize(900, 600);
        view.setInspectionState(&state);
        QVERIFY(!view.map());
        view.setResult(shared);
        QVERIFY(view.map());
        QCOMPARE(static_cast<int>(view.map()->points.size()), 2 * static_cast<int>(n));
        QVERIFY(view.explanation().contains(QStringLiteral("principal axes")));

        // selecting query 5: lines to its five strongest keys, strongest first, and every view told
        view.selectPoint(5);
        QCOMPARE(view.selectedQuery(), 5);
        QCOMPARE(state.hoveredQuery(), 5);
        QCOMPARE(static_cast<int>(view.linkedKeys().size()), QkMapView::kLinkedKeys);
        const engine::AttentionResult& r = shared->results[0];
        for (std::size_t t = 1; t < view.linkedKeys().size(); ++t)
            QVERIFY(r.weightAt(0, 5, view.linkedKeys()[t - 1]) >= r.weightAt(0, 5, view.linkedKeys()[t]));
        float strongest = 0;
        for (std::int64_t j = 0; j < n; ++j) strongest = std::max(strongest, r.weightAt(0, 5, j));
        QCOMPARE(r.weightAt(0, 5, view.linkedKeys().front()), strongest);
        // a key point keeps the query and selects the key
        view.selectPoint(static_cast<int>(n) + 3);
        QCOMPARE(state.hoveredKey(), 3);
        QCOMPARE(view.selectedQuery(), 5);
        // the hovered query elsewhere moves the lines
        state.setHovered(9, -1);
        QCOMPARE(view.selectedQuery(), 9);

        engine::QkMapOptions none;
        none.translateKeys = false;
        none.scale = false;
        view.setOptions(none);
        QCOMPARE(view.map()->scale, 1.0);
        view.setColouring(QkMapView::Colouring::Position);
        QVERIFY(view.map());
        // t-SNE in the background: the map arrives, every point placed
        engine::QkMapOptions tsne;
        tsne.method = engine::QkMapOptions::Method::Tsne;
        view.setOptions(tsne);
        QVERIFY(view.isComputing());
        QTRY_VERIFY_WITH_TIMEOUT(!view.isComputing() && view.map(), 20000);
        QCOMPARE(static_cast<int>(view.map()->points.size()), 2 * static_cast<int>(n));
        QVERIFY(view.explanation().contains(QStringLiteral("t-SNE")));
        // and UMAP the same way
        engine::QkMapOptions umap;
        umap.method = engine::QkMapOptions::Method::Umap;
        view.setOptions(umap);
        QVERIFY(view.isComputing());
        QTRY_VERIFY_WITH_TIMEOUT(!view.isComputing() && view.map(), 20000);
        QCOMPARE(static_cast<int>(view.map()->points.size()), 2 * static_cast<int>(n));
        QVERIFY(view.explanation().contains(QStringLiteral("UMAP")));
        // every head at once: one PCA map per head, equal to the head's own; a click on one selects it
        view.setOptions(engine::QkMapOptions{});
        view.setAllHeads(true);
        QTRY_VERIFY_WITH_TIMEOUT(!view.grid()->isComputing() && !view.grid()->maps().empty(), 20000);
        QCOMPARE(static_cast<std::int64_t>(view.grid()->maps().size()), heads);
        const auto head1 = engine::queryKeyMap(*shared, 0, 1, engine::QkMapOptions{});
        QVERIFY(head1.ok());
        QCOMPARE(view.grid()->maps()[1].points[3].x, head1->points[3].x);
        view.resize(900, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto* plot = view.grid()->findChild<QCustomPlot*>();
        QPoint inside;
        for (int y = 0; y < plot->height() && inside.isNull(); y += 5)
            for (int x = 0; x < plot->width(); x += 5)
                if (view.grid()->headAt(QPoint(x, y)) == 1) {
                    inside = QPoint(x + 10, y + 10);
                    break;
                }
        QVERIFY(!inside.isNull());
        QTest::mouseClick(plot, Qt::LeftButton, {}, inside);
        QCOMPARE(state.head(), 1);
        QVERIFY(!view.showsAllHeads());
        view.setResult(nullptr);
        QVERIFY(!view.map());
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestQkMapView)

#include "test_qk_map_view.moc"
