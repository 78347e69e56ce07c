#include "support/qt_test_support.h"

#include "views/data/error_summary.h"

#include <attnscope/explicit_weights.h>

#include <QTest>

#include <cmath>

using attnscope::views::ErrorSummary;
using attnscope::views::summarizeAgainstExact;
namespace engine = attnscope::engine;

namespace {

// Exact softmax of one head, 3 x 3, rows chosen so that every sum is exact in binary.
engine::AttentionResult makeFull() {
    engine::AttentionResult r;
    r.variantId = "full";
    r.heads = 1;
    r.n = r.m = 3;
    r.weights = engine::makeDenseWeights(1, 3, 3, {0.5f, 0.25f, 0.25f,  //
                                                   0.25f, 0.5f, 0.25f,  //
                                                   0.25f, 0.25f, 0.5f});
    return r;
}

// A band |i - j| <= 1 with weights aligned with the pattern:
//   row 0: keys {0, 1} = 0.75, 0.25           (full's key 2 is outside: 0.25 of its mass lost)
//   row 1: keys {0, 1, 2} = 0.375, 0.375, 0.25 (every key: KL is defined here)
//   row 2: keys {1, 2} = 0.375, 0.625
engine::SparsePattern bandPattern() {
    engine::SparsePattern p;
    p.rows = p.cols = 3;
    p.rowPtr = {0, 2, 5, 7};
    p.colIdx = {0, 1, 0, 1, 2, 1, 2};
    p.reason.assign(7, static_cast<std::uint8_t>(engine::PatternReason::Local));
    return p;
}

engine::AttentionResult makeBand(std::vector<float> weights = {0.75f, 0.25f, 0.375f, 0.375f, 0.25f, 0.375f, 0.625f}) {
    engine::AttentionResult r;
    r.variantId = "band";
    r.heads = 1;
    r.n = r.m = 3;
    r.weights = engine::makeListedWeights(1, bandPattern(), std::move(weights));
    return r;
}

}  // namespace

class TestErrorSummary : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void handWorkedThreeByThree() {
        const ErrorSummary s = summarizeAgainstExact(makeBand(), makeFull(), 0);
        QVERIFY2(s.ok, s.message.c_str());
        QCOMPARE(s.rows, std::int64_t{3});
        // Row L1 = Σ_j |band − full|:
        //   row 0: |0.75 − 0.5| + |0.25 − 0.25| + |0 − 0.25| = 0.5
        //   row 1: |0.375 − 0.25| + |0.375 − 0.5| + 0 = 0.25
        //   row 2: |0 − 0.25| + |0.375 − 0.25| + |0.625 − 0.5| = 0.5
        const double tol = 1e-7;  // float32 weights
        QVERIFY(std::abs(s.rowL1[0] - 0.5) < tol);
        QVERIFY(std::abs(s.rowL1[1] - 0.25) < tol);
        QVERIFY(std::abs(s.rowL1[2] - 0.5) < tol);
        QVERIFY(std::abs(s.meanL1 - 1.25 / 3) < tol);
        QVERIFY(std::abs(s.maxL1 - 0.5) < tol);
        QCOMPARE(s.maxL1Row, std::int64_t{0});  // the first of the two largest rows

        // KL(full ‖ band): rows 0 and 2 give 0 to a key where full has 0.25: undefined there.
        // Row 1: 0.25 ln(0.25/0.375) + 0.5 ln(0.5/0.375) + 0.25 ln(1) = 0.25 ln(2/3) + 0.5 ln(4/3).
        const double kl1 = 0.25 * std::log(2.0 / 3.0) + 0.5 * std::log(4.0 / 3.0);
        QCOMPARE(s.klDefinedRows, std::int64_t{1});
        QVERIFY(std::isnan(s.rowKl[0]));
        QVERIFY(std::isnan(s.rowKl[2]));
        QVERIFY(std::abs(s.rowKl[1] - kl1) < tol);
        QVERIFY(std::abs(s.meanKl - kl1) < tol);
        QVERIFY(std::abs(kl1 - 0.0424750) < 1e-6);  // the number worked by hand
        QCOMPARE(s.klDescription(), std::string("KL over the 1 of 3 rows where it is defined (elsewhere the variant "
                                                "gives 0 where full has mass)"));

