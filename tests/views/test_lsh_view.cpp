#include "support/qt_test_support.h"
#include "views/test_fixtures.h"

#include "views/diagnostics/categorical_palette.h"
#include "views/diagnostics/lsh_view.h"
#include "views/data/inspection_state.h"

#include <QTest>

#include <cmath>

using attnscope::views::CategoricalPalette;
using attnscope::views::InspectionState;
using attnscope::views::LshView;
namespace engine = attnscope::engine;

namespace {

constexpr int kHeads = 2, kRounds = 2, kN = 6, kBuckets = 4, kChunk = 4;

long long bucketOf(int h, int r, int t) { return (h * 3 + r * 5 + t * 7 + (t * t) % 3) % kBuckets; }

// A reformer result with hand-made buckets [H, rounds, n]; `sorted` is left out on purpose when
// `withSorted` is false, so the view's own (engine-rule) sort is checked too.
std::shared_ptr<const engine::RunResult> makeLshRun(bool withSorted) {
    auto run = std::const_pointer_cast<engine::RunResult>(attnscope::testing::makeDenseResult(kHeads, kN));
    engine::AttentionResult& r = run->results[0];
    r.variantId = "reformer";
    r.params = {{"n_buckets", std::int64_t{kBuckets}}, {"chunk_len", std::int64_t{kChunk}},
                {"n_chunks_before", std::int64_t{1}}, {"n_chunks_after", std::int64_t{0}}, {"n_hashes", std::int64_t{kRounds}}};
    std::vector<std::int64_t> buckets;
    for (int h = 0; h < kHeads; ++h)
        for (int round = 0; round < kRounds; ++round)
            for (int t = 0; t < kN; ++t) buckets.push_back(bucketOf(h, round, t));
    r.diagnostics["buckets"] = engine::PlainTensor::fromI64({kHeads, kRounds, kN}, buckets);
    r.diagnostics["rotations"] = engine::PlainTensor::zeros(engine::DType::F32, {kHeads, 4, kRounds, kBuckets / 2});
    if (withSorted) {
        const int pad = 8;  // n = 6 padded to two chunks of 4
        std::vector<std::int64_t> sorted;
        for (int h = 0; h < kHeads; ++h)
            for (int round = 0; round < kRounds; ++round) {
                for (int b = 0; b < kBuckets; ++b)
                    for (int t = 0; t < kN; ++t)
                        if (bucketOf(h, round, t) == b) sorted.push_back(t);
                for (int s = kN; s < pad; ++s) sorted.push_back(-1);
            }
        r.diagnostics["sorted"] = engine::PlainTensor::fromI64({kHeads, kRounds, pad}, sorted);
    }
    return run;
}

}  // namespace

class TestLshView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void cellsAndColoursAreTheStoredBuckets() {
        InspectionState state;
        LshView view;
        view.setInspectionState(&state);
        view.setResult(makeLshRun(true));
        QVERIFY2(view.hasBuckets(), qPrintable(view.message()));
        const CategoricalPalette& palette = CategoricalPalette::standard();
        for (int head : {0, 1}) {
            state.setHead(head);
            QCOMPARE(view.shownHead(), head);
            QCOMPARE(view.rounds(), kRounds);
            QCOMPARE(view.bucketCount(), kBuckets);
            for (int round = 0; round < kRounds; ++round)
                for (int t = 0; t < kN; ++t) {
                    QCOMPARE(view.bucketCell(round, t), static_cast<double>(bucketOf(head, round, t)));
                    QCOMPARE(view.bucketColor(round, t), palette.color(bucketOf(head, round, t)));
                }
        }
    }

    void sortedOrderIsCutIntoChunksThatSeeTheirWindow() {
        for (bool stored : {true, false}) {
            LshView view;
            view.setResult(makeLshRun(stored));
            QCOMPARE(view.chunkLength(), kChunk);
            QCOMPARE(view.chunkCount(), 4);  // 2 rounds x 8 padded slots / 4
            for (int round = 0; round < kRounds; ++round) {
                long long previousBucket = -1;
                for (int slot = 0; slot < 8; ++slot) {
                    const long long token = view.sortedToken(round, slot);
                    if (slot >= kN) {
                        QCOMPARE(token, -1LL);
                        QVERIFY(std::isnan(view.sortedCell(round, slot)));
                        continue;
                    }
                    QCOMPARE(view.sortedCell(round, slot), static_cast<double>(bucketOf(0, round, int(token))));
                    QVERIFY(bucketOf(0, round, int(token)) >= previousBucket);
                    previousBucket = bucketOf(0, round, int(token));
                }
            }
            // n_chunks_before = 1 over the whole list: chunk 0 wraps to the last chunk.
            QCOMPARE(view.chunksSeenBy(0), (QVector<int>{3, 0}));
            QCOMPARE(view.chunksSeenBy(2), (QVector<int>{1, 2}));
            QVERIFY(view.chunkText().contains(QStringLiteral("chunk 2 (round 1) sees 1 (round 0, slots 4–7), 2")));
        }
    }

    void otherVariantsGetASentence() {
        LshView view;
        view.setResult(attnscope::testing::makeDenseResult(1, 3));
        QVERIFY(!view.hasBuckets());
        QVERIFY(view.message().contains(QStringLiteral("reformer")));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestLshView)
#include "test_lsh_view.moc"
