#include "support/qt_test_support.h"
#include "views/colormap.h"

#include <QFile>
#include <QTest>

using attnscope::views::Colormap;

class TestColormap : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void viridisHasPublishedEndpoints() {
        const Colormap& lut = Colormap::viridis();
        QCOMPARE(lut.name(), QStringLiteral("viridis"));
        QCOMPARE(lut.size(), 256);
        // Published viridis (matplotlib / d3-scale-chromatic): #440154 … #21918c … #fde725.
        QCOMPARE(lut.color(0), qRgb(0x44, 0x01, 0x54));
        QCOMPARE(lut.color(128), qRgb(0x21, 0x91, 0x8c));
        QCOMPARE(lut.color(255), qRgb(0xfd, 0xe7, 0x25));
        QCOMPARE(lut.map(0.0), lut.color(0));
        QCOMPARE(lut.map(1.0), lut.color(255));
        QCOMPARE(lut.map(2.0), lut.color(255));
        QCOMPARE(lut.map(std::nan("")), lut.color(0));
    }

    void resourceMatchesTheDataFile() {
        QFile file(QStringLiteral(ATTNSCOPE_VIRIDIS_CSV));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const auto fromFile = Colormap::fromCsv(QStringLiteral("viridis"), file.readAll());
        QVERIFY(fromFile.has_value());
        QCOMPARE(fromFile->colors(), Colormap::viridis().colors());
    }

    void malformedCsvIsRejected() {
        QString error;
        QVERIFY(!Colormap::fromCsv(QStringLiteral("bad"), "1,2,3\n", &error));
        QVERIFY2(error.contains(QStringLiteral("1 colours")), qPrintable(error));
        QVERIFY(!Colormap::fromCsv(QStringLiteral("bad"), "1,2\n", &error));
        QVERIFY(!Colormap::fromCsv(QStringLiteral("bad"), "1,2,300\n", &error));
        QVERIFY(!Colormap::load(QStringLiteral(":/colormaps/missing.csv"), &error));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestColormap)
#include "test_colormap.moc"
