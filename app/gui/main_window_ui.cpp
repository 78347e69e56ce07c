// MainWindow's widgets: the settings column, the view tabs and the status bar (main_window.cpp
// holds the behaviour).

#include "gui/main_window.h"
#include "gui/input_guards.h"
#include "common/run_plan.h"
#include <attnscope/result_roles.h>
#include <attnscope/variant_catalog.h>
#include "gui/compare_variants_editor.h"
#include "gui/engine_runner.h"
#include "gui/model_source.h"
#include "gui/random_projection_banner.h"
#include "gui/to_gui.h"
#include "gui/scaling_job.h"
#include "gui/export/export_controller.h"
#include "gui/text_autosave.h"
#include "views/background_job.h"
#include "views/compare_view.h"
#include "views/cost_view.h"
#include "views/diagnostics/approximation_view.h"
#include "views/diagnostics/diagnostics_stack.h"
#include "views/diagnostics/receptive_field_view.h"
#include "views/diagnostics/star_player.h"
#include "gui/token_find_bar.h"
#include "views/elided_label.h"
#include "views/notices_panel.h"
#include "views/moe/routing_view.h"
#include "views/head_heatmap.h"
#include "views/heatmap_options.h"
#include "views/mask_view.h"
#include "views/token_links.h"
#include "views/clamping_spin_box.h"
#include "views/heads_grid.h"
#include "views/inspection_state.h"
#include "views/param_form.h"
#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QMetaObject>
#include <QPointer>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QScrollArea>
#include <QSplitter>
#include <QToolButton>
#include <QStatusBar>
#include <QStringDecoder>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

namespace attnscope::app {

using engine::TokenizerKind;

namespace {
constexpr int kProgressDelayMs = 500;  // FORMATS.md §5: show progress only for runs that take a while
}  // namespace

void MainWindow::buildUi(const AppSettings& settings) {
    QWidget* settingsColumn = buildSettingsColumn(settings);
    uiSetSourceTitle(m_options.textSource.isEmpty() ? tr("sample") : m_options.textSource);
    connect(m_text, &QPlainTextEdit::textChanged, this, &MainWindow::uiUpdateTitle);
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
    m_heatmap->setFocus();  // head stepping keys work at once; the editor keeps them when focused
    buildStatusBar();
    new InputGuards(this);  // wheel only in the focused field; the window's shortcuts from any field
}

// Input, variant, compared variants, Q/K/V source, Run and Cancel: a column that scrolls.
QWidget* MainWindow::buildSettingsColumn(const AppSettings& settings) {
    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);

    auto* inputBox = new QGroupBox(tr("Input"), left);
    auto* inputLayout = new QVBoxLayout(inputBox);
    m_text = new QPlainTextEdit(inputBox);
    m_text->setPlainText(m_options.initialText.isNull() ? sampleText() : m_options.initialText);
    m_text->setPlaceholderText(tr("Paste text here, then press Run (F5)."));
    if (!m_options.autosavePath.isEmpty()) m_autosave = new TextAutosave(m_text, m_options.autosavePath, 1500, this);
    inputLayout->addWidget(m_text, 1);
    auto* tokenizerRow = new QFormLayout;
    m_tokenizerCombo = new QComboBox(inputBox);
    m_tokenizerCombo->addItem(QStringLiteral("words"), static_cast<int>(TokenizerKind::Words));
    m_tokenizerCombo->addItem(QStringLiteral("chars"), static_cast<int>(TokenizerKind::Chars));
    m_tokenizerCombo->addItem(QStringLiteral("bytes"), static_cast<int>(TokenizerKind::Bytes));
    m_tokenizerCombo->setCurrentIndex(std::max(0, m_tokenizerCombo->findText(settings.tokenizer)));
    m_tokenizerCombo->setToolTip(
        tr("words: runs of letters and digits, each punctuation mark alone; chars: code points; "
           "bytes: UTF-8 bytes"));
    // With a model the model's own tokenizer is named instead of the combo (which keeps the choice).
    m_modelTokenizer = new QLabel(inputBox);
    m_modelTokenizer->setTextFormat(Qt::PlainText);
    m_modelTokenizer->setVisible(false);
    auto* tokenizerField = new QHBoxLayout;
    tokenizerField->setContentsMargins(0, 0, 0, 0);
    tokenizerField->addWidget(m_tokenizerCombo, 1);
    tokenizerField->addWidget(m_modelTokenizer, 1);
    tokenizerRow->addRow(tr("Tokenizer"), tokenizerField);
    inputLayout->addLayout(tokenizerRow);
    leftLayout->addWidget(inputBox, 1);

