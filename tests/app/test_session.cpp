// Sessions and habits: a session round-trips into a fresh window, newer and damaged sessions are
// refused with the typed text kept, the recent-files list keeps its cap and drops missing files,
// and drops are dispatched on content (session, text, binary).
#include "support/qt_test_support.h"

#include "gui/settings/app_settings.h"
#include "gui/panels/compare_variants_editor.h"
#include "gui/engine/engine_runner.h"
#include "gui/export/export_controller.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/panels/run_settings_panel.h"
#include "gui/settings/recent_files.h"
#include "gui/settings/session.h"

#include "views/heatmap/head_heatmap.h"
#include "views/data/inspection_state.h"
#include "views/mask/mask_view.h"
#include "views/widgets/param_form.h"

#include <QAbstractButton>
#include <QAction>
#include <QComboBox>
#include <QDropEvent>
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <cmath>

using attnscope::app::AppSettings;
using attnscope::app::EngineRunner;
using attnscope::app::FileKind;
using attnscope::app::LocalEngineBackend;
using attnscope::app::MainWindow;
using attnscope::app::RecentFiles;
using attnscope::app::Session;
using attnscope::app::SessionState;

namespace {

constexpr int kRunTimeoutMs = 60000;

/// A window with the real engine, no dialogs, no run on start; waits until the variants are known.
struct Window {
    EngineRunner runner{std::make_unique<LocalEngineBackend>()};
    std::unique_ptr<MainWindow> window;
    explicit Window(const QString& text = QStringLiteral("typed by the user, not saved anywhere"), bool dialogs = false) {
        MainWindow::Options options;
        options.showErrorDialogs = dialogs;
        options.runOnStart = false;
        options.initialText = text;
        window = std::make_unique<MainWindow>(&runner, AppSettings{}, options);
        window->resize(1200, 800);
        window->show();
    }
    bool ready() { return QTest::qWaitFor([&] { return window->inputs()->variantCombo()->count() > 0; }, kRunTimeoutMs); }
};

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    QCOMPARE(file.write(bytes), bytes.size());
}

