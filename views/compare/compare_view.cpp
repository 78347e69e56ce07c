#include "views/compare/compare_view.h"

#include <attnscope/result_roles.h>
#include <attnscope/variant_catalog.h>

#include "views/data/background_job.h"
#include "views/compare/compare_difference_map.h"
#include "views/compare/compare_error_panel.h"
#include "views/diagnostics/categorical_palette.h"
#include "views/heatmap/head_heatmap.h"
#include "views/data/inspection_state.h"
#include "views/widgets/shared_color_bar.h"
#include "views/data/token_label.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

bool sameShape(const engine::AttentionResult& a, const engine::AttentionResult& b) { return engine::comparableShapes(a, b); }

QString shapeText(const engine::AttentionResult& r) {
    return QStringLiteral("%1 heads × %2 × %3").arg(r.heads).arg(r.n).arg(r.m);
}

}  // namespace

QString CompareView::paneName(int index) {
    return index >= 0 && index < kMaxPanes ? QString(QChar(u'A' + index)) : QStringLiteral("?");
}

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    // The panes get the whole tab (a 1366 × 768 screen leaves it about 950 × 420); the difference
    // map and the error table are pages of their own beside them. A figure puts all three on one
    // page (beginFigureLayout).
    m_stack = new QStackedWidget(this);
    m_pages = new QTabWidget(m_stack);
    m_pages->setDocumentMode(true);
    m_stack->addWidget(m_pages);
    m_figurePage = new QWidget(m_stack);
    auto* figureLayout = new QVBoxLayout(m_figurePage);
    figureLayout->setContentsMargins(0, 0, 0, 0);
    m_figureBottom = new QHBoxLayout;
    figureLayout->addLayout(m_figureBottom, 2);  // (the panes go above it while a figure is laid out)
    m_stack->addWidget(m_figurePage);
    layout->addWidget(m_stack, 1);

    // The panes in a grid of as many columns as gives them the largest cells (layoutPanes), on
    // one colour scale drawn once beside them.
    m_panesPage = new QWidget(m_pages);
    auto* panesRow = new QHBoxLayout(m_panesPage);
    panesRow->setContentsMargins(0, 0, 0, 0);
    panesRow->setSpacing(0);
    m_panesWidget = new QWidget(m_panesPage);
    m_panesWidget->installEventFilter(this);
    // One pane's room at least; the grid takes fewer columns when narrower (layoutPanes), so the
    // columns it has must not hold the tab (and the window) wide.
    m_panesWidget->setMinimumSize(kMinPaneSize);
    m_paneGrid = new QGridLayout(m_panesWidget);
    m_paneGrid->setContentsMargins(0, 0, 0, 0);
    m_paneGrid->setSpacing(4);
    for (int i = 0; i < kMaxPanes; ++i) {
        auto* state = new InspectionState(this);
        state->setResultIndex(i);
        auto* pane = new HeadHeatmap(m_panesWidget);
        pane->setInspectionState(state);
        pane->setTitlePrefix(QStringLiteral("%1: ").arg(paneName(i)));
        pane->setCompactTitle(true);  // the variant and what differs from its defaults; all of it on hover
        pane->setToolbarVisible(false);  // the main window shares the Heatmap tab's choices
        pane->setColorBarShown(false);   // one bar for all (m_sharedBar)
        pane->setVisible(i < kMinPanes);
        pane->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
        pane->setMinimumSize(kMinPaneSize);
        m_paneStates[static_cast<std::size_t>(i)] = state;
        m_panes[static_cast<std::size_t>(i)] = pane;
        connect(pane, &HeadHeatmap::cellHovered, this, &CompareView::hoverCell);
        connect(pane->plot(), &QCustomPlot::afterReplot, this, &CompareView::syncSharedBar);
    }
    panesRow->addWidget(m_panesWidget, 1);
    m_sharedBar = new SharedColorBar(m_panesPage);
    panesRow->addWidget(m_sharedBar);

    m_diffBox = new QWidget(m_pages);
    auto* diffLayout = new QVBoxLayout(m_diffBox);
    diffLayout->setContentsMargins(0, 0, 0, 0);
    auto* diffControls = new QHBoxLayout;
    diffControls->setContentsMargins(6, 2, 6, 0);
    m_minuendCombo = new QComboBox(m_diffBox);
    m_referenceCombo = new QComboBox(m_diffBox);
    m_minuendCombo->setToolTip(tr("The pane whose weights the difference map shows"));
    m_referenceCombo->setToolTip(tr("What is subtracted: another pane, or exact softmax when the run holds it"));
    // The choosers are controls, not part of a figure (the map's own title says what it shows).
    for (const QString& text : {tr("Difference"), QStringLiteral("−")}) {
        auto* label = new QLabel(text, m_diffBox);
        label->setProperty("attnscopeExportSkip", true);  // FigurePainter::kSkipProperty
        diffControls->addWidget(label);
        if (text != QStringLiteral("−")) diffControls->addWidget(m_minuendCombo, 1);
    }
    diffControls->addWidget(m_referenceCombo, 1);
    diffLayout->addLayout(diffControls);
    m_diffMap = new CompareDifferenceMap(m_diffBox);
    diffLayout->addWidget(m_diffMap, 1);
    m_errorPanel = new CompareErrorPanel(m_pages);
    addPageTabs();
    connect(m_diffMap, &CompareDifferenceMap::cellHovered, this, &CompareView::hoverCell);
    const auto onDiffChoice = [this] {
        setDifference(m_minuendCombo->currentData().toInt(), m_referenceCombo->currentData().toInt());
    };
    connect(m_minuendCombo, &QComboBox::currentIndexChanged, this, onDiffChoice);
    connect(m_referenceCombo, &QComboBox::currentIndexChanged, this, onDiffChoice);

    m_info = new QLabel(this);
    m_info->setProperty("attnscopeExportSkip", true);  // hover help, not part of a figure
    m_info->setTextFormat(Qt::PlainText);  // token text is untrusted
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_info->setContentsMargins(8, 2, 8, 4);
    m_info->setWordWrap(true);
    QFont infoFont = m_info->font();
    infoFont.setPointSizeF(infoFont.pointSizeF() + 1);
    m_info->setFont(infoFont);
    layout->addWidget(m_info);
    rebuildPanes();
}

