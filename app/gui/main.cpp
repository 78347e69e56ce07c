// attnscope: the desktop app. `--screenshot PATH` makes the README screenshots with the app itself.

#include "common/omp_wait_policy.h"
#include "gui/app_settings.h"
#include "gui/engine_runner.h"
#include "gui/local_engine_backend.h"
#include "gui/main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPixmap>
#include <QSettings>
#include <QStringDecoder>
#include <QTimer>

#include <cstdio>
#include <cstring>
#include <memory>

namespace {

constexpr int kScreenshotWidth = 1400;
constexpr int kScreenshotHeight = 900;
constexpr int kScreenshotTimeoutMs = 120000;
// After the result is shown: let queued replots and layouts run before grabbing.
constexpr int kScreenshotSettleMs = 300;

void printError(const QString& message) { std::fprintf(stderr, "attnscope: %s\n", qPrintable(message)); }

bool wantsScreenshot(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--screenshot") == 0 || std::strncmp(argv[i], "--screenshot=", 13) == 0) return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    attnscope::app::ensurePassiveOpenMpWait(argv);
    using attnscope::app::AppSettings;
    using attnscope::app::MainWindow;

    // Headless figure export must work without a display (DESIGN.md): --screenshot picks the
    // offscreen platform unless the user chose one.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && wantsScreenshot(argc, argv))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("AttnScope"));
    QApplication::setOrganizationName(QStringLiteral("AttnScope"));
    QApplication::setApplicationVersion(QStringLiteral(ATTNSCOPE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Attention visualiser: per-head heatmaps of attention variants."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"), QStringLiteral("Run the input once, save a PNG of the window to PATH and quit."),
        QStringLiteral("PATH"));
    const QCommandLineOption textFileOption(QStringLiteral("text-file"),
                                            QStringLiteral("Open this UTF-8 text file instead of the sample."),
                                            QStringLiteral("PATH"));
    const QCommandLineOption variantOption(QStringLiteral("variant"),
                                           QStringLiteral("Select this variant id (see attnscope-cli variants)."),
                                           QStringLiteral("ID"));
    parser.addOption(variantOption);
    parser.addOption(screenshotOption);
    parser.addOption(textFileOption);
    parser.process(app);

    MainWindow::Options options;
    if (parser.isSet(textFileOption)) {
        const QString path = parser.value(textFileOption);
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            printError(QStringLiteral("%1: %2").arg(path, file.errorString()));
            return 2;
        }
        QStringDecoder decoder(QStringDecoder::Utf8);
        options.initialText = decoder.decode(file.readAll());
        if (decoder.hasError()) {
            printError(QStringLiteral("%1: not valid UTF-8 text").arg(path));
            return 2;
        }
        options.textSource = QFileInfo(path).fileName();
    }

    const QString screenshotPath = parser.value(screenshotOption);
    const bool screenshot = !screenshotPath.isEmpty();
    // Screenshots use the defaults, so they do not depend on the machine's saved settings.
    AppSettings settings;
    if (!screenshot) {
        QSettings stored;
        settings = AppSettings::load(stored);
    }
    if (parser.isSet(variantOption)) settings.variantId = parser.value(variantOption);
    options.showErrorDialogs = !screenshot;

    attnscope::app::EngineRunner runner(std::make_unique<attnscope::app::LocalEngineBackend>());
    MainWindow window(&runner, settings, options);

    if (screenshot) {
        window.resize(kScreenshotWidth, kScreenshotHeight);
        QObject::connect(&window, &MainWindow::resultShown, &window, [&] {
            QTimer::singleShot(kScreenshotSettleMs, &window, [&] {
                const QImage image = window.grab().toImage();
                if (!image.save(screenshotPath, "PNG")) {
                    printError(QStringLiteral("cannot write %1").arg(screenshotPath));
                    QApplication::exit(1);
                    return;
                }
                QApplication::exit(0);
            });
        });
        QObject::connect(&window, &MainWindow::runFailed, &window, [](quint64, const QString& message, int) {
            printError(QStringLiteral("run failed: %1").arg(message));
            QApplication::exit(1);
        });
        QTimer::singleShot(kScreenshotTimeoutMs, &window, [] {
            printError(QStringLiteral("no result within %1 s").arg(kScreenshotTimeoutMs / 1000));
            QApplication::exit(3);
        });
    }

    window.show();
    const int rc = QApplication::exec();
    if (!screenshot) {
        QSettings stored;
        window.settings().save(stored);
    }
    return rc;
}
