#include "gui/startup_options.h"

#include "common/image_file.h"
#include "common/variant_flags.h"
#include "gui/settings/text_autosave.h"
#include "gui/window/view_tabs.h"

#include "views/help/guided_tour.h"

#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QSettings>
#include <QStringDecoder>

#include <cstdio>
#include <cstring>

namespace attnscope::app {

void printStartupError(const QString& message) { std::fprintf(stderr, "attnscope: %s\n", qPrintable(message)); }

bool wantsScreenshot(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--screenshot") == 0 || std::strncmp(argv[i], "--screenshot=", 13) == 0) return true;
    return false;
}

namespace {

void printError(const QString& message) { printStartupError(message); }

// The named text file; exit status 2 with the reason when it cannot be read as UTF-8.
int readTextFile(const QString& path, MainWindow::Options& options) {
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
    return 0;
}

// --view: 0 and the view, or 2 with the reason.
int readView(const QString& view, MainWindow::Options& options) {
    // (atlas analyses --model once it opens)
    if (view.isEmpty()) return 0;
    const QStringList& names = attnscope::app::viewTabNames();
    if (names.contains(view)) {
        options.initialView = attnscope::app::viewTabNamed(view);
        return 0;
    }
    printError(QStringLiteral("--view %1: expected %2 or %3").arg(view, names.mid(0, names.size() - 1).join(QStringLiteral(", ")), names.last()));
    return 2;
}

// 0, or 2 after naming a --variant, --param, --compare or --compare-param the catalog refuses.
int checkVariantFlags(const QCommandLineParser& parser, const StartupFlags& f, const Startup& s) {
    attnscope::app::VariantFlags flags;
    flags.variant = parser.isSet(f.variant) ? parser.value(f.variant).toStdString() : std::string();
    flags.fallback = s.settings.variantId.toStdString();
    for (const QString& p : parser.values(f.param)) flags.params.push_back(p.toStdString());
    flags.compare = parser.value(f.compare).toStdString();
    for (const QString& p : parser.values(f.compareParam)) flags.compareParams.push_back(p.toStdString());
    const std::string problem = attnscope::app::checkVariantFlags(flags);
    if (problem.empty()) return 0;
    printError(QString::fromStdString(problem));
    return 2;
}

}  // namespace

int readStartup(const QCommandLineParser& parser, const StartupFlags& f, Startup& s) {
    MainWindow::Options& options = s.options;
    if (parser.isSet(f.textFile))
        if (const int rc = readTextFile(parser.value(f.textFile), options)) return rc;
    s.screenshotPath = parser.value(f.screenshot);
    if (parser.isSet(f.windowSize)) {
        const QStringList parts = parser.value(f.windowSize).split(QLatin1Char('x'));
        bool okWidth = false, okHeight = false;
        const int width = parts.size() == 2 ? parts[0].toInt(&okWidth) : 0;
        const int height = parts.size() == 2 ? parts[1].toInt(&okHeight) : 0;
        if (!okWidth || !okHeight || width < 320 || height < 240 || width > 8192 || height > 8192) {
            printError(QStringLiteral("--window-size '%1': expected WIDTHxHEIGHT, e.g. 1366x768 (320x240 to 8192x8192)")
                           .arg(parser.value(f.windowSize)));
            return 2;
        }
        s.windowSize = QSize(width, height);
    }
    if (!s.screenshot()) {
        // What the user typed last time comes back after a crash or an accidental close, unless
        // a file was named on the command line.
        options.autosavePath = TextAutosave::defaultPath();
        if (!parser.isSet(f.textFile))
            if (const auto restored = TextAutosave::load(options.autosavePath); restored && !restored->isEmpty()) {
                options.initialText = *restored;
                options.textSource = QObject::tr("restored text");
            }
        // Screenshots use the defaults, so they do not depend on the machine's saved settings.
        QSettings stored;
        s.settings = AppSettings::load(stored);
    }
    if (parser.isSet(f.variant)) s.settings.variantId = parser.value(f.variant);
    if (const int rc = readView(parser.value(f.view), options)) return rc;
    if (parser.isSet(f.image)) {
        auto picture = attnscope::app::readImageFile(parser.value(f.image));
        if (!picture) {
            printError(QString::fromStdString(picture.error().message));
            return 2;
        }
        options.initialImage = picture.value();
        options.initialImageName = QFileInfo(parser.value(f.image)).fileName();
        options.initialImagePath = QFileInfo(parser.value(f.image)).absoluteFilePath();
        if (!parser.isSet(f.view)) options.initialView = attnscope::app::ViewTab::Image;
    }
    options.compareVariant = parser.value(f.compare);
    options.params = parser.values(f.param);
    options.compareParams = parser.values(f.compareParam);
    if (const int rc = checkVariantFlags(parser, f, s)) return rc;
    bool headOk = true, queryOk = true, keyOk = true, layerOk = true;
    s.key = parser.isSet(f.key) ? parser.value(f.key).toInt(&keyOk) : -1;
    s.head = parser.isSet(f.head) ? parser.value(f.head).toInt(&headOk) : 0;
    s.query = parser.isSet(f.query) ? parser.value(f.query).toInt(&queryOk) : -1;
    if (!headOk || !queryOk || !keyOk || s.head < 0) {
        printError(QStringLiteral("--head, --query and --key take non-negative integers"));
        return 2;
    }
    options.showErrorDialogs = !s.screenshot();
    options.persistRecentFiles = !s.screenshot();  // screenshots leave the user's settings alone
    options.showWelcome = !s.screenshot() || parser.isSet(f.welcome);
    s.sessionPath = parser.value(f.session);
    s.corpusPath = parser.value(f.corpus);
    if (!s.sessionPath.isEmpty()) options.runOnStart = false;  // the session runs its own state
    options.modelFolder = parser.value(f.model);
    options.modelLayer = parser.isSet(f.layer) ? parser.value(f.layer).toInt(&layerOk) : 0;
    options.modelKeepsVariant = parser.isSet(f.variant);
    if (!layerOk || options.modelLayer < 0 || (parser.isSet(f.layer) && options.modelFolder.isEmpty())) {
        printError(QStringLiteral("--layer takes a non-negative integer and needs --model DIR"));
        return 2;
    }
    if (s.screenshot() && options.initialView == MainWindow::View::Atlas && options.modelFolder.isEmpty()) {
        printError(QStringLiteral("--view atlas needs --model DIR: the atlas describes a model's heads"));
        return 2;
    }
    s.errorCurve = parser.isSet(f.errorCurve);
    s.receptiveField = parser.isSet(f.receptiveField);
    s.evalSpeed = parser.isSet(f.evalSpeed);
    s.scalingSizes = parser.value(f.scaling);
    if (parser.isSet(f.tour)) {
        bool ok = false;
        s.tourStep = parser.value(f.tour).toInt(&ok);
        if (!ok || s.tourStep < 1 || s.tourStep > static_cast<int>(attnscope::views::guidedTour().size())) {
            printError(QStringLiteral("--tour '%1': expected a step from 1 to %2")
                           .arg(parser.value(f.tour))
                           .arg(attnscope::views::guidedTour().size()));
            return 2;
        }
    }
    s.starReach = parser.isSet(f.starReach);
    s.helpPanel = parser.isSet(f.helpPanel);
    s.maskWeights = parser.isSet(f.maskWeights);
    if (parser.isSet(f.imageShow)) {
        using attnscope::views::OverlayKind;
        const QMap<QString, OverlayKind> kinds{{QStringLiteral("weights"), OverlayKind::Weights}, {QStringLiteral("mask"), OverlayKind::Mask},
                                               {QStringLiteral("groups"), OverlayKind::Groups},   {QStringLiteral("layers"), OverlayKind::Layers},
                                               {QStringLiteral("rollout"), OverlayKind::Rollout}, {QStringLiteral("flow"), OverlayKind::Flow},
                                               {QStringLiteral("dino"), OverlayKind::MassShare}};
        const QString name = parser.value(f.imageShow);
        if (!kinds.contains(name)) {
            printError(QStringLiteral("--image-show '%1': expected one of %2").arg(name, QStringList(kinds.keys()).join(QStringLiteral(", "))));
            return 2;
        }
        s.imageShow = kinds.value(name);
    }
    return 0;
}

}  // namespace attnscope::app