QSize CompareView::beginFigureLayout(QSize windowSize, bool slide) {
    // A slide is what the tab shows; a figure is the panes with the difference map and the
    // error table below them, the panes keeping the room they have on screen.
    if (slide || m_stack->currentWidget() == m_figurePage) return windowSize;
    m_figurePageShown = m_pages->currentIndex();
    const int panesHeight = m_pages->currentWidget() == m_panesPage ? m_panesPage->height() : windowSize.height();
    auto* figureLayout = static_cast<QVBoxLayout*>(m_figurePage->layout());
    figureLayout->insertWidget(0, m_panesPage, 3);
    m_figureBottom->addWidget(m_diffBox, 1);
    m_figureBottom->addWidget(m_errorPanel, 1);
    m_panesPage->show();
    m_diffBox->show();
    m_errorPanel->show();
    m_stack->setCurrentWidget(m_figurePage);
    // Both brought up to date, waiting for what is computed in the background.
    differenceMap();
    errorPanel();
    // The difference map as wide as the whole error table beside it.
    const int tableWidth = m_errorPanel->setFigureMode(true);
    return {std::max(windowSize.width(), 2 * tableWidth + m_figureBottom->spacing()),
            std::max(windowSize.height(), panesHeight + kFigureBottomHeight)};
}

