#include "support/qt_test_support.h"

#include "gui/settings/app_settings.h"

#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

using attnscope::app::AppSettings;

class TestAppSettings : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void roundTrip() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QSettings store(dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
        AppSettings s;
        s.tokenizer = QStringLiteral("chars");
        s.variantId = QStringLiteral("longformer");
        s.heads = 8;
        s.headDim = 16;
        s.seed = 42;
        s.windowGeometry = QByteArray("geometry");
        s.windowState = QByteArray("state");
        s.heatmapColormap = QStringLiteral("cividis");
        s.heatmapScale = QStringLiteral("log");
        s.heatmapPooling = QStringLiteral("mean");
        s.exportDpi = 600;
        s.exportFolder = QStringLiteral("/tmp/figures");
        s.theme = QStringLiteral("dark");
        s.recentFiles = QStringList{QStringLiteral("/data/a.attnscope.json"), QStringLiteral("/data/b.txt")};
        s.welcomeSeen = true;  // (the default is false: a first start shows the card)
        s.save(store);
        store.sync();
        QCOMPARE(AppSettings::load(store), s);
        QVERIFY(AppSettings::load(store).welcomeSeen);
    }

    void invalidValuesKeepDefaults() {
        QTemporaryDir dir;
        QSettings store(dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
        store.setValue(QStringLiteral("run/tokenizer"), QStringLiteral("sentencepiece"));
        store.setValue(QStringLiteral("run/heads"), 0);
        store.setValue(QStringLiteral("run/headDim"), QStringLiteral("many"));
        store.setValue(QStringLiteral("window/state"), QByteArray("old"));
        store.setValue(QStringLiteral("heatmap/colormap"), QStringLiteral("jet"));
        store.setValue(QStringLiteral("heatmap/scale"), QStringLiteral("sqrt"));
        store.setValue(QStringLiteral("export/dpi"), 5);
        store.setValue(QStringLiteral("window/theme"), QStringLiteral("sepia"));
        store.setValue(QStringLiteral("window/stateVersion"), AppSettings::kWindowStateVersion - 1);
        const AppSettings loaded = AppSettings::load(store);
        const AppSettings defaults;
        QCOMPARE(loaded.tokenizer, defaults.tokenizer);
        QCOMPARE(loaded.heads, defaults.heads);
        QCOMPARE(loaded.headDim, defaults.headDim);
        QVERIFY(loaded.windowState.isEmpty());  // saved by another layout version
        QCOMPARE(loaded.heatmapColormap, defaults.heatmapColormap);
        QCOMPARE(loaded.heatmapScale, defaults.heatmapScale);
        QCOMPARE(loaded.exportDpi, defaults.exportDpi);
        QCOMPARE(loaded.theme, QStringLiteral("light"));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestAppSettings)
#include "test_app_settings.moc"
