#pragma once
// The main window: the settings column (RunSettingsPanel) on the left, the heads grid above the
// view tabs (ViewTabs) on the right, and the controllers that do the work (docs/ARCHITECTURE.md,
// "The window"). It composes and wires them. All engine work goes through EngineRunner; nothing
// here blocks.

#include "common/run_plan.h"
#include "gui/settings/app_settings.h"
#include "gui/controllers/run_controller.h"
#include "gui/window/view_tabs.h"

#include <attnscope/model.h>
#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include <QHash>
#include <QImage>
#include <QMainWindow>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

class QAction;
class QMenu;

namespace attnscope::views {
class HelpPanel;
class ParamForm;
class NoticesPanel;
}  // namespace attnscope::views

namespace attnscope::app {

class AtlasController;
class ContextController;
class CostTabController;
class DocumentController;
class ResultFileController;
class EngineRunner;
class EvalSpeedJob;
class ExportController;
class HelpMenu;
class ModelController;
class GenerateController;
class ModelSource;
class ModelSourcePanel;
class RunSettingsPanel;
class RunStatusBar;
class ScalingJob;
class StarController;
class TextAutosave;
class ThemeMenu;
class TokenFinder;
class TourPanel;
struct SessionState;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    /// Tabs of the view switcher, in order.
    using View = ViewTab;

    struct Options {
        /// A QMessageBox for failed user-initiated runs. Off in tests and headless runs, where
        /// the status bar alone reports errors.
        bool showErrorDialogs = true;
        /// Runs the input once as soon as the variants are known, so heatmaps show right away.
        bool runOnStart = true;
        /// Input text; a null string means the bundled sample.
        QString initialText;
        QString textSource;  ///< shown in the window title; empty = "sample"
        /// Where the typed text is autosaved (TextAutosave); empty = no autosave (tests).
        QString autosavePath;
        View initialView = View::Heatmap;
        QString compareVariant;  ///< "Compare with" variant id; empty = longformer or the second
        /// "name=value" texts for the variant's and the compare variant's forms, applied once the
        /// schemas are known; a text that does not parse is reported in the status bar.
        QStringList params;
        QStringList compareParams;
        /// Writes File → Recent to QSettings on every change (the app; off in tests).
        bool persistRecentFiles = false;
        /// A picture opened at start (--image), its file name: the input instead of the text.
        QImage initialImage;
        QString initialImageName;
        QString initialImagePath;  ///< absolute
        /// A model folder opened at start (its layer `modelLayer` becomes the Q/K/V source).
        QString modelFolder;
        int modelLayer = 0;
        /// The model opens on the chosen variant (--variant with --model), not its own attention.
        bool modelKeepsVariant = false;
        /// The first-start card (WelcomeCard), unless AppSettings::welcomeSeen says it was closed.
        bool showWelcome = false;
    };

