// The first-start card: shown on a first start, gone for good once closed, and the way into the
// guided tour.
#include "support/qt_test_support.h"

#include "gui/settings/app_settings.h"
#include "gui/engine/engine_runner.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/window/tour_panel.h"
#include "gui/window/view_tabs.h"
#include "gui/window/welcome_card.h"

#include <QPushButton>
#include <QTest>

using attnscope::app::AppSettings;
using attnscope::app::MainWindow;

class TestWelcomeCard : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aFirstStartShowsTheCardUntilItIsClosed() {
        attnscope::app::EngineRunner runner(std::make_unique<attnscope::app::LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.showWelcome = true;
        MainWindow window(&runner, AppSettings{}, options);
        window.show();
        attnscope::app::WelcomeCard* card = window.views()->welcomeCard();
        QVERIFY(card->isVisible());
        QVERIFY2(card->text().contains(QStringLiteral("random")), qPrintable(card->text()));  // no model open
        QVERIFY(!window.settings().welcomeSeen);
        QTest::mouseClick(card->closeButton(), Qt::LeftButton);
        QVERIFY(!card->isVisible());
        QVERIFY(window.settings().welcomeSeen);

        // The next start, with the settings the first one saved: no card.
        MainWindow again(&runner, window.settings(), options);
        again.show();
        QVERIFY(!again.views()->welcomeCard()->isVisible());
    }

    void theCardLeadsIntoTheGuidedTour() {
        attnscope::app::EngineRunner runner(std::make_unique<attnscope::app::LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.showWelcome = true;
        MainWindow window(&runner, AppSettings{}, options);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, 60000);
        QTest::mouseClick(window.views()->welcomeCard()->tourButton(), Qt::LeftButton);
        QVERIFY(!window.views()->welcomeCard()->isVisible());
        QVERIFY(window.tourPanel()->isVisible());
        QVERIFY(window.settings().welcomeSeen);
        window.tourPanel()->close();
    }

    void headlessAndScreenshotWindowsShowNoCard() {
        attnscope::app::EngineRunner runner(std::make_unique<attnscope::app::LocalEngineBackend>());
        MainWindow::Options options;  // showWelcome is off unless the app asks for it
        options.showErrorDialogs = false;
        options.runOnStart = false;
        MainWindow window(&runner, AppSettings{}, options);
        window.show();
        QVERIFY(!window.views()->welcomeCard()->isVisible());
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestWelcomeCard)
#include "test_welcome_card.moc"