void CompareView::endFigureLayout() {
    if (m_stack->currentWidget() != m_figurePage) return;
    m_errorPanel->setFigureMode(false);
    m_figureBottom->removeWidget(m_diffBox);
    m_figureBottom->removeWidget(m_errorPanel);
    m_figurePage->layout()->removeWidget(m_panesPage);
    addPageTabs();
    m_pages->setCurrentIndex(m_figurePageShown);
    m_stack->setCurrentWidget(m_pages);
}

void CompareView::addPageTabs() {
    m_pages->insertTab(0, m_panesPage, tr("Side by side"));
    m_pages->insertTab(1, m_diffBox, tr("Difference map"));
    m_pages->insertTab(2, m_errorPanel, tr("Errors"));
    m_pages->setTabToolTip(0, tr("The panes side by side on one colour scale"));
    m_pages->setTabToolTip(1, tr("One pane minus another, or minus exact softmax"));
    m_pages->setTabToolTip(2, tr("Each pane against exact softmax (or the model's own attention): row L1, KL, kept mass"));
}

void CompareView::showPage(Page page) { m_pages->setCurrentIndex(static_cast<int>(page)); }

CompareView::Page CompareView::shownPage() const { return static_cast<Page>(m_pages->currentIndex()); }

void CompareView::syncSharedBar() {
    HeadHeatmap* first = m_panes[0];
    m_sharedBar->follow(first->colorScale(), hasComparison() && first->shownHead() >= 0);
    // The bar as tall as the first row's cells, level with them.
    const QRect cells = first->plot()->axisRect()->rect();
    const QPoint top = first->plot()->mapTo(m_panesPage, cells.topLeft());
    const QPoint barTop = m_sharedBar->mapTo(m_panesPage, QPoint(0, 0));
    m_sharedBar->alignWith(top.y() - barTop.y(), cells.height());
}

CompareView::~CompareView() = default;

int CompareView::shownPaneCount() const { return std::max(kMinPanes, m_refusal.isEmpty() ? m_paneCount : 0); }

void CompareView::layoutPanes() {
    const int count = shownPaneCount();
    const QSize room = m_panesWidget->size();
    // Each pane loses about this much to its title, axes and tick labels.
    constexpr int kChromeWidth = 70, kChromeHeight = 75;
    int best = 1;
    double bestSide = -1;
    // Never more columns than fit at the panes' minimum width.
    const int fitting = std::max(1, room.width() / (kMinPaneSize.width() + 4));
    for (int columns = 1; columns <= std::min(count, fitting); ++columns) {
        const int rows = (count + columns - 1) / columns;
        const double side = std::min(room.width() / columns - kChromeWidth, room.height() / rows - kChromeHeight);
        if (side > bestSide + 0.5) {
            bestSide = side;
            best = columns;
        }
    }
    if (best == m_paneColumns && count == m_laidOutPanes) return;
    m_paneColumns = best;
    m_laidOutPanes = count;
    for (HeadHeatmap* pane : m_panes) m_paneGrid->removeWidget(pane);
    for (int i = 0; i < kMaxPanes; ++i) m_paneGrid->addWidget(m_panes[static_cast<std::size_t>(i)], i / best, i % best);
    for (int c = 0; c < kMaxPanes; ++c) m_paneGrid->setColumnStretch(c, c < best ? 1 : 0);
    for (int r = 0; r < kMaxPanes; ++r) m_paneGrid->setRowStretch(r, r < (count + best - 1) / best ? 1 : 0);
}

bool CompareView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_panesWidget && event->type() == QEvent::Resize) layoutPanes();
    return QWidget::eventFilter(watched, event);
}

void CompareView::setInspectionState(InspectionState* state) {
    if (m_state) disconnect(m_state, nullptr, this, nullptr);
    m_state = state;
    if (state) connect(state, &InspectionState::headChanged, this, &CompareView::syncHead);
    syncHead();
}

void CompareView::setRunning(bool running) {
    if (running == m_running) return;
    m_running = running;
    for (HeadHeatmap* pane : m_panes) pane->setEmptyMessage(running ? tr("Computing…") : QString());
    if (!hasComparison()) {  // (a comparison shown meanwhile stays until the new one arrives)
        updateDifference();
        updateErrors();
    }
    updateInfo();
}

