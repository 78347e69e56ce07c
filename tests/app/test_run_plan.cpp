// The run plans (app/common/run_plan.h): the exact reference beside compared and approximating
// variants, the error curve's runs, and the atlas's best replacements for a head, by hand.
#include "support/qt_test_support.h"

#include "common/run_plan.h"

#include <attnscope/diagnostics.h>

#include <QTest>

#include <cmath>
#include <limits>

using namespace attnscope;

namespace {

engine::VariantRequest request(const std::string& id, engine::ParamValues params = {}) { return {id, std::move(params)}; }

engine::CoverageSetting setting(const std::string& id, std::int64_t window) {
    engine::CoverageSetting s;
    s.variantId = id;
    s.params["window"] = window;
    return s;
}

}  // namespace

class TestRunPlan : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void exactReferenceTakesTheFirstVariantsCausal() {
        std::vector<engine::VariantRequest> variants{request("longformer", {{"causal", true}, {"window", std::int64_t{4}}}),
                                                     request("bigbird")};
        QVERIFY(!app::hasExactReference(variants));
        QVERIFY(app::addExactReference(variants));
        QCOMPARE(variants.size(), std::size_t{3});
        QCOMPARE(variants.back().id, std::string("full"));
        QVERIFY(std::get<bool>(variants.back().params.at("causal")));
        QVERIFY(!variants.back().params.count("window"));  // only causal is carried over
        QVERIFY(app::hasExactReference(variants));
        QVERIFY(!app::addExactReference(variants));  // once
        QCOMPARE(variants.size(), std::size_t{3});
    }

    void approximationsNeedTheReferencePatternsDoNot() {
        QVERIFY(engine::diagnosticsNeedExactReference("performer"));
        QVERIFY(engine::diagnosticsNeedExactReference("linformer"));
        QVERIFY(!engine::diagnosticsNeedExactReference("full"));
        QVERIFY(!engine::diagnosticsNeedExactReference("no_such_variant"));
        QCOMPARE(app::defaultComparedVariant(), std::string("longformer"));
    }

    void errorCurveRunsEachValueThenTheReference() {
        const auto runs = app::errorCurveVariants("performer", {{"causal", true}}, {16.0, 64.0});
        QCOMPARE(runs.size(), std::size_t{3});
        QCOMPARE(std::get<std::int64_t>(runs[0].params.at("nb_features")), std::int64_t{16});
        QCOMPARE(std::get<std::int64_t>(runs[1].params.at("nb_features")), std::int64_t{64});
        QVERIFY(std::get<bool>(runs[1].params.at("causal")));
        QCOMPARE(runs[2].id, std::string("full"));
        QVERIFY(std::get<bool>(runs[2].params.at("causal")));
        QVERIFY(app::errorCurveVariants("longformer", {}, {1.0}).empty());  // no error curve
    }

    void compareAddsTheReferenceUntilItIsOverBudget() {
        app::ComparePlan plan;
        std::vector<engine::VariantRequest> variants{request("longformer", {{"causal", true}})};
        plan.addTo(variants, {request("bigbird"), request("sparse_fixed")});
        QCOMPARE(variants.size(), std::size_t{4});
        QCOMPARE(plan.panes(), 3);  // the reference is not a pane
        QVERIFY(plan.exactAdded());
        QCOMPARE(variants[3].id, std::string("full"));
        QVERIFY(std::get<bool>(variants[3].params.at("causal")));
        // Another failure, or one without the reference, does not change the next request.
        QVERIFY(!plan.dropExactAfter(engine::ErrorCode::InvalidArgument, "bad"));
        QVERIFY(plan.dropExactAfter(engine::ErrorCode::OutOfBudget, "needs 4 GiB"));
        QVERIFY(QString::fromStdString(plan.exactNote()).contains(QStringLiteral("needs 4 GiB")));
        std::vector<engine::VariantRequest> retry{request("longformer")};
        plan.addTo(retry, {request("bigbird")});
        QCOMPARE(retry.size(), std::size_t{2});  // without the reference, once
        QVERIFY(!plan.exactAdded());
        QVERIFY(!plan.exactNote().empty());      // the tab says why
        QVERIFY(!plan.dropExactAfter(engine::ErrorCode::OutOfBudget, "again"));
        std::vector<engine::VariantRequest> next{request("longformer")};
        plan.addTo(next, {request("bigbird")});
        QCOMPARE(next.size(), std::size_t{3});
        QVERIFY(plan.exactNote().empty());
        // A compared exact variant is the reference: nothing added.
        std::vector<engine::VariantRequest> withFull{request("longformer")};
        plan.addTo(withFull, {request("full")});
        QCOMPARE(withFull.size(), std::size_t{2});
        QVERIFY(!plan.exactAdded());
        plan.clear();
        QCOMPARE(plan.panes(), 0);
    }

    void bestSettingsByOutputErrorWithoutTheInapplicable() {
        engine::HeadAtlas atlas;
        atlas.layers = 1;
        atlas.heads = 2;
        atlas.settings = {setting("longformer", 2), setting("longformer", 8), setting("bigbird", 4), setting("sparse_strided", 4)};
        const double nan = std::nan("");
        atlas.metrics.resize(2);
        atlas.metrics[0].outputError = {0.30, 0.05, nan, 0.10};
        atlas.metrics[1].outputError = {0.20, 0.20, 0.01};  // the last setting has no value
        const auto head0 = app::bestCoverageSettings(atlas, 0, 0, 3);
        QCOMPARE(head0.size(), std::size_t{3});
        QCOMPARE(head0[0], &atlas.settings[1]);  // 0.05
        QCOMPARE(head0[1], &atlas.settings[3]);  // 0.10
        QCOMPARE(head0[2], &atlas.settings[0]);  // 0.30; bigbird (NaN) left out
        const auto head1 = app::bestCoverageSettings(atlas, 0, 1, 2);
        QCOMPARE(head1.size(), std::size_t{2});
        QCOMPARE(head1[0], &atlas.settings[2]);
        QCOMPARE(head1[1], &atlas.settings[0]);  // a tie keeps the atlas's order
        QVERIFY(app::bestCoverageSettings(atlas, 0, 2, 3).empty());
        QVERIFY(app::bestCoverageSettings(atlas, 1, 0, 3).empty());
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestRunPlan)
#include "test_run_plan.moc"

