// A session checked against the catalog before anything is applied (gui/settings/session_resolve.h
// resolveSession): what it resolves to, and each refusal with its reason.
#include "support/qt_test_support.h"

#include "gui/settings/session_resolve.h"

#include <attnscope/variant_catalog.h>

#include <QJsonObject>
#include <QTest>

using attnscope::app::ResolvedSession;
using attnscope::app::SessionState;
using attnscope::app::resolveSession;
namespace engine = attnscope::engine;

namespace {

SessionState longformerSession() {
    SessionState s;
    s.variantId = QStringLiteral("longformer");
    s.params = QJsonObject{{"window", 3}, {"causal", true}};
    s.compare = {{QStringLiteral("bigbird"), QJsonObject{{"block", 4}}}, {QStringLiteral("full"), QJsonObject{}}};
    return s;
}

}  // namespace

class TestSessionResolve : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void resolvesVariantsAndTheirValues() {
        QString error;
        const auto resolved = resolveSession(longformerSession(), engine::variantCatalog(), 3, &error);
        QVERIFY2(resolved, qPrintable(error));
        QCOMPARE(resolved->variant->id, std::string("longformer"));
        QCOMPARE(std::get<std::int64_t>(resolved->params.at("window")), std::int64_t{3});
        QVERIFY(std::get<bool>(resolved->params.at("causal")));
        QCOMPARE(resolved->compared.size(), std::size_t{2});
        QCOMPARE(resolved->compared[0].first->id, std::string("bigbird"));
        QCOMPARE(std::get<std::int64_t>(resolved->compared[0].second.at("block")), std::int64_t{4});
        QCOMPARE(resolved->compared[1].first->id, std::string("full"));
    }

    void refusesWithTheReason() {
        QString error;
        SessionState unknown = longformerSession();
        unknown.variantId = QStringLiteral("no_such_variant");
        QVERIFY(!resolveSession(unknown, engine::variantCatalog(), 3, &error));
        QVERIFY(error.contains(QStringLiteral("\"no_such_variant\"")) && error.endsWith(QStringLiteral("Nothing was changed.")));

        SessionState badParam = longformerSession();
        badParam.params = QJsonObject{{"window", "wide"}};
        QVERIFY(!resolveSession(badParam, engine::variantCatalog(), 3, &error));
        QVERIFY2(error.contains(QStringLiteral("window")), qPrintable(error));

        QVERIFY(!resolveSession(longformerSession(), engine::variantCatalog(), 1, &error));
        QVERIFY2(error.contains(QStringLiteral("compares 2 variants; at most 1")), qPrintable(error));

        SessionState badCompare = longformerSession();
        badCompare.compare[1].id = QStringLiteral("gone");
        QVERIFY(!resolveSession(badCompare, engine::variantCatalog(), 3, &error));
        QVERIFY(error.contains(QStringLiteral("\"gone\"")));

        SessionState badCompareParam = longformerSession();
        badCompareParam.compare[0].params = QJsonObject{{"block", -2}};
        QVERIFY(!resolveSession(badCompareParam, engine::variantCatalog(), 3, &error));
        QVERIFY2(error.contains(QStringLiteral("compare[0]")), qPrintable(error));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestSessionResolve)
#include "test_session_resolve.moc"