void CompareView::setProblem(const QString& problem) {
    m_problem = problem;
    updateInfo();
}

void CompareView::setResult(Run result) {
    if (result && m_nextExactNote) setExactNote(*m_nextExactNote);
    setResult(result, result ? m_nextPaneCount : 0);
}

void CompareView::setNextRun(int paneCount, const QString& exactNote) {
    m_nextPaneCount = paneCount;
    m_nextExactNote = exactNote;
}

void CompareView::finishBackgroundWork() {
    differenceMap();  // both wait for what is computed in the background
    errorPanel();
}

void CompareView::setResult(Run result, int paneCount) {
    m_problem.clear();
    m_result = std::move(result);
    m_query = m_key = -1;
    const int available = m_result ? static_cast<int>(m_result->results.size()) : 0;
    m_paneCount = std::min({paneCount > 0 ? paneCount : available, available, kMaxPanes});
    m_refusal.clear();
    m_exactIndex = -1;
    if (m_result) {
        const auto& results = m_result->results;
        // Side by side only what ran on the same Q, K, V: a hand-built or merged result with other
        // shapes is refused with a message instead of being drawn misaligned.
        for (int i = 1; i < m_paneCount && m_refusal.isEmpty(); ++i) {
            if (!sameShape(results[static_cast<std::size_t>(i)], results[0]))
                m_refusal = tr("Cannot compare: %1 (%2) has %3 but A (%4) has %5; compared variants must run on the "
                               "same input and Q, K, V.")
                                .arg(paneName(i), QString::fromStdString(results[static_cast<std::size_t>(i)].variantId),
                                     shapeText(results[static_cast<std::size_t>(i)]),
                                     QString::fromStdString(results[0].variantId), shapeText(results[0]));
        }
        // The reference: the model layer's own attention when the run has it, else exact softmax.
        if (const int reference = engine::referenceIndex(*m_result);
            reference >= 0 && sameShape(results[static_cast<std::size_t>(reference)], results[0]))
            m_exactIndex = reference;
        for (int i = 0; i < available && m_exactIndex < 0; ++i)
            if (const engine::VariantInfo* info = engine::infoOf(results[static_cast<std::size_t>(i)]);
                info && info->exact && sameShape(results[static_cast<std::size_t>(i)], results[0]))
                m_exactIndex = i;
    }
    rebuildPanes();
}

void CompareView::setVariantNames(const QHash<QString, QString>& idToName) {
    m_names = idToName;
    for (HeadHeatmap* pane : m_panes) pane->setVariantNames(idToName);
    updateSharedRange();
    updateDifferenceChoices();
    updateErrors();
}

void CompareView::setHighlightedTokens(const QVector<int>& tokens) {
    for (HeadHeatmap* pane : m_panes) pane->setHighlightedTokens(tokens);
}

void CompareView::setExactNote(const QString& note) {
    m_exactNote = note;
    updateErrors();
}

bool CompareView::hasComparison() const { return m_result && m_paneCount >= kMinPanes && m_refusal.isEmpty(); }

int CompareView::shownHead() const { return m_state ? m_state->head() : 0; }

void CompareView::rebuildPanes() {
    const bool ok = m_refusal.isEmpty();
    for (int i = 0; i < kMaxPanes; ++i) {
        HeadHeatmap* pane = m_panes[static_cast<std::size_t>(i)];
        const bool used = ok && i < m_paneCount;
        pane->setResult(used ? m_result : nullptr);
        // Two panes stay visible (empty) so the tab explains itself before the first compare run.
        pane->setVisible(i < std::max(kMinPanes, ok ? m_paneCount : 0));
    }
    layoutPanes();
    updateSharedRange();
    updateDifferenceChoices();
    updateErrors();
    updateInfo();
}