    auto* variantBox = new QGroupBox(tr("Attention variant"), left);
    auto* variantLayout = new QVBoxLayout(variantBox);
    m_variantCombo = new QComboBox(variantBox);
    variantLayout->addWidget(m_variantCombo);
    m_variantInfo = new QLabel(variantBox);
    m_variantInfo->setTextFormat(Qt::PlainText);  // schema text is shown as data, never as HTML
    m_variantInfo->setWordWrap(true);
    m_variantInfo->setForegroundRole(QPalette::PlaceholderText);
    variantLayout->addWidget(m_variantInfo);
    m_paramForm = new views::ParamForm(variantBox);
    connect(m_paramForm, &views::ParamForm::notice, this, [this](const QString& text) { setStatusMessage(text); });
    variantLayout->addWidget(m_paramForm);
    leftLayout->addWidget(variantBox);
    connect(m_variantCombo, &QComboBox::currentIndexChanged, this, &MainWindow::uiVariantChanged);

    // The second variant is part of the request only while the Compare tab is shown, so the
    // other tabs do not pay for it.
    auto* compareBox = new QGroupBox(tr("Compare with (Compare tab)"), left);
    auto* compareLayout = new QVBoxLayout(compareBox);
    m_compareEditor = new CompareVariantsEditor(compareBox);
    compareLayout->addWidget(m_compareEditor);
    leftLayout->addWidget(compareBox);
    m_compareCombo = m_compareEditor->combo(0);
    m_compareForm = m_compareEditor->form(0);
    connect(m_compareEditor, &CompareVariantsEditor::changed, this, &MainWindow::uiCompareVariantChanged);

    auto* projectionBox = new QGroupBox(tr("Q, K, V: seeded random projections"), left);
    m_projectionBox = projectionBox;  // hidden while a model layer supplies Q, K, V
    auto* projectionLayout = new QFormLayout(projectionBox);
    // (a value typed outside the range becomes the nearest allowed one, and the status bar says so)
    const auto clampingSpin = [this, projectionBox](const QString& field, int lo, int hi, int value) {
        auto* box = new views::ClampingSpinBox(projectionBox);
        box->setRange(lo, hi);
        box->setValue(value);
        connect(box, &views::ClampingSpinBox::clamped, this, [this, field](qlonglong typed, int used) {
            setStatusMessage(views::clampNotice(field, typed, used));
        });
        return box;
    };
    m_headsSpin = clampingSpin(tr("Heads"), 1, 64, settings.heads);
    m_headDimSpin = clampingSpin(tr("Head dim"), 1, 1024, settings.headDim);
    m_seedSpin = clampingSpin(tr("Seed"), 0, std::numeric_limits<int>::max(), settings.seed);
    projectionLayout->addRow(tr("Heads"), m_headsSpin);
    projectionLayout->addRow(tr("Head dim"), m_headDimSpin);
    projectionLayout->addRow(tr("Seed"), m_seedSpin);
    leftLayout->addWidget(projectionBox);
    buildModelSourceUi(leftLayout);  // Q/K/V from a model layer instead (main_window_model.cpp)

    auto* buttons = new QHBoxLayout;
    m_runButton = new QPushButton(tr("Run"), left);
    m_runButton->setDefault(true);
    m_cancelButton = new QPushButton(tr("Cancel"), left);
    buttons->addWidget(m_runButton, 1);
    buttons->addWidget(m_cancelButton);
    connect(m_runButton, &QPushButton::clicked, this, &MainWindow::runNow);
    connect(m_cancelButton, &QPushButton::clicked, this, &MainWindow::cancelRun);


    // The settings scroll when the window is shorter than they are (squeezed below their size,
    // the parameter forms' rows were drawn on top of each other); Run and Cancel stay in view.
    auto* leftColumn = new QWidget(this);
    auto* leftColumnLayout = new QVBoxLayout(leftColumn);
    leftColumnLayout->setContentsMargins(0, 0, 0, 0);
    auto* leftScroll = new QScrollArea(leftColumn);
    leftScroll->setWidget(left);
    leftScroll->setWidgetResizable(true);
    // Never sideways: with word-wrapped labels the content was laid out before the vertical bar
    // took its width, and a horizontal bar appeared for those few pixels.
    leftScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    leftScroll->setFrameShape(QFrame::NoFrame);
    leftColumnLayout->addWidget(leftScroll, 1);
    buttons->setContentsMargins(9, 0, 9, 6);
    leftColumnLayout->addLayout(buttons);
    return leftColumn;
}

