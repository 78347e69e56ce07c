#include "support/qt_test_support.h"
#include "views/data/colormap.h"

#include <QFile>
#include <QTest>

#include <iterator>

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

    void builtinMapsHaveThePackagesValues() {
        // Entries 0, 128 and 255 as d3-scale-chromatic@3.1.1 computes them (sampled at i/255 by
        // scripts/colormap_from_d3.cjs; resources/colormaps/README.md). cividis is d3's polynomial
        // fit, so its ends differ slightly from matplotlib's #00204d / #ffea46.
        struct Expected {
            const char* name;
            QRgb first, middle, last;
        };
        const Expected expected[] = {
            {"viridis", qRgb(0x44, 0x01, 0x54), qRgb(0x21, 0x91, 0x8c), qRgb(0xfd, 0xe7, 0x25)},
            {"magma", qRgb(0x00, 0x00, 0x04), qRgb(0xb7, 0x37, 0x79), qRgb(0xfc, 0xfd, 0xbf)},
            {"cividis", qRgb(0x00, 0x20, 0x51), qRgb(0x80, 0x7c, 0x75), qRgb(0xfd, 0xea, 0x45)},
            // reversed RdBu: blue for the most negative value, red for the most positive
            {"rdbu", qRgb(0x05, 0x30, 0x61), qRgb(0xf2, 0xef, 0xed), qRgb(0x67, 0x00, 0x1f)},
        };
        QCOMPARE(Colormap::builtinNames().size(), int(std::size(expected)));
        for (const Expected& e : expected) {
            const Colormap& lut = Colormap::builtin(QLatin1String(e.name));
            QCOMPARE(lut.name(), QLatin1String(e.name));
            QCOMPARE(lut.size(), Colormap::kSize);
            QCOMPARE(lut.color(0), e.first);
            QCOMPARE(lut.color(128), e.middle);
            QCOMPARE(lut.color(255), e.last);
        }
        QVERIFY(Colormap::isDiverging(QStringLiteral("rdbu")));
        QVERIFY(!Colormap::isDiverging(QStringLiteral("magma")));
        // The two halves of the diverging map are blue and red, the middle is near white.
        const QRgb mid = Colormap::builtin(QStringLiteral("rdbu")).map(0.5);
        QVERIFY(qRed(mid) > 230 && qGreen(mid) > 230 && qBlue(mid) > 230);
        QCOMPARE(Colormap::builtin(QStringLiteral("nope")).name(), QStringLiteral("grey"));
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