void CompareView::syncHead() {
    const int head = shownHead();
    m_query = m_key = -1;
    for (InspectionState* state : m_paneStates) state->setHead(head);
    for (HeadHeatmap* pane : m_panes) pane->setMarkedCell(-1, -1);
    m_diffMap->setMarkedCell(-1, -1);
    updateSharedRange();
    updateDifference();
    updateErrors();
    updateInfo();
}

void CompareView::updateSharedRange() {
    // One colour scale for every pane, or equal colours would not mean equal weights.
    float hi = 0.0f;
    for (int i = 0; i < m_paneCount; ++i) hi = std::max(hi, m_panes[static_cast<std::size_t>(i)]->matrixMax());
    for (HeadHeatmap* pane : m_panes) pane->setValueRange(0.0, hi > 0.0f ? hi : 0.0);
    syncSharedBar();
}

QString CompareView::paneLabel(int pane) const {
    const engine::AttentionResult* r = paneResult(pane);
    if (!r) return paneName(pane);
    return QStringLiteral("%1: %2").arg(paneName(pane), resultName(*m_result, static_cast<std::size_t>(pane), m_names));
}

void CompareView::updateDifferenceChoices() {
    const bool exactIsPane = m_exactIndex >= 0 && m_exactIndex < m_paneCount;
    {
        const QSignalBlocker blockMinuend(m_minuendCombo);
        const QSignalBlocker blockReference(m_referenceCombo);
        m_minuendCombo->clear();
        m_referenceCombo->clear();
        if (hasComparison()) {
            if (m_exactIndex >= 0 && !exactIsPane) m_referenceCombo->addItem(tr("exact softmax (full)"), kExactReference);
            for (int i = 0; i < m_paneCount; ++i) {
                m_minuendCombo->addItem(paneLabel(i), i);
                m_referenceCombo->addItem(paneLabel(i), i);
            }
        }
    }
    // Keep the user's choice while it still exists; otherwise the first pane that is not the
    // reference minus exact softmax (or pane A when there is none).
    const bool keep = m_diffChosen && m_referenceCombo->findData(m_diffReference) >= 0 &&
                      m_minuendCombo->findData(m_diffMinuend) >= 0;
    int reference = m_diffReference;
    int minuend = m_diffMinuend;
    if (!keep) {
        reference = m_exactIndex < 0 ? 0 : (exactIsPane ? m_exactIndex : kExactReference);
        minuend = 0;
        while (minuend < m_paneCount - 1 && minuend == reference) ++minuend;
    }
    applyDifference(minuend, reference);
}

void CompareView::setDifference(int minuend, int reference) {
    m_diffChosen = true;
    applyDifference(minuend, reference);
}

void CompareView::applyDifference(int minuend, int reference) {
    m_diffMinuend = minuend;
    m_diffReference = reference;
    {
        const QSignalBlocker blockMinuend(m_minuendCombo);
        const QSignalBlocker blockReference(m_referenceCombo);
        m_minuendCombo->setCurrentIndex(m_minuendCombo->findData(minuend));
        m_referenceCombo->setCurrentIndex(m_referenceCombo->findData(reference));
    }
    updateDifference();
}

const engine::AttentionResult* CompareView::paneResult(int pane) const {
    if (!m_result || !m_refusal.isEmpty() || pane < 0 || pane >= m_paneCount) return nullptr;
    return &m_result->results[static_cast<std::size_t>(pane)];
}

const engine::AttentionResult* CompareView::referenceResult(int choice) const {
    if (choice == kExactReference)
        return m_result && m_exactIndex >= 0 ? &m_result->results[static_cast<std::size_t>(m_exactIndex)] : nullptr;
    return paneResult(choice);
}

CompareDifferenceMap* CompareView::differenceMap() const {
    auto* self = const_cast<CompareView*>(this);
    self->refreshDerived();
    if (m_diffPending) {
        self->m_diffFuture.waitForFinished();
        self->m_diffPending = false;
        self->m_showDifference(self->m_diffFuture.result());
    }
    return m_diffMap;
}