// The heads grid above the view tabs; the result tabs registered for the window's loops.
QWidget* MainWindow::buildViewTabs(const AppSettings& settings) {
    m_state = new views::InspectionState(this);
    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    m_headsGrid = new views::HeadsGrid(right);
    m_headsGrid->setInspectionState(m_state);
    m_headsGrid->setBackgroundPooling();
    m_viewTabs = new QTabWidget(right);
    m_heatmap = new views::HeadHeatmap(m_viewTabs);
    m_heatmap->setInspectionState(m_state);
    m_heatmap->setBackgroundPooling();  // long inputs: the GUI thread never pools a whole head
    m_maskView = new views::MaskView(m_viewTabs);
    m_maskView->setInspectionState(m_state);
    m_maskView->setBackgroundBuild();
    m_compareView = new views::CompareView(m_viewTabs);
    m_compareView->setInspectionState(m_state);
    m_compareView->setBackgroundWork(true);  // difference map and error summaries: O(n·m) per pane
    // Colour map, scale and pooling: persisted, and shared by the compare panes.
    views::HeatmapOptions heatmapOptions;
    heatmapOptions.colormap = settings.heatmapColormap;
    heatmapOptions.scale = views::colorScaleFromName(settings.heatmapScale);
    heatmapOptions.pooling = views::poolModeFromName(settings.heatmapPooling);
    m_heatmap->setOptions(heatmapOptions);
    auto shareOptions = [this](const views::HeatmapOptions& options) {
        for (int i = 0; i < views::CompareView::kMaxPanes; ++i) m_compareView->pane(i)->setOptions(options);
    };
    shareOptions(heatmapOptions);
    connect(m_heatmap, &views::HeadHeatmap::optionsChanged, this, shareOptions);
    m_viewTabs->addTab(m_heatmap, tr("Heatmap"));
    m_viewTabs->addTab(m_maskView, tr("Mask"));
    m_viewTabs->addTab(m_compareView, tr("Compare"));
    m_diagnostics = new views::DiagnosticsStack(m_viewTabs);
    m_diagnostics->setInspectionState(m_state);
    m_viewTabs->addTab(m_diagnostics, tr("Diagnostics"));
    m_viewTabs->setTabToolTip(static_cast<int>(View::Diagnostics),
                              tr("The variant's inner workings: approximation error against exact softmax, "
                                 "Linformer's spectrum, Reformer's LSH buckets, Routing's clusters, "
                                 "Transformer-XL's memory and receptive field"));
    connect(m_diagnostics->approximationView(), &views::ApproximationView::errorCurveRequested, this,
            &MainWindow::uiRunErrorCurve);
    // Transformer-XL's receptive field asks for the model's attention of every layer
    views::ReceptiveFieldView* field = m_diagnostics->receptiveFieldView();
    connect(field, &views::ReceptiveFieldView::bandsRequested, m_modelSource, &ModelSource::requestAttentionBands);
    connect(m_modelSource, &ModelSource::bandsReady, field, &views::ReceptiveFieldView::setModelBands);
    connect(m_modelSource, &ModelSource::bandsFailed, field, &views::ReceptiveFieldView::setBandsFailed);
    // the Star-Transformer's cycles, on the engine thread
    connect(m_diagnostics->starPlayer(), &views::StarPlayer::starRequested, this, [this](const engine::StarRequest& request) {
        m_runner->postTask([player = QPointer<views::StarPlayer>(m_diagnostics->starPlayer()), request](EngineBackend& backend) {
            auto pass = backend.runStar(request, {});
            toGui([player, request, pass = std::move(pass)] {
                if (!player) return;
                if (pass) player->setPass(request, pass.value());
                else player->setFailed(QString::fromStdString(pass.error().message));
            });
            return false;
        });
    });
    connect(m_diagnostics->starPlayer(), &views::StarPlayer::openModelRequested, this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Open Star-Transformer Model"));
        if (!folder.isEmpty()) m_diagnostics->starPlayer()->setModelFolder(folder);
    });
    m_tokenLinks = new views::TokenLinks(m_viewTabs);
    m_tokenLinks->setInspectionState(m_state);
    m_viewTabs->addTab(m_tokenLinks, tr("Links"));
    m_costView = new views::CostView(m_viewTabs);
    m_viewTabs->addTab(m_costView, tr("Cost"));
    m_viewTabs->setTabToolTip(static_cast<int>(View::Cost),
                              tr("Time, memory and FLOPs of the run per stage; scaling of time and memory with n"));
    uiConnectExplorerViews();
    buildAtlasTab();  // View::Atlas, after Cost
    m_routingView = new views::MoeRoutingView(m_viewTabs);
    m_viewTabs->addTab(m_routingView, tr("Experts"));
    m_viewTabs->setTabToolTip(static_cast<int>(View::Experts),
                              tr("Mixture-of-experts routing of the tokens (Switch top-1 or top-k): experts, capacity, "
                                 "dropped tokens, load and the balancing losses"));
    registerResultTabs();
    m_viewTabs->setTabToolTip(static_cast<int>(View::Links),
                              tr("Query tokens linked to key tokens, lines weighted by attention; hover a token to isolate it"));
    m_viewTabs->setTabToolTip(static_cast<int>(View::Heatmap), tr("The selected head's attention weights"));
    m_viewTabs->setTabToolTip(static_cast<int>(View::Mask),
                              tr("Which keys each query may attend and why, with a row panel for the hovered query"));
    m_viewTabs->setTabToolTip(static_cast<int>(View::Compare),
                              tr("The variant and the “Compare with” variant on the same Q, K, V, same head"));
    m_banner = new RandomProjectionBanner(right);
    connect(m_banner, &RandomProjectionBanner::useSampleModelRequested, this, &MainWindow::useSampleModel);
    rightLayout->addWidget(m_banner);
    rightLayout->addWidget(m_headsGrid);
    m_findBar = new TokenFindBar(right);
    rightLayout->addWidget(m_findBar);
    rightLayout->addWidget(m_viewTabs, 1);
    connect(m_viewTabs, &QTabWidget::currentChanged, this, &MainWindow::uiViewChanged);
    connect(m_maskView, &views::MaskView::cellHovered, m_state, &views::InspectionState::setHovered);
    connect(m_headsGrid, &views::HeadsGrid::headSelected, this, [this](int layer, int head) {
        m_state->setLayer(layer);
        m_state->setHead(head);
    });
    connect(m_heatmap, &views::HeadHeatmap::cellHovered, m_state, &views::InspectionState::setHovered);

    return right;
}

