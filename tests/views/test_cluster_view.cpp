#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/diagnostics/cluster_view.h"
#include "views/data/inspection_state.h"

#include <QComboBox>
#include <QTest>

#include <cmath>

using attnscope::views::ClusterView;
using attnscope::views::InspectionState;
namespace engine = attnscope::engine;

namespace {

constexpr int kHeads = 2, kIterations = 3, kClusters = 3, kN = 7;

std::int64_t assigned(int h, int it, int side, int t) { return (h + it * 2 + side + t * (it + 1)) % kClusters; }
std::int64_t nearestOf(int h, int side, int t) { return (h + side * 2 + t) % kClusters; }

// A routing result: assignments [H, iterations, 2, n], nearest [H, 2, n], routed_count [H, n]
// with queries 2 and 5 of head 0 unrouted.
std::shared_ptr<const engine::RunResult> makeRoutingRun() {
    auto run = std::const_pointer_cast<engine::RunResult>(attnscope::testing::makeDenseResult(kHeads, kN));
    engine::AttentionResult& r = run->results[0];
    r.variantId = "routing";
    r.params = {{"clusters", std::int64_t{kClusters}}, {"iterations", std::int64_t{kIterations}}, {"mode", std::string("topw")}};
    std::vector<std::int64_t> a, nearest, routed;
    for (int h = 0; h < kHeads; ++h)
        for (int it = 0; it < kIterations; ++it)
            for (int side = 0; side < 2; ++side)
                for (int t = 0; t < kN; ++t) a.push_back(assigned(h, it, side, t));
    for (int h = 0; h < kHeads; ++h)
        for (int side = 0; side < 2; ++side)
            for (int t = 0; t < kN; ++t) nearest.push_back(nearestOf(h, side, t));
    for (int h = 0; h < kHeads; ++h)
        for (int t = 0; t < kN; ++t) routed.push_back(h == 0 && (t == 2 || t == 5) ? 0 : 1);
    r.diagnostics["assignments"] = engine::PlainTensor::fromI64({kHeads, kIterations, 2, kN}, a);
    r.diagnostics["nearest"] = engine::PlainTensor::fromI64({kHeads, 2, kN}, nearest);
    r.diagnostics["routed_count"] = engine::PlainTensor::fromI64({kHeads, kN}, routed);
    r.diagnostics["centroids"] = engine::PlainTensor::zeros(engine::DType::F32, {kHeads, kClusters, 4});
    return run;
}

}  // namespace

class TestClusterView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sizesAreCountsOfAssignmentsPerIteration() {
        InspectionState state;
        ClusterView view;
        view.setInspectionState(&state);
        view.setResult(makeRoutingRun());
        QVERIFY2(view.hasClusters(), qPrintable(view.message()));
        QCOMPARE(view.clusterCount(), kClusters);
        QCOMPARE(view.stepCount(), kIterations + 1);
        QCOMPARE(view.step(), kIterations);  // the final routing first
        for (int head : {0, 1}) {
            state.setHead(head);
            for (int step = 0; step <= kIterations; ++step) {
                view.setStep(step);
                for (auto side : {ClusterView::Queries, ClusterView::Keys}) {
                    QVector<double> expected(kClusters, 0.0);
                    for (int t = 0; t < kN; ++t) {
                        const std::int64_t c = step < kIterations ? assigned(head, step, side, t) : nearestOf(head, side, t);
                        expected[static_cast<int>(c)] += 1;
                        const bool unrouted = head == 0 && step == kIterations && side == ClusterView::Queries && (t == 2 || t == 5);
                        if (unrouted) QVERIFY(std::isnan(view.stripCell(side, t)));
                        else QCOMPARE(view.stripCell(side, t), static_cast<double>(c));
                    }
                    QCOMPARE(view.clusterSizes(side), expected);
                }
            }
        }
    }

    void unroutedQueriesAreShownAsSuch() {
        ClusterView view;
        view.setResult(makeRoutingRun());
        QCOMPARE(view.unroutedQueries(), (QVector<int>{2, 5}));
        QVERIFY2(view.summary().contains(QStringLiteral("2 queries unrouted")), qPrintable(view.summary()));
        QVERIFY(view.summary().contains(QStringLiteral(": 2, 5")));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestClusterView)
#include "test_cluster_view.moc"
