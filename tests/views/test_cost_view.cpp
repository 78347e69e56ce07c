#include "support/qt_test_support.h"

#include "views/cost/cost_view.h"
#include "views/widgets/qcp.h"
#include "views/cost/scaling_plot.h"

#include <QLineEdit>
#include <QPushButton>
#include <QLabel>
#include <QSignalSpy>
#include <QTableWidget>
#include <QCoreApplication>
#include <QFontMetricsF>
#include <QTest>

#include <cmath>

using attnscope::views::CostView;
using attnscope::views::ScalingPlot;
using attnscope::views::ScalingPoint;
namespace engine = attnscope::engine;

namespace {

engine::AttentionResult withCounters(const std::string& id, double scores, double softmax, std::uint64_t peak,
                                     double flops, std::int64_t entries) {
    engine::AttentionResult r;
    r.variantId = id;
    r.heads = 2;
    r.n = r.m = 16;
    r.counters.stages = {{"scores", scores}, {"softmax", softmax}};
    r.counters.seconds = scores + softmax;
    r.counters.peakBytes = peak;
    r.counters.flops = flops;
    r.counters.entriesComputed = entries;
    return r;
}

std::shared_ptr<const engine::RunResult> makeRun() {
    auto run = std::make_shared<engine::RunResult>();
    run->n = 16;
    run->heads = 2;
    run->headDim = 8;
    run->results.push_back(withCounters("full", 0.004, 0.002, 4096, 16384.0, 512));
    run->results.push_back(withCounters("longformer", 0.001, 0.0005, 1024, 3072.0, 96));
    return run;
}

ScalingPoint point(const QString& id, std::int64_t n, double seconds, std::uint64_t bytes) {
    ScalingPoint p;
    p.variantId = id;
    p.label = id;
    p.n = n;
    p.seconds = seconds;
    p.peakBytes = bytes;
    return p;
}

}  // namespace

class TestCostView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void tableEqualsTheResultCounters() {
        CostView view;
        view.setVariants({{QStringLiteral("full"), QStringLiteral("Full softmax")},
                          {QStringLiteral("longformer"), QStringLiteral("Longformer")}});
        const auto run = makeRun();
        view.setResult(run);
        QTableWidget* table = view.table();
        // Per variant: one row per stage, then its total row.
        QCOMPARE(table->rowCount(), 6);
        for (int v = 0; v < 2; ++v) {
            const engine::Counters& c = run->results[static_cast<std::size_t>(v)].counters;
            const int base = v * 3;
            QCOMPARE(table->item(base, CostView::VariantColumn)->data(Qt::UserRole).toString(),
                     QString::fromStdString(run->results[static_cast<std::size_t>(v)].variantId));
            for (int s = 0; s < 2; ++s) {
                QCOMPARE(table->item(base + s, CostView::StageColumn)->text(), QString::fromStdString(c.stages[static_cast<std::size_t>(s)].stage));
                QCOMPARE(table->item(base + s, CostView::TimeColumn)->data(Qt::UserRole).toDouble(), c.stages[static_cast<std::size_t>(s)].seconds);
            }
            const int total = base + 2;
            QCOMPARE(table->item(total, CostView::StageColumn)->text(), QStringLiteral("total"));
            QCOMPARE(table->item(total, CostView::TimeColumn)->data(Qt::UserRole).toDouble(), c.seconds);
            QCOMPARE(table->item(total, CostView::PeakColumn)->data(Qt::UserRole).toULongLong(), c.peakBytes);
            QCOMPARE(table->item(total, CostView::FlopsColumn)->data(Qt::UserRole).toDouble(), c.flops);
            QCOMPARE(table->item(total, CostView::EntriesColumn)->data(Qt::UserRole).toLongLong(), c.entriesComputed);
        }
        QCOMPARE(table->item(3, CostView::VariantColumn)->text(), QStringLiteral("Longformer"));
        QCOMPARE(table->item(5, CostView::EntriesColumn)->text(), QStringLiteral("96"));

        // The bar chart stacks the same stage times per variant.
        const QHash<QString, double> full = view.barSeconds(0);
        QCOMPARE(full.size(), 2);
        QCOMPARE(full.value(QStringLiteral("scores")), 0.004);
        QCOMPARE(full.value(QStringLiteral("softmax")), 0.002);
        QCOMPARE(view.barSeconds(1).value(QStringLiteral("softmax")), 0.0005);

