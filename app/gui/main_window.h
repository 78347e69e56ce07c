#pragma once
// The main window: input text and run settings on the left; on the right the heads grid above
// the view tabs (Heatmap, Mask, Compare, Diagnostics). All engine work goes through EngineRunner; nothing
// here blocks.

#include "gui/app_settings.h"

#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include <QMainWindow>
#include <QString>
#include <QVector>

#include <memory>
#include <vector>

class QAction;
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTimer;

namespace attnscope::views {
class CompareView;
class CostView;
class DiagnosticsStack;
class HeadHeatmap;
class MaskView;
class TokenLinks;
class HeadsGrid;
class InspectionState;
class ParamForm;
}  // namespace attnscope::views

namespace attnscope::app {

class EngineRunner;
class ExportController;
class TextAutosave;
class CompareVariantsEditor;
class ScalingJob;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    /// Tabs of the view switcher, in order.
    enum class View { Heatmap = 0, Mask = 1, Compare = 2, Diagnostics = 3, Links = 4, Cost = 5 };

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
    };

    /// `runner` must outlive the window.
    MainWindow(EngineRunner* runner, const AppSettings& settings, const Options& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// The bundled sample text (resource :/samples/sample.txt, a copy of samples/sample.txt).
    static QString sampleText();

    /// Current run settings and window geometry, for AppSettings::save.
    AppSettings settings() const;

    views::HeadHeatmap* heatmap() const { return m_heatmap; }
    views::HeadsGrid* headsGrid() const { return m_headsGrid; }
    views::MaskView* maskView() const { return m_maskView; }
    views::TokenLinks* tokenLinks() const { return m_tokenLinks; }
    TextAutosave* autosave() const { return m_autosave; }
    views::CompareView* compareView() const { return m_compareView; }
    /// The Diagnostics tab: the selected variant's own diagnostics view (spectrum, approximation,
    /// LSH, clusters). For performer/linear/linformer its runs add `full` as the exact reference.
    views::DiagnosticsStack* diagnostics() const { return m_diagnostics; }
    QTabWidget* viewTabs() const { return m_viewTabs; }
    View currentView() const;
    /// The second variant of the Compare tab and its schema-driven form.
    QComboBox* compareCombo() const { return m_compareCombo; }
    views::ParamForm* compareParamForm() const { return m_compareForm; }
    /// Every compared variant (1–3 rows besides the main one); row 0 is compareCombo().
    CompareVariantsEditor* compareEditor() const { return m_compareEditor; }
    /// The Cost tab: the run's counters and the scaling plot (computed by scalingJob()).
    views::CostView* costView() const { return m_costView; }
    ScalingJob* scalingJob() const { return m_scalingJob; }
    views::InspectionState* inspection() const { return m_state; }
    /// File → Export Figure / Export Data / Copy Figure, for the shown view tab.
    ExportController* exportController() const { return m_export; }
    views::ParamForm* paramForm() const { return m_paramForm; }
    QPlainTextEdit* textEdit() const { return m_text; }
    QComboBox* variantCombo() const { return m_variantCombo; }
    const std::shared_ptr<const engine::RunResult>& lastResult() const { return m_result; }
    QString statusText() const;

public Q_SLOTS:
    /// A user-initiated run (Run button, F5): its errors may open a dialog. Returns the job id,
    /// 0 when the form is invalid.
    quint64 runNow();
    void cancelRun();
    void showNextHead();
    void showPreviousHead();
    void openTextFile();
    /// Switches the view tab. The Compare tab runs both variants in one request when the shown
    /// result does not hold that pair yet.
    void showView(View view);

Q_SIGNALS:
    /// The views show the result of `job` (emitted after they were updated).
    void resultShown(quint64 job);
    void runFailed(quint64 job, QString message, int code);

private:
    void buildUi(const AppSettings& settings);
    // ---- compare variants and cost tab (main_window_compare.cpp)
    void uiConnectExplorerViews();
    /// Fills the compared-variant rows and the cost view's variant list from m_variants.
    void uiShowExplorerVariants();
    /// Appends the compared variants and, when none is `full`, exact softmax for the error summary.
    void uiAddCompareVariants(engine::RunRequest& request, bool compare);
    /// A compare request that failed over budget because of the added `full` runs again without
    /// it; true when it did.
    bool uiRetryCompareWithoutExact(int code, const QString& message);
    void buildActions();
    quint64 uiStartRun(bool userInitiated);
    void uiShowVariants(quint64 job, const std::vector<engine::VariantInfo>& variants);
    void uiShowResult(quint64 job, std::shared_ptr<const engine::RunResult> result);
    void uiShowFailure(quint64 job, const QString& message, int code);
    void uiShowProgress(quint64 job, int permille, const QString& stage);
    void uiVariantChanged();
    void uiCompareVariantChanged();
    /// Applies "name=value" texts to a form through the schema; returns the errors.
    static QStringList applyParamTexts(views::ParamForm* form, const QStringList& texts);
    void uiViewChanged();
    /// True when the Compare tab is shown and the last result lacks the chosen second variant.
    bool uiCompareNeedsRun() const;
    /// True when the Diagnostics tab is shown, the variant approximates softmax and the last
    /// result lacks it or the exact `full` beside it.
    bool uiDiagnosticsNeedsRun() const;
    /// The approximation view's intent: one request holding the variant once per value, then `full`.
    void uiRunErrorCurve(const QString& variantId, const QString& paramName, const QVector<double>& values);
    void uiShowErrorCurve(const std::shared_ptr<const engine::RunResult>& result);
    void uiStepHead(int delta);
    void uiRunStateChanged(bool running);
    void setStatusMessage(const QString& text, const QString& details = {});

    EngineRunner* m_runner = nullptr;
    ExportController* m_export = nullptr;
    Options m_options;
    QString m_preferredVariant;
    std::vector<engine::VariantInfo> m_variants;
    std::shared_ptr<const engine::RunResult> m_result;
    quint64 m_currentJob = 0;
    bool m_currentJobByUser = false;
    bool m_variantsKnown = false;
    bool m_currentRunCompares = false;  // the latest request holds the Compare tab's pair
    bool m_currentRunHasExact = false;  // the latest request holds the Diagnostics tab's `full`
    quint64 m_curveJob = 0;             // the error curve's job while it runs, else 0
    QString m_curveVariant;
    QString m_curveParam;
    QVector<double> m_curveValues;

    views::InspectionState* m_state = nullptr;
    views::HeadHeatmap* m_heatmap = nullptr;
    views::HeadsGrid* m_headsGrid = nullptr;
    views::ParamForm* m_paramForm = nullptr;
    views::MaskView* m_maskView = nullptr;
    views::TokenLinks* m_tokenLinks = nullptr;
    TextAutosave* m_autosave = nullptr;
    views::CompareView* m_compareView = nullptr;
    views::DiagnosticsStack* m_diagnostics = nullptr;
    QTabWidget* m_viewTabs = nullptr;
    QComboBox* m_compareCombo = nullptr;  // row 0 of m_compareEditor
    views::ParamForm* m_compareForm = nullptr;
    CompareVariantsEditor* m_compareEditor = nullptr;
    int m_comparePanes = 0;            // variants of the latest compare request shown as panes
    bool m_compareExactAdded = false;  // the latest compare request added `full` for the errors
    QString m_compareExactNote;        // why the shown comparison has no `full`, if it has none
    bool m_compareSkipExact = false;   // the next compare request leaves `full` out (over budget)
    views::CostView* m_costView = nullptr;
    ScalingJob* m_scalingJob = nullptr;
    QString m_preferredCompare = QStringLiteral("longformer");
    QPlainTextEdit* m_text = nullptr;
    QComboBox* m_tokenizerCombo = nullptr;
    QComboBox* m_variantCombo = nullptr;
    QLabel* m_variantInfo = nullptr;
    QSpinBox* m_headsSpin = nullptr;
    QSpinBox* m_headDimSpin = nullptr;
    QSpinBox* m_seedSpin = nullptr;
    QPushButton* m_runButton = nullptr;
    QPushButton* m_cancelButton = nullptr;
    QLabel* m_statusMessage = nullptr;
    QLabel* m_timeLabel = nullptr;
    QLabel* m_memoryLabel = nullptr;
    QProgressBar* m_progress = nullptr;
    QTimer* m_progressDelay = nullptr;
    QAction* m_runAction = nullptr;
    QAction* m_cancelAction = nullptr;
};

}  // namespace attnscope::app
