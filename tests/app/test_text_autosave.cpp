// Autosave: typed text reaches the file after the delay and on window teardown, survives a
// "crash" (the process never gets to close the window), and comes back in a new window.

#include "support/qt_test_support.h"
#include "app/fake_backend.h"

#include "gui/settings/app_settings.h"
#include "gui/engine/engine_runner.h"
#include "gui/window/main_window.h"
#include "gui/panels/run_settings_panel.h"
#include "gui/settings/text_autosave.h"

#include <QFile>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using attnscope::app::AppSettings;
using attnscope::app::EngineRunner;
using attnscope::app::MainWindow;
using attnscope::app::TextAutosave;
using attnscope::testing::FakeBackend;

class TestTextAutosave : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void savesShortlyAfterTyping() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("sub/autosave.txt"));  // folder created on demand
        QPlainTextEdit edit;
        TextAutosave autosave(&edit, path, 20);
        QSignalSpy saved(&autosave, &TextAutosave::saved);
        edit.setPlainText(QStringLiteral("typed text, ünïcode ✓ 注意"));
        QVERIFY(autosave.dirty());
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 2000);
        QVERIFY(!autosave.dirty());
        QCOMPARE(TextAutosave::load(path).value_or(QString()), QStringLiteral("typed text, ünïcode ✓ 注意"));
    }

    void unsavedTextIsWrittenOnTeardown() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("autosave.txt"));
        QPlainTextEdit edit;
        {
            TextAutosave autosave(&edit, path, 60000);  // the timer never fires in this test
            edit.setPlainText(QStringLiteral("closed by accident"));
        }
        QCOMPARE(TextAutosave::load(path).value_or(QString()), QStringLiteral("closed by accident"));
        QVERIFY(!TextAutosave::load(dir.filePath(QStringLiteral("missing.txt"))).has_value());
    }

    void textComesBackAfterASimulatedCrash() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("autosave.txt"));
        const QString afterCrash = dir.filePath(QStringLiteral("after-crash.txt"));
        auto control = std::make_shared<FakeBackend::Control>();
        control->releaseAll = true;
        {
            EngineRunner runner(std::make_unique<FakeBackend>(control));
            MainWindow::Options options;
            options.showErrorDialogs = false;
            options.runOnStart = false;
            options.autosavePath = path;
            MainWindow window(&runner, AppSettings{}, options);
            auto* edit = window.inputs()->text();
            QVERIFY(edit);
            QSignalSpy saved(window.autosave(), &TextAutosave::saved);
            edit->setPlainText(QStringLiteral("my notes on head 3"));
            QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 5000);
            // The crash happens here: the process dies with the window open, so only what is on
            // disk at this moment survives. Keep exactly that, before any orderly teardown.
            QVERIFY(QFile::copy(path, afterCrash));
        }
        // The next start (main.cpp) restores the autosaved text into a new window.
        auto control2 = std::make_shared<FakeBackend::Control>();
        control2->releaseAll = true;
        EngineRunner runner(std::make_unique<FakeBackend>(control2));
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.autosavePath = afterCrash;
        options.initialText = TextAutosave::load(afterCrash).value_or(QString());
        MainWindow window(&runner, AppSettings{}, options);
        QCOMPARE(window.inputs()->text()->toPlainText(), QStringLiteral("my notes on head 3"));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestTextAutosave)
#include "test_text_autosave.moc"