CompareErrorPanel* CompareView::errorPanel() const {
    auto* self = const_cast<CompareView*>(this);
    self->refreshDerived();
    if (m_errorsPending) {
        self->m_errorFuture.waitForFinished();
        self->m_errorsPending = false;
        self->m_showErrors(self->m_errorFuture.result());
    }
    return m_errorPanel;
}

void CompareView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    refreshDerived();
}

void CompareView::refreshDerived() {
    if (!m_derivedStale) return;
    m_derivedStale = false;
    computeDifference();
    computeErrors();
}

// NOTE: a hidden tab still follows every head change; for n = 4096 the difference map and three
// error summaries cost about a second, so they wait until the view is shown.
void CompareView::updateDifference() {
    m_diffJob.drop();  // a difference still computing is for what was shown before
    m_diffPending = false;
    if (!isVisible()) {
        m_derivedStale = true;
        return;
    }
    computeDifference();
}

void CompareView::updateErrors() {
    m_errorJob.drop();  // a summary still computing is for what was shown before
    m_errorsPending = false;
    if (!isVisible()) {
        m_derivedStale = true;
        return;
    }
    computeErrors();
}

void CompareView::computeDifference() {
    const quint64 generation = m_diffJob.start();
    m_diffPending = false;
    if (!hasComparison()) {
        m_diffMap->clear(m_running                ? tr("Computing the comparison…")
                         : m_refusal.isEmpty() ? tr("The difference map needs two variants.")
                                               : tr("Not comparable."));
        return;
    }
    const engine::AttentionResult* variant = paneResult(m_diffMinuend);
    const engine::AttentionResult* reference = referenceResult(m_diffReference);
    const QString label = QStringLiteral("%1 − %2").arg(
        paneName(m_diffMinuend),
        m_diffReference == kExactReference ? QString::fromStdString(engine::exactReference().id) : paneName(m_diffReference));
    const int head = shownHead();
    m_showDifference = [this, head, label](CompareDifferenceMap::Cells cells) {
        m_diffMap->showCells(std::move(cells), head, label);
        m_diffMap->setMarkedCell(m_query, m_key);
    };
    if (!m_background || !variant || !reference) {
        m_showDifference(CompareDifferenceMap::computeCells(variant, reference, head, label));
        return;
    }
    // Plain data: the worker holds the result alive and reads the two results only.
    const auto index = [this](const engine::AttentionResult* r) {
        return static_cast<std::size_t>(r - m_result->results.data());
    };
    m_diffPending = true;
    m_diffFuture = runInBackground<CompareDifferenceMap::Cells>(
        this,
        [run = m_result, v = index(variant), r = index(reference), head, label] {
            return CompareDifferenceMap::computeCells(&run->results[v], &run->results[r], head, label);
        },
        [this, generation](CompareDifferenceMap::Cells cells) {
            if (!m_diffJob.isLatest(generation) || !m_diffPending) return;  // superseded, or waited for
            m_diffPending = false;
            m_showDifference(std::move(cells));
        });
}

QString CompareView::causalityMismatch() const {
    // Each pane's causality: its own `causal`, or always causal (Transformer-XL's memory is).
    QStringList causal, bidirectional;
    for (int i = 0; i < m_paneCount; ++i) {
        const engine::AttentionResult& r = m_result->results[static_cast<std::size_t>(i)];
        const auto it = r.params.find("causal");
        const engine::VariantInfo* info = engine::infoOf(r);
        bool isCausal = false;
        if (it != r.params.end()) isCausal = std::get<bool>(it->second);
        else if (!info || info->reasons.empty()) continue;
        else isCausal = std::find(info->reasons.begin(), info->reasons.end(), engine::PatternReason::Causal) != info->reasons.end() &&
                        std::find(info->reasons.begin(), info->reasons.end(), engine::PatternReason::Dense) == info->reasons.end();
        (isCausal ? causal : bidirectional) << paneName(i);
    }
    if (causal.isEmpty() || bidirectional.isEmpty()) return {};
    return tr("The panes differ in causality (%1 causal, %2 not): the errors mostly measure that.")
        .arg(causal.join(QStringLiteral(", ")), bidirectional.join(QStringLiteral(", ")));
}

