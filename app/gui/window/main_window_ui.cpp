// MainWindow's widgets: the settings column, the view tabs and the status bar (main_window.cpp
// holds the behaviour).

#include "gui/window/main_window.h"
#include "gui/controllers/result_file_controller.h"
#include "gui/controllers/generate_controller.h"

#include "gui/panels/compare_variants_editor.h"
#include "gui/controllers/cost_tab_controller.h"
#include "gui/controllers/document_controller.h"
#include "gui/engine/engine_runner.h"
#include "gui/export/export_controller.h"
#include "gui/export/window_exports.h"
#include "gui/panels/input_guards.h"
#include "gui/controllers/model_controller.h"
#include "gui/engine/model_source.h"
#include "gui/window/random_projection_banner.h"
#include "gui/panels/run_settings_panel.h"
#include "gui/window/run_status_bar.h"
#include "gui/controllers/star_controller.h"
#include "gui/settings/text_autosave.h"
#include "gui/window/theme_menu.h"

#include "views/widgets/param_form.h"
#include "views/diagnostics/diagnostics_stack.h"
#include "views/diagnostics/receptive_field_view.h"
#include "views/heatmap/head_heatmap.h"
#include "views/heatmap/heads_grid.h"
#include "views/data/inspection_state.h"
#include "views/moe/routing_view.h"
#include "views/widgets/notices_panel.h"

#include <QAction>
#include <QComboBox>
#include <QKeySequence>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>