        // Kept mass: row 0 keeps 0.5 + 0.25, row 1 everything, row 2 0.25 + 0.5.
        QCOMPARE(s.rowKeptMass[0], 0.75);
        QCOMPARE(s.rowKeptMass[1], 1.0);
        QCOMPARE(s.rowKeptMass[2], 0.75);
        QCOMPARE(s.meanKeptMass, 2.5 / 3);
        QCOMPARE(s.emptyReferenceRows, std::int64_t{0});
    }

    void variantEqualToFullGivesZeroAndOne() {
        // The same weights in both layouts: dense, and aligned with an explicit all-keys pattern.
        engine::AttentionResult listed = makeFull();
        listed.variantId = "listed";
        engine::SparsePattern all;
        all.rows = all.cols = 3;
        all.rowPtr = {0, 3, 6, 9};
        all.colIdx = {0, 1, 2, 0, 1, 2, 0, 1, 2};
        all.reason.assign(9, 0);
        listed.weights = engine::makeListedWeights(1, all, {0.5f, 0.25f, 0.25f, 0.25f, 0.5f, 0.25f, 0.25f, 0.25f, 0.5f});
        for (const engine::AttentionResult& same : {makeFull(), listed}) {
            const ErrorSummary s = summarizeAgainstExact(same, makeFull(), 0);
            QVERIFY(s.ok);
            QCOMPARE(s.meanL1, 0.0);
            QCOMPARE(s.maxL1, 0.0);
            QCOMPARE(s.meanKl, 0.0);
            QCOMPARE(s.klDefinedRows, std::int64_t{3});
            QCOMPARE(s.meanKeptMass, 1.0);
            QCOMPARE(s.klDescription(), std::string("KL over all 3 rows"));
        }
    }

    void kLUndefinedEverywhereIsSaidSo() {
        // Row 1 drops key 2 too (weight 0 on an allowed key: top-k and entmax give exact zeros).
        engine::AttentionResult band = makeBand({0.75f, 0.25f, 0.5f, 0.5f, 0.0f, 0.375f, 0.625f});
        const ErrorSummary s = summarizeAgainstExact(band, makeFull(), 0);
        QCOMPARE(s.klDefinedRows, std::int64_t{0});
        QVERIFY(std::isnan(s.meanKl));
        QVERIFY(s.klDescription().rfind("KL undefined", 0) == 0);
        // The pattern still allows key 2 in row 1: its full mass counts as kept.
        QCOMPARE(s.rowKeptMass[1], 1.0);
    }

    void emptyReferenceRowsAreLeftOut() {
        engine::AttentionResult full = makeFull();
        full.weights = engine::makeDenseWeights(1, 3, 3, {0.5f, 0.25f, 0.25f, 0.0f, 0.0f, 0.0f, 0.25f, 0.25f, 0.5f});
        const ErrorSummary s = summarizeAgainstExact(makeFull(), full, 0);
        QCOMPARE(s.emptyReferenceRows, std::int64_t{1});
        QCOMPARE(s.rowL1[1], 1.0);  // L1 still counts the row
        QVERIFY(std::isnan(s.rowKeptMass[1]));
        QCOMPARE(s.meanKeptMass, 1.0);  // over the two rows where full has mass
        QCOMPARE(s.klDefinedRows, std::int64_t{2});
    }

    void badInputGivesAMessageNotACrash() {
        engine::AttentionResult other = makeFull();
        other.n = other.m = 4;
        const ErrorSummary shapes = summarizeAgainstExact(other, makeFull(), 0);
        QVERIFY(!shapes.ok);
        QVERIFY2(shapes.message.find("1 x 4 x 4") != std::string::npos, shapes.message.c_str());
        QVERIFY(shapes.message.find("same Q, K, V") != std::string::npos);
        QVERIFY(std::isnan(shapes.meanL1));

        engine::AttentionResult none = makeBand();
        none.weights = nullptr;
        QVERIFY(!summarizeAgainstExact(none, makeFull(), 0).ok);
        const ErrorSummary head = summarizeAgainstExact(makeBand(), makeFull(), 3);
        QVERIFY(!head.ok);
        QVERIFY(head.message.find("head 3") != std::string::npos);
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestErrorSummary)
#include "test_error_summary.moc"