// Message (warnings, errors), progress, time and memory of the last run.
void MainWindow::buildStatusBar() {
    m_statusMessage = new views::ElidedLabel(this);  // plain text: engine messages may quote user input
    m_notices = new views::NoticesPanel(this);
    addDockWidget(Qt::BottomDockWidgetArea, m_notices);
    m_notices->hide();
    m_noticesButton = new QToolButton(this);
    m_noticesButton->setAutoRaise(true);
    m_noticesButton->setToolTip(tr("Every message of this session, whole (View ▸ Messages, Ctrl+Shift+L)"));
    m_noticesButton->setVisible(false);
    connect(m_noticesButton, &QToolButton::clicked, m_notices, [this] {
        m_notices->show();
        m_notices->raise();
    });
    connect(m_notices, &views::NoticesPanel::countChanged, this, [this](int count) {
        m_noticesButton->setText(tr("Messages (%1)").arg(count));
        m_noticesButton->setVisible(count > 0);
    });
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(220);
    m_progress->setVisible(false);
    m_timeLabel = new QLabel(this);
    m_timeLabel->setToolTip(tr("Wall time of the attention computation (no tokenizing, no projections)"));
    m_memoryLabel = new QLabel(this);
    m_memoryLabel->setToolTip(tr("Peak bytes of engine-owned buffers during the run"));
    for (QLabel* label : {m_statusMessage, m_timeLabel, m_memoryLabel}) label->setContentsMargins(6, 0, 6, 0);
    statusBar()->addWidget(m_statusMessage, 1);
    statusBar()->addPermanentWidget(m_noticesButton);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_timeLabel);
    statusBar()->addPermanentWidget(m_memoryLabel);
    buildFreshnessMark();
    m_progressDelay = new QTimer(this);
    m_progressDelay->setSingleShot(true);
    m_progressDelay->setInterval(kProgressDelayMs);
    connect(m_progressDelay, &QTimer::timeout, this, [this] {
        if (m_runner->isRunning()) m_progress->setVisible(true);
    });
}

}  // namespace attnscope::app