ErrorSummary CompareView::errorSummary(int index) const {
    const engine::AttentionResult* variant = paneResult(index);
    const engine::AttentionResult* exact = referenceResult(kExactReference);
    if (!variant || !exact) {
        ErrorSummary none;
        none.message = !variant ? "no such pane" : "no exact softmax (full) in this result";
        none.meanL1 = none.maxL1 = none.meanKl = none.meanKeptMass = std::numeric_limits<double>::quiet_NaN();
        return none;
    }
    return summarizeAgainstExact(*variant, *exact, shownHead());
}

void CompareView::computeErrors() {
    const quint64 generation = m_errorJob.start();
    m_errorsPending = false;
    if (!hasComparison()) {
        m_errorPanel->clear(m_running ? tr("Computing the comparison…")
                                      : m_refusal.isEmpty() ? tr("The error summary needs a comparison.") : m_refusal);
        return;
    }
    if (m_exactIndex < 0) {
        m_errorPanel->clear(m_exactNote.isEmpty()
                                ? tr("No exact softmax (full) in this result, so no error summary: add full as a "
                                     "variant, or run from the Compare tab, which adds it when it fits the memory budget.")
                                : m_exactNote);
        return;
    }
    QVector<CompareErrorPanel::Entry> entries;
    for (int i = 0; i < m_paneCount; ++i)
        entries.push_back({paneLabel(i), CategoricalPalette::standard().color(i), {}});
    const bool alongside = m_exactIndex >= m_paneCount;
    const bool own = m_exactIndex == m_result->ownAttention;
    QString note = own ? tr("Against the model's own attention of layer %1 (%2), head %3.")
                             .arg(m_result->modelLayer)
                             .arg(paneLabel(m_exactIndex))
                             .arg(shownHead())
                       : tr("Against exact softmax (full%1) on the same Q, K, V, head %2.")
                             .arg(alongside ? tr(", run alongside for this summary") : QString())
                             .arg(shownHead());
    if (const QString mismatch = causalityMismatch(); !mismatch.isEmpty()) note += QLatin1Char(' ') + mismatch;
    m_showErrors = [this, entries, note](const QVector<ErrorSummary>& summaries) mutable {
        for (int i = 0; i < entries.size() && i < summaries.size(); ++i) entries[i].summary = summaries[i];
        m_errorPanel->setEntries(entries, note);
    };
    if (!m_background) {
        QVector<ErrorSummary> summaries;
        for (int i = 0; i < m_paneCount; ++i) summaries.push_back(errorSummary(i));
        m_showErrors(summaries);
        return;
    }
    // Plain data: the worker holds the result alive and reads nothing else.
    m_errorsPending = true;
    m_errorPanel->clear(m_exactIndex == m_result->ownAttention
                            ? tr("Computing the error summary against the model's own attention, head %1…").arg(shownHead())
                            : tr("Computing the error summary against exact softmax (full), head %1…").arg(shownHead()));
    m_errorFuture = runInBackground<QVector<ErrorSummary>>(
        this,
        [run = m_result, panes = m_paneCount, exact = m_exactIndex, head = shownHead()] {
            QVector<ErrorSummary> summaries;
            for (int i = 0; i < panes; ++i)
                summaries.push_back(summarizeAgainstExact(run->results[static_cast<std::size_t>(i)],
                                                          run->results[static_cast<std::size_t>(exact)], head));
            return summaries;
        },
        [this, generation](QVector<ErrorSummary> summaries) {
            if (!m_errorJob.isLatest(generation) || !m_errorsPending) return;  // superseded, or waited for
            m_errorsPending = false;
            m_showErrors(summaries);
        });
}