namespace attnscope::app {

void MainWindow::buildUi(const AppSettings& settings) {
    QWidget* settingsColumn = buildSettingsColumn(settings);
    uiSetSourceTitle(m_options.textSource.isEmpty() ? tr("sample") : m_options.textSource);
    connect(m_inputs->text(), &QPlainTextEdit::textChanged, this, &MainWindow::uiUpdateTitle);
    QWidget* views = buildViewTabs(settings);
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    // (the help panel takes its width from the views, not from the settings, whose fields it clipped)
    settingsColumn->setMinimumWidth(340);
    splitter->addWidget(settingsColumn);
    splitter->addWidget(views);
    splitter->setStretchFactor(0, 0);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({380, 1020});  // room for the settings and their vertical scroll bar
    setCentralWidget(splitter);
    m_views->heatmap()->setFocus();  // head stepping keys work at once; the editor keeps them when focused
    buildStatusBar();
    buildRuns();
    new InputGuards(this);  // wheel only in the focused field; the window's shortcuts from any field
}

// Input, variant, compared variants, Q/K/V source, Run and Cancel (RunSettingsPanel).
QWidget* MainWindow::buildSettingsColumn(const AppSettings& settings) {
    RunSettingsPanel::Initial initial;
    initial.text = m_options.initialText.isNull() ? sampleText() : m_options.initialText;
    initial.tokenizer = settings.tokenizer;
    initial.heads = settings.heads;
    initial.headDim = settings.headDim;
    initial.seed = settings.seed;
    m_inputs = new RunSettingsPanel(initial, this);
    m_inputs->setPreferredVariant(settings.variantId);
    if (!m_options.autosavePath.isEmpty()) m_autosave = new TextAutosave(m_inputs->text(), m_options.autosavePath, 1500, this);
    connect(m_inputs, &RunSettingsPanel::notice, this, [this](const QString& text) { setStatusMessage(text); });
    // A variant shown with its schema's values takes the window's start values, the source's
    // causality and the model's settings.
    connect(m_inputs, &RunSettingsPanel::variantShown, this, [this] { showVariantForm(m_inputs->paramForm()); });
    connect(m_inputs->compareEditor(), &CompareVariantsEditor::rowVariantShown, this, &MainWindow::showVariantForm);
    connect(m_inputs->compareEditor(), &CompareVariantsEditor::changed, this, &MainWindow::uiCompareVariantChanged);
    connect(m_inputs->runButton(), &QPushButton::clicked, this, &MainWindow::runNow);
    connect(m_inputs->cancelButton(), &QPushButton::clicked, this, &MainWindow::cancelRun);
    buildModelSourceUi();  // Q/K/V from a model layer instead (main_window_model.cpp)
    return m_inputs;
}

// The heads grid above the view tabs; the result tabs registered for the window's loops.
QWidget* MainWindow::buildViewTabs(const AppSettings& settings) {
    m_views = new ViewTabs(settings, this);
    // Transformer-XL's receptive field asks for the model's attention of every layer
    views::ReceptiveFieldView* field = m_views->diagnostics()->receptiveFieldView();
    connect(field, &views::ReceptiveFieldView::bandsRequested, m_modelSource, &ModelSource::requestAttentionBands);
    connect(m_modelSource, &ModelSource::bandsReady, field, &views::ReceptiveFieldView::setModelBands);
    connect(m_modelSource, &ModelSource::bandsFailed, field, &views::ReceptiveFieldView::setBandsFailed);
    m_star = new StarController(m_runner, m_views->diagnostics()->starPlayer(), this, this);
    connect(m_star, &StarController::report, this, &MainWindow::setStatusMessage);
    // Double-clicking a thumbnail opens that head large (the click itself already selected it).
    connect(m_views->headsGrid(), &views::HeadsGrid::headOpened, this, [this] { showView(View::Heatmap); });
    m_cost = new CostTabController(m_runner, m_views->costView(), m_inputs, this);
    connect(m_cost, &CostTabController::busyChanged, this, &MainWindow::uiUpdateCancel);
    buildAtlasTab();
    buildContextTab();
    connect(m_views->banner(), &RandomProjectionBanner::useSampleModelRequested, this, &MainWindow::useSampleModel);
    // A Diagnostics page's suggestion ("Try chunk_len = 7"): set it in the variant's form, run.
    connect(m_views->diagnostics(), &views::DiagnosticsStack::settingSuggested, this, [this](const QString& id, const QString& setting) {
        if (m_inputs->variantId() != id) return;
        const QStringList errors = m_inputs->paramForm()->applyTexts({setting});
        if (!errors.isEmpty()) return setStatusMessage(errors.join(QLatin1Char(' ')));
        setStatusMessage(tr("%1: %2, as the Diagnostics page suggests.").arg(id, setting));
        runNow();
    });
    connect(m_views->tabs(), &QTabWidget::currentChanged, this, &MainWindow::uiViewChanged);
    return m_views;
}

// Message (warnings, errors), progress, time and memory of the last run.
// The menus: File (sessions, text, model, exports), Run, View (heads, messages, find, theme), Help.
void MainWindow::buildActions() {
    QMenu* fileMenu = menuBar()->addMenu(tr("&File"));
    m_documents->addActions(fileMenu);  // Open Session (Ctrl+O), Save Session (Ctrl+S), Save As, Recent
    QAction* open = fileMenu->addAction(tr("Open &Text…"), this, &MainWindow::openTextFile);
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    QAction* openImage = fileMenu->addAction(tr("Open &Image…"), this, &MainWindow::openImageFile);
    openImage->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    openImage->setStatusTip(tr("A picture as the input: its pixels or patches become the tokens (PNG, JPEG, BMP, GIF, …)"));
    m_models->addAction(fileMenu);
    m_resultFiles->addAction(fileMenu);
    fileMenu->addSeparator();
    m_export = addWindowExports(this, fileMenu, {m_views, [this] { return lastResult(); }, [this] { return variantNames(); }},
                                m_options.showErrorDialogs);
    connect(m_export, &ExportController::exported, this, [this](const QString& text) { setStatusMessage(text); });
    connect(m_export, &ExportController::exportFailed, this, [this](const QString& text) { setStatusMessage(text, text); });
    m_star->setExports(m_export, m_options.showErrorDialogs);
    fileMenu->addAction(tr("Export Star-Transformer C&ycles…"), m_star, &StarController::exportCyclesInteractive)
        ->setToolTip(tr("One PNG per cycle of the star player and a strip of them all, for slides"));
    fileMenu->addSeparator();
    QAction* quit = fileMenu->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* runMenu = menuBar()->addMenu(tr("&Run"));
    m_runAction = runMenu->addAction(tr("&Run"), this, &MainWindow::runNow);
    m_runAction->setShortcuts({QKeySequence(Qt::Key_F5), QKeySequence(Qt::CTRL | Qt::Key_R)});
    runMenu->addAction(m_generate->action());
    m_cancelAction = runMenu->addAction(tr("&Cancel"), this, &MainWindow::cancelRun);
    m_cancelAction->setShortcut(QKeySequence(Qt::Key_Escape));
    m_inputs->runButton()->setToolTip(tr("Run (F5, Ctrl+R)"));
    m_inputs->cancelButton()->setToolTip(tr("Cancel (Esc)"));

    // NOTE: the text editor keeps Ctrl+Left/Right and PgUp/PgDn for itself while it has focus.
    QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
    QAction* next = viewMenu->addAction(tr("&Next Head"), this, &MainWindow::showNextHead);
    next->setShortcuts({QKeySequence(Qt::Key_PageDown), QKeySequence(Qt::CTRL | Qt::Key_Right)});
    QAction* previous = viewMenu->addAction(tr("&Previous Head"), this, &MainWindow::showPreviousHead);
    previous->setShortcuts({QKeySequence(Qt::Key_PageUp), QKeySequence(Qt::CTRL | Qt::Key_Left)});
    QAction* messages = m_notices->toggleViewAction();
    messages->setText(tr("&Messages"));
    messages->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L));
    viewMenu->addSeparator();
    viewMenu->addAction(messages);
    buildTokenFinder(viewMenu);
    m_themes = new ThemeMenu(viewMenu, this);
    buildHelpActions();
}

void MainWindow::buildStatusBar() {
    m_notices = new views::NoticesPanel(this);
    addDockWidget(Qt::BottomDockWidgetArea, m_notices);
    m_notices->hide();
    m_status = new RunStatusBar(statusBar(), m_notices, [this] { return m_runner->isRunning(); }, this);
}

}  // namespace attnscope::app
