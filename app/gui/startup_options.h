#pragma once
// The window's command line: its flags, what they start the window with (read with the saved
// settings and the autosaved text, except for screenshots), and the checks that refuse a bad flag
// before the window opens (exit status 2, the flag named).

#include "gui/settings/app_settings.h"
#include "gui/window/main_window.h"

#include "views/image/overlay_image.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QSize>
#include <QString>

#include <optional>

namespace attnscope::app {

/// A screenshot's window size when --window-size is not given.
constexpr int kScreenshotWidth = 1400;
constexpr int kScreenshotHeight = 900;

/// "attnscope: MESSAGE" on stderr.
void printStartupError(const QString& message);

/// Whether the command line asks for a screenshot (before QApplication exists: it picks the
/// offscreen platform).
bool wantsScreenshot(int argc, char** argv);

// The command line's options (besides --help and --version).
struct StartupFlags {
    QCommandLineOption screenshot{QStringLiteral("screenshot"),
                                  QStringLiteral("Run the input once, save a PNG of the window to PATH and quit."),
                                  QStringLiteral("PATH")};
    QCommandLineOption windowSize{QStringLiteral("window-size"),
                                  QStringLiteral("With --screenshot: the window's size (default 1400x900; e.g. 1366x768)."),
                                  QStringLiteral("WxH")};
    QCommandLineOption image{QStringLiteral("image"),
                             QStringLiteral("Open this image as the input (its pixels or patches are the tokens; docs/IMAGES.md)."),
                             QStringLiteral("PATH")};
    QCommandLineOption textFile{QStringLiteral("text-file"), QStringLiteral("Open this UTF-8 text file instead of the sample."),
                                QStringLiteral("PATH")};
    QCommandLineOption variant{QStringLiteral("variant"), QStringLiteral("Select this variant id (see attnscope-cli variants)."),
                               QStringLiteral("ID")};
    QCommandLineOption view{QStringLiteral("view"),
                            QStringLiteral("Show this view: heatmap (default), mask, compare, diagnostics, links, cost, atlas, experts, image, neuron, qkmap or context."),
                            QStringLiteral("VIEW")};
    QCommandLineOption compare{QStringLiteral("compare"),
                               QStringLiteral("The \"Compare with\" variant ids, comma-separated (up to 3; the compare view "
                                              "runs them beside --variant)."),
                               QStringLiteral("ID")};
    QCommandLineOption param{QStringLiteral("param"), QStringLiteral("A parameter of --variant, e.g. window=2 (repeatable)."),
                             QStringLiteral("NAME=VALUE")};
    QCommandLineOption compareParam{QStringLiteral("compare-param"), QStringLiteral("A parameter of a --compare variant: ID:NAME=VALUE for the entry ID, "
                                                   "NAME=VALUE for the first (repeatable)."),
                                    QStringLiteral("[ID:]NAME=VALUE")};
    QCommandLineOption head{QStringLiteral("head"), QStringLiteral("Show this head (default 0)."), QStringLiteral("H")};
    QCommandLineOption query{QStringLiteral("query"), QStringLiteral("Mask view: fill the row panel for this query (screenshots)."),
                             QStringLiteral("I")};
    QCommandLineOption key{QStringLiteral("key"),
                           QStringLiteral("Compare view: with --query, hover the cell (query, key) (screenshots)."),
                           QStringLiteral("J")};
    QCommandLineOption errorCurve{QStringLiteral("error-curve"),
                                  QStringLiteral("Diagnostics view: compute the approximation error curve before the screenshot.")};
    QCommandLineOption receptiveField{
        QStringLiteral("receptive-field"),
        QStringLiteral("Diagnostics view of transformer_xl: show the receptive field (of --query; with --model, its flow).")};
    QCommandLineOption starReach{QStringLiteral("star-reach"),
                                 QStringLiteral("Diagnostics view of star: show the Reach tab (what reaches each node).")};
    QCommandLineOption evalSpeed{QStringLiteral("eval-speed"),
                                 QStringLiteral("Cost view: measure Transformer-XL's evaluation speed before the screenshot.")};
    QCommandLineOption scaling{QStringLiteral("scaling"),
                               QStringLiteral("Cost view: measure the run's variants at these sizes (e.g. 256,512,1024) before "
                                              "the screenshot."),
                               QStringLiteral("SIZES")};
    QCommandLineOption tour{QStringLiteral("tour"), QStringLiteral("Open Help ▸ Guided Tour at step N (1-based)."),
                            QStringLiteral("N")};
    QCommandLineOption helpPanel{QStringLiteral("help-panel"),
                                 QStringLiteral("Show the \"What am I looking at?\" panel (F1) beside the views.")};
    QCommandLineOption maskWeights{QStringLiteral("mask-weights"), QStringLiteral("Mask view: shade allowed cells by their weights.")};
    QCommandLineOption imageShow{QStringLiteral("image-show"),
                                 QStringLiteral("Image tab: weights | mask | groups | layers | rollout | flow | dino (the last four "
                                                "with a vision model)."),
                                 QStringLiteral("KIND")};
    QCommandLineOption model{QStringLiteral("model"),
                             QStringLiteral("Open this model folder; its layer (--layer) is the Q/K/V source."), QStringLiteral("DIR")};
    QCommandLineOption welcome{QStringLiteral("welcome"),
                               QStringLiteral("Show the first-start card (screenshots; the app shows it until it is closed once).")};
    QCommandLineOption layer{QStringLiteral("layer"), QStringLiteral("With --model: the layer whose Q/K/V runs take (default 0)."),
                             QStringLiteral("L")};
    QCommandLineOption corpus{QStringLiteral("corpus"),
                              QStringLiteral("Context tab: search this corpus (a UTF-8 text file) with the open model."), QStringLiteral("FILE")};
    // NOTE: not "--session": QGuiApplication takes -session/--session for X11 session management.
    QCommandLineOption session{QStringLiteral("session-file"),
                               QStringLiteral("Open this session file (docs/SESSIONS.md) once the engine is ready."),
                               QStringLiteral("PATH")};

    void addTo(QCommandLineParser& parser) const {
        parser.addOptions({variant, errorCurve, receptiveField, starReach, evalSpeed, scaling, tour, helpPanel, view, compare, param, compareParam, head, query, key, maskWeights, imageShow, model, layer, welcome,
                           screenshot, windowSize, textFile, image, session, corpus});
    }
};

// What the window starts with, read from the command line (and, outside screenshots, the saved
// settings and the autosaved text).
struct Startup {
    MainWindow::Options options;
    AppSettings settings;
    QString screenshotPath, sessionPath, corpusPath;
    int head = 0, query = -1, key = -1;
    QSize windowSize{kScreenshotWidth, kScreenshotHeight};
    bool errorCurve = false, receptiveField = false, starReach = false, evalSpeed = false, maskWeights = false;
    bool helpPanel = false;
    std::optional<attnscope::views::OverlayKind> imageShow;
    QString scalingSizes;
    int tourStep = 0;  // 1-based; 0 = no tour
    bool screenshot() const { return !screenshotPath.isEmpty(); }
};

/// 0, or the exit status after printing what is wrong with the command line.
int readStartup(const QCommandLineParser& parser, const StartupFlags& f, Startup& s);

}  // namespace attnscope::app
