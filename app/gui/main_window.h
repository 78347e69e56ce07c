#pragma once
// The main window: input text and run settings on the left, heads grid and the selected head's
// heatmap on the right. All engine work goes through EngineRunner; nothing here blocks.

#include "gui/app_settings.h"

#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include <QMainWindow>
#include <QString>

#include <memory>
#include <vector>

class QAction;
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTimer;

namespace attnscope::views {
class HeadHeatmap;
class HeadsGrid;
class InspectionState;
class ParamForm;
}  // namespace attnscope::views

namespace attnscope::app {

class EngineRunner;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        /// A QMessageBox for failed user-initiated runs. Off in tests and headless runs, where
        /// the status bar alone reports errors.
        bool showErrorDialogs = true;
        /// Runs the input once as soon as the variants are known, so heatmaps show right away.
        bool runOnStart = true;
        /// Input text; a null string means the bundled sample.
        QString initialText;
        QString textSource;  ///< shown in the window title; empty = "sample"
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
    views::InspectionState* inspection() const { return m_state; }
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

Q_SIGNALS:
    /// The views show the result of `job` (emitted after they were updated).
    void resultShown(quint64 job);
    void runFailed(quint64 job, QString message, int code);

private:
    void buildUi(const AppSettings& settings);
    void buildActions();
    quint64 uiStartRun(bool userInitiated);
    void uiShowVariants(quint64 job, const std::vector<engine::VariantInfo>& variants);
    void uiShowResult(quint64 job, std::shared_ptr<const engine::RunResult> result);
    void uiShowFailure(quint64 job, const QString& message, int code);
    void uiShowProgress(quint64 job, int permille, const QString& stage);
    void uiVariantChanged();
    void uiStepHead(int delta);
    void uiRunStateChanged(bool running);
    void setStatusMessage(const QString& text, const QString& details = {});

    EngineRunner* m_runner = nullptr;
    Options m_options;
    QString m_preferredVariant;
    std::vector<engine::VariantInfo> m_variants;
    std::shared_ptr<const engine::RunResult> m_result;
    quint64 m_currentJob = 0;
    bool m_currentJobByUser = false;
    bool m_variantsKnown = false;

    views::InspectionState* m_state = nullptr;
    views::HeadHeatmap* m_heatmap = nullptr;
    views::HeadsGrid* m_headsGrid = nullptr;
    views::ParamForm* m_paramForm = nullptr;
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