/// Sends a drop of `mime` onto the window, as a drag from a file manager would.
void drop(QWidget* target, QMimeData* mime) {
    const QPointF at(target->width() / 2.0, target->height() / 2.0);
    QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(target, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent dropEvent(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(target, &dropEvent);
}

}  // namespace

class TestSession : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A file in another encoding (Latin-1) is offered with replacement characters; a binary file
    // (a picture, a program) is only refused: its "text" would be noise.
    void onlyTextInAnotherEncodingIsOfferedWithReplacementCharacters() {
        QTemporaryDir dir;
        const QString latin1 = dir.filePath(QStringLiteral("latin1.txt")), program = dir.filePath(QStringLiteral("program.bin"));
        writeFile(latin1, QByteArray("caf\xe9 au lait, cr\xe8me br\xfbl\xe9" "e"));
        QByteArray binary("\x7f" "ELF\x02\x01\x01", 7);  // a program's first bytes, then its tables
        for (int i = 0; i < 200; ++i) binary += static_cast<char>(i % 7 == 0 ? 0 : i);
        writeFile(program, binary);
        Window w(QStringLiteral("typed"), true);
        QVERIFY(w.ready());
        const auto offered = [&] {
            for (QMessageBox* box : w.window->findChildren<QMessageBox*>())
                for (QAbstractButton* button : box->buttons())
                    if (button->text() == QStringLiteral("Open with Replacement Characters")) return true;
            return false;
        };
        QVERIFY(!w.window->openPath(program).isEmpty());
        QVERIFY(!offered());
        QVERIFY(!w.window->findChildren<QMessageBox*>().isEmpty());  // refused, saying why
        qDeleteAll(w.window->findChildren<QMessageBox*>());
        QVERIFY(!w.window->openPath(latin1).isEmpty());
        QVERIFY(offered());
        qDeleteAll(w.window->findChildren<QMessageBox*>());
        QCOMPARE(w.window->inputs()->text()->toPlainText(), QStringLiteral("typed"));
    }

    void sessionRoundTripsIntoAFreshWindow() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("study.attnscope.json"));
        SessionState saved;
        {
            Window a(QStringLiteral("The cat sat on the mat because it was tired and the mat was warm."));
            QVERIFY(a.ready());
            MainWindow& w = *a.window;
            w.inputs()->variantCombo()->setCurrentIndex(w.inputs()->variantCombo()->findData(QStringLiteral("longformer")));
            w.inputs()->paramForm()->setValues({{"window", std::int64_t{3}}});
            w.inputs()->compareEditor()->combo(0)->setCurrentIndex(w.inputs()->compareEditor()->combo(0)->findData(QStringLiteral("bigbird")));
            QVERIFY(w.inputs()->compareEditor()->addRow(QStringLiteral("topk")));
            // The heads spin box: the unnamed one with range [1, 64] (schema editors carry their names).
            QSpinBox* heads = nullptr;
            for (QSpinBox* spin : w.findChildren<QSpinBox*>())
                if (spin->objectName().isEmpty() && spin->minimum() == 1 && spin->maximum() == 64) heads = spin;
            QVERIFY(heads);
            heads->setValue(3);
            w.views()->heatmap()->setOptions({QStringLiteral("magma"), attnscope::views::ColorScale::Log, attnscope::views::PoolMode::Mean});
            w.views()->maskView()->setShowWeights(true);
            w.showView(MainWindow::View::Mask);
            QVERIFY(w.runNow() != 0);
            QTRY_VERIFY_WITH_TIMEOUT(w.lastResult() != nullptr, kRunTimeoutMs);
            w.views()->state()->setHead(2);
            w.views()->maskView()->showQuery(4);
            saved = w.captureSession();
            QCOMPARE(saved.variantId, QStringLiteral("longformer"));
            QCOMPARE(saved.params.value(QStringLiteral("window")).toInt(), 3);
            QCOMPARE(saved.compare.size(), 2);
            QCOMPARE(saved.compare.front().id, QStringLiteral("bigbird"));
            QCOMPARE(saved.compare.back().id, QStringLiteral("topk"));
            QCOMPARE(saved.heads, 3);
            QCOMPARE(saved.view, QStringLiteral("mask"));
            QCOMPARE(saved.head, 2);
            QCOMPARE(saved.query, 4);
            QVERIFY2(w.saveSessionTo(path).isEmpty(), qPrintable(w.statusText()));
            QCOMPARE(w.sessionPath(), QFileInfo(path).absoluteFilePath());
        }
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(json.value(QStringLiteral("attnscopeSession")).toInt(), SessionState::kVersion);

        Window b;
        QVERIFY(b.ready());
        MainWindow& w = *b.window;
        QVERIFY(w.captureSession() != saved);
        QVERIFY2(w.openPath(path).isEmpty(), qPrintable(w.statusText()));
        QTRY_VERIFY_WITH_TIMEOUT(w.lastResult() != nullptr && w.views()->maskView()->panelQuery() == 4, kRunTimeoutMs);
        QCOMPARE(w.captureSession(), saved);
        QCOMPARE(w.inputs()->compareEditor()->rowCount(), 2);
        // The state is live, not only in the form: the run used it.
        const auto& result = *w.lastResult();
        QCOMPARE(result.heads, 3);
        QCOMPARE(result.results[0].variantId, std::string("longformer"));
        QCOMPARE(std::get<std::int64_t>(result.results[0].params.at("window")), std::int64_t{3});
        QCOMPARE(w.views()->maskView()->shownHead(), 2);
        QCOMPARE(w.currentView(), MainWindow::View::Mask);
        QCOMPARE(w.views()->heatmap()->options().colormap, QStringLiteral("magma"));
        QVERIFY(w.windowTitle().contains(QStringLiteral("study.attnscope.json")));
        QCOMPARE(w.recentFiles().value(0), QFileInfo(path).absoluteFilePath());
    }

    void newerAndDamagedSessionsAreRefusedAndTheTextIsKept_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("message");
        SessionState state;
        state.text = QStringLiteral("from the file");
        state.variantId = QStringLiteral("full");
        const QJsonObject root = QJsonDocument::fromJson(state.toJson()).object();
        const auto edited = [&](const QString& section, const QString& key, const QJsonValue& value) {
            QJsonObject copy = root;
            if (section.isEmpty()) {
                copy.insert(key, value);
            } else {
                QJsonObject inner = copy.value(section).toObject();
                inner.insert(key, value);
                copy.insert(section, inner);
            }
            return QJsonDocument(copy).toJson();
        };
        QTest::newRow("newer") << edited({}, QStringLiteral("attnscopeSession"), 2)
                               << QStringLiteral("was saved by a newer AttnScope (session format 2; this version reads format 1)");
        // (a format number too large for an integer: found by fuzz_session, once undefined behaviour)
        QTest::newRow("newer, huge") << edited({}, QStringLiteral("attnscopeSession"), 1.3333e76)
                                     << QStringLiteral("was saved by a newer AttnScope (session format 1.3333e+76; this version reads format 1)");
        QTest::newRow("truncated") << state.toJson().left(60) << QStringLiteral("the session file is damaged (");
        QTest::newRow("wrong type") << edited(QStringLiteral("projection"), QStringLiteral("heads"), QStringLiteral("four"))
                                    << QStringLiteral("projection.heads should be an integer in [1, 64]");
        QTest::newRow("unknown variant") << edited(QStringLiteral("variant"), QStringLiteral("id"), QStringLiteral("flash"))
                                         << QStringLiteral("uses the variant \"flash\", which this AttnScope does not have");
        QTest::newRow("picture without a path")
            << edited(QStringLiteral("image"), QStringLiteral("path"), QString()) << QStringLiteral("image.path is empty");
        QTest::newRow("bad parameter")
            << edited(QStringLiteral("variant"), QStringLiteral("params"), QJsonObject{{QStringLiteral("causal"), 7}})
            << QStringLiteral("variant.params.causal: expected true or false");
    }

    void newerAndDamagedSessionsAreRefusedAndTheTextIsKept() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, message);
        QVERIFY(bytes.contains("attnscopeSession"));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("s.json"));
        writeFile(path, bytes);
        Window w;
        QVERIFY(w.ready());
        const QString typed = w.window->inputs()->text()->toPlainText();
        const SessionState before = w.window->captureSession();
        const QString error = w.window->openPath(path);
        QVERIFY2(error.contains(message), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("Nothing was changed")), qPrintable(error));
        QCOMPARE(w.window->statusText(), error);
        QCOMPARE(w.window->inputs()->text()->toPlainText(), typed);
        QCOMPARE(w.window->captureSession(), before);
        QVERIFY(w.window->sessionPath().isEmpty());
        QVERIFY(w.window->recentFiles().isEmpty() || w.window->recentFiles().front() != QFileInfo(path).absoluteFilePath());
    }

    void recentFilesKeepTheCapAndDropMissingFiles() {
        QTemporaryDir dir;
        QStringList created;
        for (int i = 0; i < RecentFiles::kCapacity + 3; ++i) {
            const QString path = dir.filePath(QStringLiteral("f%1.txt").arg(i));
            writeFile(path, "x");
            created << path;
        }
        RecentFiles recent;
        for (const QString& path : created) recent.add(path);
        QCOMPARE(recent.paths().size(), RecentFiles::kCapacity);
        QCOMPARE(recent.paths().front(), created.back());  // most recent first
        QCOMPARE(recent.paths().back(), created.at(3));    // the three oldest fell off
        recent.add(created.at(5));                          // re-opening moves it up, no duplicate
        QCOMPARE(recent.paths().front(), created.at(5));
        QCOMPARE(recent.paths().count(created.at(5)), 1);
        QCOMPARE(recent.paths().size(), RecentFiles::kCapacity);

        QVERIFY(QFile::remove(created.at(5)));
        QVERIFY(QFile::remove(created.at(12)));
        QCOMPARE(recent.pruneMissing(), 2);
        QCOMPARE(recent.paths().size(), RecentFiles::kCapacity - 2);
        QVERIFY(!recent.paths().contains(created.at(5)));

        // Stored through AppSettings and restored in order, the cap applied to a longer stored list.
        QSettings store(dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
        AppSettings::saveRecentFiles(store, created);
        const RecentFiles restored(AppSettings::load(store).recentFiles);
        QCOMPARE(restored.paths(), created.mid(0, RecentFiles::kCapacity));

        // The window's menu drops a vanished file and "Clear" empties it.
        Window w;
        QVERIFY(w.ready());
        QVERIFY(w.window->openPath(created.at(0)).isEmpty());
        QVERIFY(w.window->openPath(created.at(1)).isEmpty());
        QCOMPARE(w.window->recentFiles(), (QStringList{created.at(1), created.at(0)}));
        QVERIFY(QFile::remove(created.at(0)));
        Q_EMIT w.window->recentMenu()->aboutToShow();
        QCOMPARE(w.window->recentFiles(), QStringList{created.at(1)});
        QStringList entries;
        for (QAction* action : w.window->recentMenu()->actions())
            if (!action->data().toString().isEmpty()) entries << action->data().toString();
        QCOMPARE(entries, QStringList{created.at(1)});
        auto* clear = w.window->recentMenu()->findChild<QAction*>(QStringLiteral("clearRecentFiles"));
        if (!clear)
            for (QAction* action : w.window->recentMenu()->actions())
                if (action->objectName() == QLatin1String("clearRecentFiles")) clear = action;
        QVERIFY(clear);
        clear->trigger();
        QVERIFY(w.window->recentFiles().isEmpty());
    }

    void dropsAreDispatchedOnContent() {
        QTemporaryDir dir;
        SessionState state;
        state.text = QStringLiteral("text from a dropped session");
        state.variantId = QStringLiteral("longformer");
        state.seed = 11;
        const QString sessionPath = dir.filePath(QStringLiteral("named-like-text.txt"));  // content decides
        writeFile(sessionPath, state.toJson());
        const QString textPath = dir.filePath(QStringLiteral("notes.json"));
        writeFile(textPath, "{\"just\": \"some JSON\", \"not\": \"a session\"}");
        const QString binaryPath = dir.filePath(QStringLiteral("weights.txt"));
        // (binary that no image reader takes: a PNG's start goes to the image opener, test_image_input.cpp)
        writeFile(binaryPath, QByteArray("\x89WTS\r\n\x1a\n\0\0\0\rdata", 16));

        QCOMPARE(Session::classify(state.toJson()), FileKind::Session);
        QCOMPARE(Session::classify("plain words"), FileKind::Text);
        QCOMPARE(Session::classify(QByteArray("caf\xc3(")), FileKind::Binary);

        Window w;
        QVERIFY(w.ready());
        MainWindow& window = *w.window;
        const QString typed = window.inputs()->text()->toPlainText();

        auto* binary = new QMimeData;
        binary->setUrls({QUrl::fromLocalFile(binaryPath)});
        drop(&window, binary);
        QVERIFY2(window.statusText().contains(QStringLiteral("weights.txt is neither text nor an AttnScope session")),
                 qPrintable(window.statusText()));
        // where it stops being text, as the command line says it
        QVERIFY2(window.statusText().contains(QStringLiteral("invalid UTF-8 at byte offset 0 (0x89)")), qPrintable(window.statusText()));
        QCOMPARE(window.inputs()->text()->toPlainText(), typed);
        delete binary;

        // A link that is no local file, dropped on the editor: refused, and not pasted as text.
        auto* remote = new QMimeData;
        remote->setUrls({QUrl(QStringLiteral("https://example.org/notes.txt"))});
        drop(window.inputs()->text()->viewport(), remote);
        QCOMPARE(window.inputs()->text()->toPlainText(), typed);
        delete remote;


        auto* session = new QMimeData;
        session->setUrls({QUrl::fromLocalFile(sessionPath)});
        drop(window.inputs()->text()->viewport(), session);  // onto the editor: opened, not inserted as a URL
        QCOMPARE(window.inputs()->text()->toPlainText(), state.text);
        QCOMPARE(window.inputs()->variantCombo()->currentData().toString(), QStringLiteral("longformer"));
        QCOMPARE(window.captureSession().seed, 11);
        QCOMPARE(window.sessionPath(), QFileInfo(sessionPath).absoluteFilePath());
        delete session;

        auto* text = new QMimeData;
        text->setUrls({QUrl::fromLocalFile(textPath)});
        drop(&window, text);
        QCOMPARE(window.inputs()->text()->toPlainText(), QStringLiteral("{\"just\": \"some JSON\", \"not\": \"a session\"}"));
        QVERIFY(window.windowTitle().contains(QStringLiteral("notes.json")));
        delete text;

        auto* plain = new QMimeData;
        plain->setText(QStringLiteral("dragged words"));
        drop(&window, plain);
        QCOMPARE(window.inputs()->text()->toPlainText(), QStringLiteral("dragged words"));
        delete plain;
        QCOMPARE(window.recentFiles(), (QStringList{QFileInfo(textPath).absoluteFilePath(), QFileInfo(sessionPath).absoluteFilePath()}));

        // the offered repair: every byte that is not UTF-8 (and NUL) becomes U+FFFD
        const QString brokenPath = dir.filePath(QStringLiteral("latin1.txt"));
        writeFile(brokenPath, QByteArray("caf\xe9 au lait\0!", 14));
        QVERIFY(!window.openPath(brokenPath).isEmpty());
        QVERIFY2(window.statusText().contains(QStringLiteral("invalid UTF-8 at byte offset 3 (0xe9)")), qPrintable(window.statusText()));
        QCOMPARE(window.inputs()->text()->toPlainText(), QStringLiteral("dragged words"));  // unchanged
        QVERIFY(window.openTextWithReplacement(brokenPath).isEmpty());
        QCOMPARE(window.inputs()->text()->toPlainText(), QStringLiteral("caf\uFFFD au lait\uFFFD!"));
        QVERIFY2(window.statusText().contains(QStringLiteral("2 replacement character")), qPrintable(window.statusText()));
        QVERIFY(window.windowTitle().contains(QStringLiteral("latin1.txt (repaired)")));
        // once the text is replaced the title no longer names the file alone
        const QString opened = window.inputs()->text()->toPlainText();
        window.inputs()->text()->setPlainText(QStringLiteral("something else entirely"));
        QVERIFY2(window.windowTitle().endsWith(QStringLiteral("(repaired) (edited)")), qPrintable(window.windowTitle()));
        window.inputs()->text()->setPlainText(opened);
        QVERIFY2(!window.windowTitle().contains(QStringLiteral("(edited)")), qPrintable(window.windowTitle()));
    }

    void themeSwitchRestylesPlotsAndKeepsFiguresLight() {
        Window w;
        QVERIFY(w.ready());
        MainWindow& window = *w.window;
        window.setTheme(QStringLiteral("dark"));
        QCOMPARE(window.themeName(), QStringLiteral("dark"));
        QCOMPARE(window.settings().theme, QStringLiteral("dark"));
        QVERIFY(window.views()->heatmap()->palette().color(QPalette::Base).lightness() < 128);
        window.setTheme(QStringLiteral("light"));
        QVERIFY(window.views()->heatmap()->palette().color(QPalette::Base).lightness() > 128);
        QCOMPARE(window.settings().theme, QStringLiteral("light"));
    }

    void figuresStayBlackOnWhiteInTheDarkTheme() {
        Window w(QStringLiteral("The cat sat on the mat because it was tired."));
        QVERIFY(w.ready());
        MainWindow& window = *w.window;
        QVERIFY(window.runNow() != 0);
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, kRunTimeoutMs);
        QTest::qWait(200);  // the views' queued layouts and replots, so both figures show the same state
        QTemporaryDir dir;
        dir.setAutoRemove(!qEnvironmentVariableIsSet("ATTNSCOPE_KEEP_EXPORTS"));  // to look at the figures
        const QString lightPath = dir.filePath(QStringLiteral("light.png"));
        const QString darkPath = dir.filePath(QStringLiteral("dark.png"));
        QVERIFY(window.exportController()->exportFigureTo(lightPath, 96).ok());
        window.setTheme(QStringLiteral("dark"));
        QVERIFY(window.exportController()->exportFigureTo(darkPath, 96).ok());
        // The window is dark again after the export.
        QVERIFY(window.views()->heatmap()->palette().color(QPalette::Base).lightness() < 128);
        window.setTheme(QStringLiteral("light"));
        const QImage light(lightPath), dark(darkPath);
        QCOMPARE(dark.size(), light.size());
        // Dark plot backgrounds would turn most of the figure dark: count pixels that differ.
        qint64 differing = 0, darkPixels = 0;
        for (int y = 0; y < light.height(); ++y) {
            for (int x = 0; x < light.width(); ++x) {
                const QColor a = light.pixelColor(x, y), b = dark.pixelColor(x, y);
                differing += std::abs(a.lightness() - b.lightness()) > 16;
                darkPixels += b.lightness() < 64;
            }
        }
        const double total = static_cast<double>(light.width()) * light.height();
        QVERIFY2(differing < total * 0.01,
                 qPrintable(QStringLiteral("%1 of %2 pixels differ (%3)").arg(differing).arg(total).arg(dir.path())));
        QVERIFY2(darkPixels < total * 0.5, qPrintable(QStringLiteral("%1 dark pixels").arg(darkPixels)));
    }

    void shortcutsAreOnTheActions() {
        Window w;
        QStringList shortcuts;
        for (QAction* action : w.window->findChildren<QAction*>())
            for (const QKeySequence& key : action->shortcuts()) shortcuts << key.toString();
        for (const char* key : {"Ctrl+O", "Ctrl+S", "Ctrl+Shift+S", "Ctrl+R", "F5", "Esc", "PgDown", "PgUp", "Ctrl+Right",
                                "Ctrl+Left", "Ctrl+E"})
            QVERIFY2(shortcuts.contains(QLatin1String(key)), key);
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestSession)
#include "test_session.moc"
