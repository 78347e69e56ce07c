// The guided tour's steps as the window reads them (resources/tour/guided_tour.json): every one
// names a tab the window has, variants of the catalog, and has its text.
#include "support/qt_test_support.h"

#include "views/help/guided_tour.h"

#include <attnscope/variant_catalog.h>

#include <QTest>

class TestGuidedTour : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyStepNamesATabAndCatalogVariants() {
        const auto& steps = attnscope::views::guidedTour();
        QCOMPARE(steps.size(), std::size_t{7});
        const QStringList tabs{"heatmap", "mask", "compare", "diagnostics", "links", "cost", "atlas"};
        for (const auto& step : steps) {
            QVERIFY2(tabs.contains(step.view), qPrintable(step.view));
            if (!step.variant.isEmpty())
                QVERIFY2(attnscope::engine::findVariantInfo(step.variant.toStdString()), qPrintable(step.variant));
            for (const QString& id : step.compare) QVERIFY2(attnscope::engine::findVariantInfo(id.toStdString()), qPrintable(id));
            QVERIFY(step.title.startsWith(QString::number(&step - &steps.front() + 1) + QStringLiteral(". ")));
            QVERIFY(step.text.size() > 100);
        }
        // "@exact" is the catalog's exact softmax; the last step opens the trained sample.
        QCOMPARE(steps.front().variant.toStdString(), attnscope::engine::exactReference().id);
        QCOMPARE(steps[2].compare, (QStringList{"longformer", "sparse_strided"}));
        QVERIFY(steps.back().sampleModel);
        QVERIFY(steps.back().variant.isEmpty());
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestGuidedTour)
#include "test_guided_tour.moc"