        view.setResult(nullptr);
        QCOMPARE(table->rowCount(), 0);
    }

    void sizesParseAndBadSizesAreRefused() {
        QString error;
        QCOMPARE(CostView::parseSizes(QStringLiteral("1024, 256 512,512"), &error), (QVector<int>{256, 512, 1024}));
        QVERIFY(CostView::parseSizes(QStringLiteral("256, lots"), &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("lots")), qPrintable(error));
        QVERIFY(CostView::parseSizes(QStringLiteral("1"), &error).isEmpty());
        QVERIFY(CostView::parseSizes(QString(), &error).isEmpty());
        QCOMPARE(CostView::defaultSizes(), (QVector<int>{256, 512, 1024, 2048, 4096, 8192}));
    }

    void measureEmitsTheIntentWithCheckedVariantsAndSizes() {
        CostView view;
        view.setVariants({{QStringLiteral("full"), QStringLiteral("Full")}, {QStringLiteral("star"), QStringLiteral("Star")}});
        QSignalSpy requested(&view, &CostView::scalingRequested);
        view.requestScaling();  // nothing ticked: a message, no intent
        QCOMPARE(requested.count(), 0);
        QVERIFY(view.scalingStatus().contains(QStringLiteral("Tick")));
        view.setCheckedVariants({QStringLiteral("star")});
        view.sizesEdit()->setText(QStringLiteral("64, 128"));
        view.scalingButton()->click();
        QCOMPARE(requested.count(), 1);
        QCOMPARE(requested.at(0).at(0).toStringList(), QStringList{QStringLiteral("star")});
        QCOMPARE(requested.at(0).at(1).value<QVector<int>>(), (QVector<int>{64, 128}));
        view.sizesEdit()->setText(QStringLiteral("64, x"));
        view.requestScaling();
        QCOMPARE(requested.count(), 1);
        // (the reason under the field, as on the other measurement pages)
        const auto* error = view.findChild<QLabel*>(QStringLiteral("scalingSizesError"));
        QVERIFY(error);
        QVERIFY2(error->text().contains(QStringLiteral("“x” is not a size")), qPrintable(error->text()));

        // While a run goes on, Measure is off and Cancel on.
        view.setScalingStarted(4);
        QVERIFY(view.scalingRunning());
        QVERIFY(!view.scalingButton()->isEnabled());
        QVERIFY(view.cancelButton()->isEnabled());
        QSignalSpy cancel(&view, &CostView::scalingCancelRequested);
        view.cancelButton()->click();
        QCOMPARE(cancel.count(), 1);
        view.setScalingFinished(QStringLiteral("Scaling run cancelled."));
        QVERIFY(view.scalingButton()->isEnabled());
        QCOMPARE(view.scalingStatus(), QStringLiteral("Scaling run cancelled."));
    }

    void logLogSlopeOfPowerLaws() {
        // y = 3 n² exactly: slope 2; y = 5 n: slope 1; one point: undefined.
        const std::vector<double> n{256, 512, 1024, 2048};
        std::vector<double> quadratic, linear;
        for (double x : n) {
            quadratic.push_back(3 * x * x);
            linear.push_back(5 * x);
        }
        QVERIFY(std::abs(attnscope::views::logLogSlope(n, quadratic) - 2.0) < 1e-12);
        QVERIFY(std::abs(attnscope::views::logLogSlope(n, linear) - 1.0) < 1e-12);
        QVERIFY(std::isnan(attnscope::views::logLogSlope({256}, {1.0})));
        // Zeros cannot be on a log axis: left out of the fit.
        QVERIFY(std::abs(attnscope::views::logLogSlope({128, 256, 512, 1024}, {0.0, 4.0, 16.0, 64.0}) - 2.0) < 1e-12);
    }

    void scalingPlotShowsSlopesInTheLegendAndListsSkippedSizes() {
        ScalingPlot plot;
        for (std::int64_t n : {256, 512, 1024}) {
            plot.addPoint(point(QStringLiteral("full"), n, 1e-9 * static_cast<double>(n * n), static_cast<std::uint64_t>(n * n * 16)));
            plot.addPoint(point(QStringLiteral("star"), n, 1e-7 * static_cast<double>(n), static_cast<std::uint64_t>(n * 64)));
        }
        ScalingPoint skipped = point(QStringLiteral("full"), 8192, 0, 0);
        skipped.skipped = true;
        skipped.message = QStringLiteral("skipped, over the memory budget");
        plot.addPoint(skipped);
        QCOMPARE(plot.variantIds(), (QStringList{QStringLiteral("full"), QStringLiteral("star")}));
        QCOMPARE(plot.points(QStringLiteral("full")).size(), 3);
        QVERIFY(std::abs(plot.timeSlope(QStringLiteral("full")) - 2.0) < 1e-9);
        QVERIFY(std::abs(plot.memorySlope(QStringLiteral("star")) - 1.0) < 1e-9);
        QCOMPARE(plot.timeLegend(QStringLiteral("full")), QStringLiteral("full (slope 2.00)"));
        QCOMPARE(plot.timePlot()->graph(1)->name(), QStringLiteral("star (slope 1.00)"));
        QCOMPARE(plot.timePlot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(plot.memoryPlot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(plot.timePlot()->graph(0)->data()->size(), 3);
        QCOMPARE(plot.skippedText(), QStringList{QStringLiteral("full, n = 8192: skipped, over the memory budget")});
    }

    void logTicksAreAsDenseAsTheAxisHasRoom() {
        using attnscope::views::logTickLabels;
        // 1e-4 .. 10 s: five decades. Room for many: 1-2-5 in each decade; for five: powers of ten
        // only; for two: every third power.
        QCOMPARE(logTickLabels(1e-4, 10, 20).size(), 16);
        const auto decades = logTickLabels(1e-4, 10, 6);
        QCOMPARE(decades.keys().size(), 6);
        QCOMPARE(decades.first(), QStringLiteral("0.0001"));
        QCOMPARE(decades.last(), QStringLiteral("10"));
        QCOMPARE(logTickLabels(1e-4, 10, 2).size(), 2);  // 0.001 and 1
        // Within one decade: finer than 1-2-5, so the axis never has a single label.
        QVERIFY(logTickLabels(1.3, 4.5, 8).size() >= 3);
        QVERIFY(logTickLabels(0, 1, 5).isEmpty());
    }

    void theSlopeNoteExplainsLinearMemoryForExactAttention() {
        ScalingPlot plot;
        QVERIFY(plot.slopeNote().startsWith(QStringLiteral("On log-log axes")));
        // `full` as measured here: time as n², memory as n^0.88 (its kernel works in blocks).
        for (std::int64_t n : {256, 512, 1024, 2048}) {
            const double x = static_cast<double>(n);
            plot.addPoint(point(QStringLiteral("full"), n, 1e-9 * x * x, static_cast<std::uint64_t>(4096 * std::pow(x, 0.88))));
            plot.addPoint(point(QStringLiteral("longformer"), n, 1e-7 * x, static_cast<std::uint64_t>(64 * x)));
        }
        const QString note = plot.slopeNote();
        QVERIFY2(note.contains(QStringLiteral("full: time slope 2.00, memory slope 0.88. It computes every score")), qPrintable(note));
        QVERIFY(note.contains(QStringLiteral("never holds the n × n matrix")));
        QVERIFY(note.contains(QStringLiteral("longformer: time slope 1.00, memory slope 1.00.\n")) ||
                note.endsWith(QStringLiteral("longformer: time slope 1.00, memory slope 1.00.")));
        QVERIFY(!note.section(QStringLiteral("longformer:"), 1).contains(QStringLiteral("every score")));
        // The value axes never print more labels than their height holds.
        plot.resize(600, 200);
        plot.show();
        QTRY_VERIFY(plot.isVisible());
        QCoreApplication::processEvents();
        auto* ticker = dynamic_cast<QCPAxisTickerText*>(plot.timePlot()->yAxis->ticker().data());
        QVERIFY(ticker);
        const double line = QFontMetricsF(plot.timePlot()->yAxis->tickLabelFont()).height();
        QVERIFY2(ticker->ticks().size() * line <= plot.timePlot()->axisRect()->height() + line,
                 qPrintable(QString::number(ticker->ticks().size())));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestCostView)
#include "test_cost_view.moc"