    /// `runner` must outlive the window.
    MainWindow(EngineRunner* runner, const AppSettings& settings, const Options& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// The bundled sample text (resource :/samples/sample.txt, a copy of samples/sample.txt).
    static QString sampleText();

    /// Current run settings and window geometry, for AppSettings::save.
    AppSettings settings() const;

    /// The left column: input, variant and its form, compared variants, projections, Run.
    RunSettingsPanel* inputs() const { return m_inputs; }
    /// The right side: the heads grid, the Find bar and the view tabs with their views.
    ViewTabs* views() const { return m_views; }
    View currentView() const;
    TextAutosave* autosave() const { return m_autosave; }
    /// The Cost tab's scaling sweep and Transformer-XL evaluation-speed measurement.
    ScalingJob* scalingJob() const;
    EvalSpeedJob* evalSpeedJob() const;
    ContextController* contextController() const { return m_context; }
    /// File → Export Figure / Export Data / Copy Figure, for the shown view tab.
    ExportController* exportController() const { return m_export; }
    views::HelpPanel* helpPanel() const;
    TourPanel* tourPanel() const;
    /// Every status message of the session (View ▸ Messages).
    views::NoticesPanel* noticesPanel() const { return m_notices; }
    /// The first window's size cap (no saved geometry: 90 % of the screen, at most this).
    static constexpr int kFirstWindowMaxWidth = 1800, kFirstWindowMaxHeight = 1100;
    /// The status bar's "out of date" mark is shown: the inputs changed after the shown run.
    bool resultOutOfDate() const;
    const std::shared_ptr<const engine::RunResult>& lastResult() const { return m_views->result(); }
    /// True while the view of `view`'s tab has not taken the shown result: a result goes to the
    /// heads grid and the shown tab at once, to another tab's view when that tab is first shown.
    bool resultPending(View view) const;
    /// Gives the shown result to every view still waiting for it and finishes the background work
    /// (pooled heads and thumbnails, the compare view's difference map and error summaries), so
    /// every tab can be rendered (exports, screenshots, tests).
    void flushPendingResult();
    QString statusText() const;

    // ---- sessions, recent files, drag and drop, theme (main_window_session.cpp)
    /// Everything a session file holds, read from the widgets.
    SessionState captureSession() const;
    /// Checks the session against the variant schemas, then applies it and runs it. Returns the
    /// message when it is refused; nothing is changed then.
    QString applySession(const SessionState& session);
    /// Opens a session, an image or a text file, judged by content; errors are also shown. Empty on success.
    QString openPath(const QString& path);
    /// An image file becomes the input and runs; a file that cannot be read is refused with the
    /// reason and the shown input and result stay. Empty on success.
    QString openImage(const QString& path);
    /// Saves the session to `path`, which becomes the current session file. Empty on success.
    QString saveSessionTo(const QString& path);
    QString sessionPath() const;
    QStringList recentFiles() const;
    QMenu* recentMenu() const;
    QString themeName() const;

    // ---- trained checkpoints and the Atlas tab (main_window_model.cpp)
    ModelSource* modelSource() const { return m_modelSource; }
    ModelSourcePanel* modelSourcePanel() const { return m_sourcePanel; }
    GenerateController* generator() const { return m_generate; }
    /// Opens a model folder on the engine thread; a refusal is reported and changes nothing.
    void openModelFolder(const QString& folder);

public Q_SLOTS:
    /// A user-initiated run (Run button, F5): its errors may open a dialog. Returns the job id,
    /// 0 when the form is invalid.
    quint64 runNow();
    void cancelRun();
    void showNextHead();
    void showPreviousHead();
    void openTextFile();
    void openImageFile();
    /// "light" or "dark": Fusion palettes for the whole application; plots follow.
    void setTheme(const QString& name);
    /// Switches the view tab. The Compare tab runs both variants in one request when the shown
    /// result does not hold that pair yet.
    void showView(View view);
    /// Opens the bundled trained Transformer-XL (written to the data folder first) with its own
    /// attention, transformer_xl: the random projections note's one-click switch.
    void useSampleModel();
    /// The star player's cycles as PNG frames and a strip into `folder` (StarController); "" or
    /// the error shown.
    QString exportStarCyclesTo(const QString& folder);
    /// Opens a file that is not UTF-8 as text, each byte that is not UTF-8 (and NUL) replaced by
    /// U+FFFD: what the "not UTF-8" message offers. Returns "" or the error shown.
    QString openTextWithReplacement(const QString& path);
    /// The head atlas of the opened model on the input text, in the background (Esc cancels).
    void analyzeModel();

Q_SIGNALS:
    /// The views show the result of `job` (emitted after they were updated).
    void resultShown(quint64 job);
    void runFailed(quint64 job, QString message, int code);
    void atlasShown();
    void atlasFailed(QString message, int code);
    void modelOpenFailed(QString message);

private:
    /// The picture becomes the input (text kept), the Image tab shows; no run.
    void useImage(const QImage& picture, const QString& name, const QString& path = {});
    /// The session's picture as the input (read again from its file), or the text when it has
    /// none; a picture that cannot be read leaves the text as the input and says why.
    void applySessionImage(const SessionState& session);
    /// File ▸ Open / Save Session, Recent and drops (DocumentController).
    void buildDocuments();
    /// Help: the "What am I looking at?" panel (F1), following the tab and the variant, and About.
    void buildHelpActions();
    void buildTokenFinder(QMenu* viewMenu);
    void uiApplyTourStep(int index);
    void uiEndTour();
    void uiRestoreHabits(const AppSettings& settings);
    void buildUi(const AppSettings& settings);
    QWidget* buildSettingsColumn(const AppSettings& settings);
    QWidget* buildViewTabs(const AppSettings& settings);
    void buildStatusBar();
    void buildRuns();
    /// Enables the window's tokenizer and projections unless a model supplies them; the random
    /// projections note shows while they are in use.
    void uiShowSourceControls(bool model);
    /// The window title names where the text came from, marked "(edited)" once it differs.
    void uiSetSourceTitle(const QString& name);
    void uiUpdateTitle();
    void buildActions();
    /// The first-start card: shown unless closed before; closing it is remembered.
    void buildWelcome(const AppSettings& settings);
    /// Display names by variant id (the variant chooser's), for titles and figure subjects.
    QHash<QString, QString> variantNames() const;
    void buildModelSourceUi();
    void buildGenerateUi();
    void buildAtlasTab();
    void buildContextTab();
    /// A model is open (ModelController): its settings for the variant, the title, a run.
    void uiModelOpened(const engine::ModelInfo& info, bool keepVariant);
    /// Captured attention opened: the text box gets the file's tokens (undoably).
    void showCapturedText(const QString& text);
    void uiModelSourceChanged();
    /// What the shown tab needs of a run beside the main variant.
    RunController::Purpose runPurpose() const;
    quint64 uiStartRun(bool userInitiated);
    void uiShowVariants(quint64 job, const std::vector<engine::VariantInfo>& variants);
    void uiShowOpenedResult(std::shared_ptr<const engine::RunResult> result, const QString& message);
    void uiShowResult(quint64 job, std::shared_ptr<const engine::RunResult> result, int comparePanes,
                      const QString& exactNote);
    void uiShowFailure(quint64 job, const QString& message, int code, bool userInitiated, bool besideField);
    /// Shows the "out of date" mark when the inputs differ from those of the shown result.
    void uiUpdateFreshness();
    /// Puts the open model's settings for the chosen variant into the form (ModelInfo::variantDefaults).
    /// Every form (the variant's, each compared row's) takes the source's settings.
    void applyModelDefaults();
    /// Per layer, the open model's own attention in words, while a model layer is the source.
    std::optional<std::vector<QString>> ownAttentionSummaries() const;
    /// A variant's form as it is first shown: the window's start values (`pad` ticked), then
    /// the source's settings (ModelController::applySettingsTo).
    void showVariantForm(views::ParamForm* form);
    void uiCompareVariantChanged();
    void uiViewChanged();
    void uiRunStateChanged(bool running);
    /// Esc (Run ▸ Cancel) is live while a run, a Cost tab measurement or an analysis runs.
    void uiUpdateCancel();
    bool uiMeasuringOrAnalysing() const;
    void setStatusMessage(const QString& text, const QString& details = {});

    EngineRunner* m_runner = nullptr;
    RunSettingsPanel* m_inputs = nullptr;  // the left column: input, variants, projections, Run
    ViewTabs* m_views = nullptr;           // the right side: heads grid, find bar, the view tabs
    RunController* m_runs = nullptr;       // makes the runs and follows the latest
    AtlasController* m_atlas = nullptr;    // the Atlas tab's analysis and compare intent
    ContextController* m_context = nullptr;  // the Context tab's corpus index and search
    DocumentController* m_documents = nullptr;  // sessions, text files, Recent, drops
    ResultFileController* m_resultFiles = nullptr;  // File ▸ Open Result
    bool m_bannerHiddenForFile = false;  // the random-projection banner hidden while a result file shows
    ExportController* m_export = nullptr;
    Options m_options;
    bool m_variantsKnown = false;
    bool m_welcomeSeen = false;  // the first-start card was closed (saved in AppSettings)

    views::NoticesPanel* m_notices = nullptr;
    RunStatusBar* m_status = nullptr;  // message, progress, counters, out-of-date mark
    HelpMenu* m_helpMenu = nullptr;  // Help: what am I looking at, the tour, About
    std::shared_ptr<SessionState> m_beforeTour;  // the person's settings while the tour shows its own
    TokenFinder* m_finder = nullptr;  // View ▸ Find Token
    TextAutosave* m_autosave = nullptr;
    CostTabController* m_cost = nullptr;  // the Cost tab's measurements
    StarController* m_star = nullptr;     // the star player's cycles and their export
    QString m_sessionNotice;  // what the last session applied could not restore (DocumentController::Host)
    QString m_titleSource, m_titleText;  // the title's source name and the text it came with
    GenerateController* m_generate = nullptr;  // Generate (Ctrl+G): the model continues the text
    ModelController* m_models = nullptr;  // File ▸ Open Model, the Q/K/V source box
    ModelSource* m_modelSource = nullptr;     // (m_models's)
    ModelSourcePanel* m_sourcePanel = nullptr;  // (m_models's)
    QString m_preferredCompare = QString::fromStdString(defaultComparedVariant());
    QAction* m_runAction = nullptr;
    QAction* m_cancelAction = nullptr;

    ThemeMenu* m_themes = nullptr;  // View ▸ Theme
};

}  // namespace attnscope::app