void CompareView::hoverCell(int query, int key) {
    if (query == m_query && key == m_key) return;
    m_query = query;
    m_key = key;
    for (HeadHeatmap* pane : m_panes) pane->setMarkedCell(query, key);
    m_diffMap->setMarkedCell(query, key);
    if (m_state) m_state->setHovered(query, key);
    updateInfo();
    Q_EMIT cellHovered(query, key);
}

int CompareView::hoveredQuery(int pane) const {
    return pane >= 0 && pane < kMaxPanes ? m_panes[static_cast<std::size_t>(pane)]->markedQuery() : -1;
}

int CompareView::hoveredKey(int pane) const {
    return pane >= 0 && pane < kMaxPanes ? m_panes[static_cast<std::size_t>(pane)]->markedKey() : -1;
}

double CompareView::shownValue(int pane) const {
    const engine::AttentionResult* r = paneResult(pane);
    const int head = r ? m_panes[static_cast<std::size_t>(pane)]->shownHead() : -1;
    if (!r || head < 0 || hoveredQuery(pane) < 0) return std::numeric_limits<double>::quiet_NaN();
    return r->weightAt(head, hoveredQuery(pane), hoveredKey(pane));
}

bool CompareView::shownInPattern(int pane) const {
    const engine::AttentionResult* r = paneResult(pane);
    const int head = r ? m_panes[static_cast<std::size_t>(pane)]->shownHead() : -1;
    if (!r || head < 0 || hoveredQuery(pane) < 0) return false;
    if (!r->weights || hoveredKey(pane) < 0 || hoveredQuery(pane) >= r->n || hoveredKey(pane) >= r->m) return false;
    return r->weights->tile(head, hoveredQuery(pane), hoveredQuery(pane) + 1, hoveredKey(pane), hoveredKey(pane) + 1,
                            /*withReasons=*/true)
               .multiplicity[0] > 0;
}

QString CompareView::describe(const QString& role, int index) const {
    const auto& tokens = m_result->input.tokens;
    if (index < 0 || index >= static_cast<int>(tokens.size())) return QStringLiteral("%1 %2").arg(role).arg(index);
    return QStringLiteral("%1 %2 '%3'").arg(role).arg(index).arg(tokenLabel(tokens[static_cast<std::size_t>(index)].text, 24));
}

QString CompareView::infoText() const { return m_info->text(); }

void CompareView::updateInfo() {
    if (!m_problem.isEmpty()) {
        m_info->setText(m_problem);
        return;
    }
    if (m_running) {
        m_info->setText(tr("Running the comparison: each pane fills in when the run ends (Esc cancels)."));
        return;
    }
    if (!m_result) {
        m_info->setText(tr("No result yet."));
        return;
    }
    if (!m_refusal.isEmpty()) {
        m_info->setText(m_refusal);
        return;
    }
    if (!hasComparison()) {
        m_info->setText(tr("Only one variant in this result: choose “Compare with” and run again (F5)."));
        return;
    }
    if (m_query < 0 || m_key < 0) {
        m_info->setText(tr("Hover a cell: the same (query, key) is marked in every pane and the difference map, on one "
                           "colour scale; blank cells are keys outside a pane's pattern. A pane's title lists what differs "
                           "from the variant's defaults: hover it for every parameter."));
        return;
    }
    QStringList values;
    for (int i = 0; i < m_paneCount; ++i) {
        const QString name = paneName(i);
        values << (shownInPattern(i) ? QStringLiteral("%1 = %2").arg(name).arg(shownValue(i), 0, 'f', 4)
                                     : tr("%1 = — (not in pattern)").arg(name));
    }
    m_info->setText(QStringLiteral("%1 → %2: %3")
                        .arg(describe(tr("query"), m_query), describe(tr("key"), m_key), values.join(QStringLiteral(", "))));
}

}  // namespace attnscope::views
