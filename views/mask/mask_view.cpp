#include "views/mask/mask_view.h"

#include "views/data/background_job.h"
#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/data/param_text.h"
#include "views/widgets/qcp.h"
#include "views/widgets/matrix_plot.h"
#include "views/data/reason_palette.h"
#include "views/data/title_wrap.h"
#include "views/data/token_label.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QLoggingCategory>
#include <QScrollArea>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnscope::views {

Q_LOGGING_CATEGORY(lcMask, "attnscope.views.mask", QtInfoMsg)

using engine::PatternReason;

namespace {

constexpr int kSidePanelWidth = 290;

QString reasonName(int code) {
    if (code == ReasonPalette::kExactZero) return QObject::tr("exact zero weight");
    return QString::fromLatin1(engine::patternReasonName(static_cast<PatternReason>(code)));
}

// One level per palette entry: value v (an integer code) is exactly entry v.
QCPColorGradient categoricalGradient() {
    const ReasonPalette& palette = ReasonPalette::standard();
    QMap<double, QColor> stops;
    const int last = ReasonPalette::kSize - 1;
    for (int i = 0; i <= last; ++i) stops.insert(static_cast<double>(i) / last, palette.color(i));
    QCPColorGradient gradient;
    gradient.setColorStops(stops);
    gradient.setLevelCount(ReasonPalette::kSize);
    gradient.setColorInterpolation(QCPColorGradient::ciRGB);
    return gradient;
}

QString swatch(const QColor& color) {
    return QStringLiteral("<span style='background-color:%1; color:%1'>&nbsp;&nbsp;&nbsp;&nbsp;</span>")
        .arg(color.name());
}

QString groupDigits(std::int64_t value) { return QLocale().toString(static_cast<qlonglong>(value)); }

}  // namespace

QCustomPlot* MaskView::plot() const { return m_plot; }

MaskView::MaskView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_plot = new MatrixPlot(MatrixPlot::ColorBar::None, this);
    layout->addWidget(m_plot, 1);
    const QColor fg = m_plot->foreground();
    m_title = m_plot->titleElement();
    m_colorMap = m_plot->colorMap();
    m_colorMap->setGradient(categoricalGradient());
    m_colorMap->setDataRange(QCPRange(0, ReasonPalette::kSize - 1));

    m_rowMarker = new QCPItemRect(m_plot);
    m_rowMarker->setPen(QPen(fg, 1.5));
    m_rowMarker->setBrush(Qt::NoBrush);
    m_rowMarker->setVisible(false);
    m_windowEdge = new QCPItemLine(m_plot);
    m_windowEdge->setPen(QPen(QColor(214, 39, 40), 2, Qt::DashLine));
    m_windowEdge->setVisible(false);

    m_plot->installEventFilter(this);
    m_plot->setFocusPolicy(Qt::StrongFocus);  // the arrow keys move a cell cursor
    m_pointer = new CellPointer(m_plot, this);
    m_pointer->setExtent([this] {
        const engine::AttentionResult* r = shownResult();
        return r && m_shownHead >= 0 ? CellPointer::Extent{r->n, r->m} : CellPointer::Extent{};
    });
    m_pointer->setCellText([this](int query, int key) { return hoverText(query, key); });
    connect(m_pointer, &CellPointer::cellHovered, this, [this](int query, int key) {
        if (query >= 0 && query != m_panelQuery) showQuery(query);
        Q_EMIT cellHovered(query, key);
    });
    connect(m_pointer, &CellPointer::cursorMoved, this, [this] { m_plot->replot(QCustomPlot::rpQueuedReplot); });
    connect(m_plot, &QCustomPlot::afterLayout, this, &MaskView::fitAxisRect);

    // ---- side panel: weight toggle, legend, row panel
    auto* side = new QWidget(this);
    side->setFixedWidth(kSidePanelWidth);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(6, 6, 6, 6);
    m_weightsToggle = new QCheckBox(tr("Weights inside the pattern"), side);
    m_weightsToggle->setToolTip(tr("Shade each allowed cell by its attention weight (opacity ∝ √(weight ÷ the head's "
                                   "largest weight)); off: every allowed cell in full colour"));
    sideLayout->addWidget(m_weightsToggle);
    m_legend = new QLabel(side);
    m_legend->setTextFormat(Qt::RichText);  // our own reason names only; no user text
    m_legend->setWordWrap(true);
    sideLayout->addWidget(m_legend);
    m_rowTitle = new QLabel(tr("<b>Row panel</b>"), side);
    sideLayout->addWidget(m_rowTitle);
    m_rowPanel = new QLabel(side);
    m_rowPanel->setTextFormat(Qt::RichText);  // token text is escaped where it is built
    m_rowPanel->setWordWrap(true);
    m_rowPanel->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_rowPanel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A row can allow hundreds of keys: the list scrolls inside the panel and never asks the
    // window for more height (a laptop screen has none to give).
    m_rowScroll = new QScrollArea(side);
    m_rowScroll->setWidget(m_rowPanel);
    m_rowScroll->setWidgetResizable(true);
    m_rowScroll->setFrameShape(QFrame::NoFrame);
    m_rowScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_rowScroll->setMinimumHeight(0);
    sideLayout->addWidget(m_rowScroll, 1);
    layout->addWidget(side);
    connect(m_weightsToggle, &QCheckBox::toggled, this, &MaskView::setShowWeights);
    rebuild();
}

MaskView::~MaskView() = default;

void MaskView::setInspectionState(InspectionState* state) {
    followInspectionState(this, m_state, state, [this] { rebuild(); });
}

void MaskView::setResult(Run result) {
    if (!result && m_panelQuery >= 0 && m_queryForNextRun < 0) m_queryForNextRun = m_panelQuery;
    if (result != m_result) ++m_resultSerial;
    m_result = std::move(result);
    rebuild();
    if (!m_result) return;
    if (m_queryForNextRun >= 0 && m_queryForNextRun < m_result->n) showQuery(m_queryForNextRun);
    m_queryForNextRun = -1;
}

void MaskView::setQueryForNextRun(int query) {
    showQuery(-1);
    m_queryForNextRun = query;
}

void MaskView::setBackgroundBuild(std::int64_t minCells) { m_backgroundCells = std::max<std::int64_t>(minCells, 0); }

void MaskView::setVariantNames(const QHash<QString, QString>& idToName) {
    m_variantNames = idToName;
    rebuild();
}

bool MaskView::showWeights() const { return m_weightsToggle->isChecked(); }

void MaskView::setShowWeights(bool on) {
    if (m_weightsToggle->isChecked() != on) {
        m_weightsToggle->setChecked(on);  // re-enters through toggled()
        return;
    }
    redrawCells();
    updateLegend();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

const engine::AttentionResult* MaskView::shownResult() const {
    if (!m_result) return nullptr;
    const int index = m_state ? m_state->resultIndex() : 0;
    if (index < 0 || index >= static_cast<int>(m_result->results.size())) return nullptr;
    return &m_result->results[static_cast<std::size_t>(index)];
}

void MaskView::rebuild() {
    m_pointer->clearHover();
    const engine::AttentionResult* r = shownResult();
    const int head = m_state ? m_state->head() : 0;
    if (!r || head < 0 || head >= r->heads || r->n <= 0 || r->m <= 0) {
        m_building = false;
        m_shownHead = -1;
        m_matrix = MaskMatrix();
        m_colorMap->data()->clear();
        m_colorMap->setVisible(false);
        m_title->setText(m_result ? tr("No head to show") : tr("No result yet: press Run (F5)"));
        showEmptyPlot(m_plot, true);
        m_legendReasons.clear();
        m_legend->clear();
        showQuery(-1);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    if (r->n * r->m > m_backgroundCells) {
        startBuild(head);
        return;
    }
    m_building = false;
    showHead(head, MaskMatrix::fromResult(*r, head));
}

void MaskView::startBuild(int head) {
    const int index = m_state ? m_state->resultIndex() : 0;
    if (m_building && m_buildingHead == head && m_buildingIndex == index && m_buildingSerial == m_resultSerial) return;
    const quint64 generation = m_buildJob.start();
    m_building = true;
    m_buildingHead = head;
    m_buildingIndex = index;
    m_buildingSerial = m_resultSerial;
    // MaskMatrix is plain data: the worker holds the result alive and reads nothing else.
    m_buildFuture = runInBackground<std::shared_ptr<MaskMatrix>>(
        this,
        [run = m_result, index, head] {
            return std::make_shared<MaskMatrix>(
                MaskMatrix::fromResult(run->results[static_cast<std::size_t>(index)], head));
        },
        [this, generation, head](std::shared_ptr<MaskMatrix> matrix) {
            if (!m_buildJob.isLatest(generation) || !m_building) return;  // superseded, or waited for
            m_building = false;
            if (matrix) showHead(head, std::move(*matrix));
            Q_EMIT headBuilt(head);
        });
    // The previous picture stays while it belongs to this result; a new result starts empty.
    if (m_shownSerial != m_resultSerial) {
        m_shownHead = -1;
        m_matrix = MaskMatrix();
        m_colorMap->setVisible(false);
        m_legendReasons.clear();
        m_legend->clear();
        m_rowMarker->setVisible(false);
        m_rowPanelPlain.clear();
        m_rowPanel->clear();
    }
    m_title->setText(tr("Classifying the keys of head %1…").arg(head));
    showEmptyPlot(m_plot, m_shownHead < 0);  // (the previous head's picture stays while it is this result's)
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void MaskView::finishBuilding() {
    if (!m_building) return;
    m_buildFuture.waitForFinished();
    m_building = false;
    if (const std::shared_ptr<MaskMatrix> matrix = m_buildFuture.result()) showHead(m_buildingHead, std::move(*matrix));
}

void MaskView::showHead(int head, MaskMatrix matrix) {
    const engine::AttentionResult* r = shownResult();
    if (!r) return;
    m_shownHead = head;
    m_shownSerial = m_resultSerial;
    m_matrix = std::move(matrix);
    showEmptyPlot(m_plot, false);
    redrawCells();
    m_colorMap->setVisible(true);
    updateAxes(r->n, r->m);
    updateLegend();
    m_highlight.show(m_plot, m_highlighted, r->n, r->m);
    showModelWindow(r->n);

    const QString id = QString::fromStdString(r->variantId);
    const QString name = resultName(*m_result, static_cast<std::size_t>(m_state ? m_state->resultIndex() : 0), m_variantNames);
    QStringList params;
    if ((m_state ? m_state->resultIndex() : 0) == m_result->ownAttention)
        params << QString::fromStdString(m_result->ownAttentionSummary);  // the own attention, in words
    else
        for (const auto& [key, value] : r->params) params << paramAssignment(key, value);
    const QString tokenizer = tokenUnit(m_result->input);
    QString text = tr("Pattern of %1 — head %2 of %3 — n = %4 %5").arg(name).arg(head).arg(r->heads).arg(r->n).arg(tokenizer);
    if (r->m != r->n) text += tr(", m = %1 keys").arg(r->m);
    if (const QString source = qkvSourceText(*m_result); !source.isEmpty()) text += QStringLiteral(" — ") + source;
    if (!params.isEmpty()) text += QLatin1Char('\n') + params.join(QStringLiteral(", "));
    m_fullTitle = text;
    // Wrapped to the plot's width (re-wrapped on resize): a one-line title set the plot's, and
    // so the window's, minimum width.
    m_title->setText(wrapTitle(text, m_title->font(), m_plot->width() - 12));
    // Keep the row panel on its query across heads, so heads can be compared row by row.
    showQuery(m_panelQuery < r->n ? m_panelQuery : -1);
    qCDebug(lcMask) << "showing head" << head << "of" << id << m_matrix.rows() << "x" << m_matrix.cols();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void MaskView::showModelWindow(std::int64_t n) {
    // The layer's own window: keys j >= i - W + 1, so its far edge runs along j = i - W + 1 (at
    // the cells' left edges, from query W - 1 at key 0 to the last query).
    const std::int64_t w = m_result ? m_result->modelWindow : 0;
    m_windowEdge->setVisible(w > 0 && w < n);
    if (w <= 0 || w >= n) return;
    m_windowEdge->start->setCoords(-0.5, static_cast<double>(w - 1) - 0.5);
    m_windowEdge->end->setCoords(static_cast<double>(n - w) + 0.5, static_cast<double>(n - 1) + 0.5);
}

void MaskView::redrawCells() {
    QCPColorMapData* data = m_colorMap->data();
    const int rows = m_matrix.rows(), cols = m_matrix.cols(), f = m_matrix.poolFactor();
    if (m_shownHead < 0 || rows == 0 || cols == 0) return;
    const double offset = (f - 1) / 2.0;  // cell centres on input indices (block middles when pooled)
    data->setSize(cols, rows);
    data->setRange(QCPRange(offset, (cols - 1) * f + offset), QCPRange(offset, (rows - 1) * f + offset));
    data->setAlpha(0, 0, 255);  // allocates the alpha map; every cell is written below
    double* cells = ColorMapDataAccess::cells(*data);
    unsigned char* alpha = ColorMapDataAccess::alpha(*data);
    if (!cells || !alpha) return;
    const bool weights = showWeights() && m_matrix.hasWeights();
    const double maxWeight = m_matrix.maxWeight() > 0 ? m_matrix.maxWeight() : 1.0;
    for (int q = 0; q < rows; ++q) {
        for (int k = 0; k < cols; ++k) {
            const std::size_t i = static_cast<std::size_t>(q) * cols + k;
            const std::uint8_t reason = m_matrix.reasonAt(q, k);
            alpha[i] = 255;
            if (reason == MaskMatrix::kBlank) {
                cells[i] = 0;
                alpha[i] = 0;
                continue;
            }
            if (!weights) {
                cells[i] = reason;
                continue;
            }
            const float w = m_matrix.weightAt(q, k);
            if (w == 0.0f) {  // exact zeros (entmax, top-k, padded keys) get their own colour
                cells[i] = ReasonPalette::kExactZero;
                continue;
            }
            cells[i] = reason;
            const double t = std::clamp(static_cast<double>(w) / maxWeight, 0.0, 1.0);
            // √ spreads the many small weights of wide rows over the visible range.
            alpha[i] = static_cast<unsigned char>(
                std::lround(255 * (kMinWeightOpacity + (1 - kMinWeightOpacity) * std::sqrt(t))));
        }
    }
    ColorMapDataAccess::markModified(*data, QCPRange(0, engine::kPatternReasonCount));
}

void MaskView::updateLegend() {
    m_legendReasons.clear();
    if (m_shownHead < 0) {
        m_legend->clear();
        return;
    }
    const ReasonPalette& palette = ReasonPalette::standard();
    QString html = tr("<b>Why a key is allowed</b><table cellspacing='2'>");
    const auto& counts = m_matrix.reasonCounts();
    for (int code = 0; code < engine::kPatternReasonCount; ++code) {
        if (counts[static_cast<std::size_t>(code)] == 0) continue;
        m_legendReasons << reasonName(code);
        html += QStringLiteral("<tr><td>%1</td><td>%2</td><td align='right'>%3</td></tr>")
                    .arg(swatch(palette.color(code)), reasonName(code), groupDigits(counts[static_cast<std::size_t>(code)]));
    }
    const bool weights = showWeights() && m_matrix.hasWeights();
    if (weights && m_matrix.hasExactZeros())
        html += QStringLiteral("<tr><td>%1</td><td>%2</td><td></td></tr>")
                    .arg(swatch(palette.color(ReasonPalette::kExactZero)), reasonName(ReasonPalette::kExactZero));
    html += QStringLiteral("<tr><td>%1</td><td>%2</td><td></td></tr>")
                .arg(QStringLiteral("<span style='color:gray'>□</span>"), tr("not in the pattern (blank)"));
    if (m_result && m_result->modelWindow > 0)
        html += QStringLiteral("<tr><td><span style='color:#d62728'>╌</span></td><td>%1</td><td></td></tr>")
                    .arg(tr("the model's own window on this layer: keys i − %1 … i").arg(m_result->modelWindow - 1));
    html += QStringLiteral("</table>");
    QStringList notes;
    notes << tr("Numbers: entries in this head (a key listed twice counts twice).");
    if (m_matrix.poolFactor() > 1)
        notes << tr("Pooled %1×%1: a cell shows the rarest reason among its entries.").arg(m_matrix.poolFactor());
    if (weights)
        notes << tr("Opacity ∝ √(weight ÷ %1), the head's largest weight; at least %2 %.")
                     .arg(static_cast<double>(m_matrix.maxWeight()), 0, 'g', 3)
                     .arg(std::lround(kMinWeightOpacity * 100));
    else if (showWeights())
        notes << tr("This result has no weights.");
    html += QStringLiteral("<p style='color:gray'>%1</p>").arg(notes.join(QStringLiteral("<br>")));
    m_legend->setText(html);
}

QString MaskView::legendText() const { return m_legend->text(); }

bool MaskView::modelWindowShown() const { return m_windowEdge->visible(); }

void MaskView::updateAxes(std::int64_t n, std::int64_t m) {
    const auto tokens = static_cast<std::int64_t>(m_result->input.tokens.size());
    const bool tokenAxes = poolFactor() == 1 && n <= kMaxTokenTicks && m <= kMaxTokenTicks + 1 && tokens == n;
    QFont tickFont = font();
    m_tokenAxes = tokenAxes;
    m_labelledRectSize = m_plot->axisRect()->rect().size();
    if (tokenAxes) {
        tickFont.setPointSizeF(std::max(7.0, std::min(9.0, 9.0 - (n - 32) / 16.0)));
        m_plot->xAxis->setTickLabelFont(tickFont);
        m_plot->yAxis->setTickLabelFont(tickFont);
        setTokenTicks(n, m);
        m_plot->xAxis->setTickLabelRotation(-90);
        m_plot->xAxis->setLabel(tr("key token"));
        m_plot->yAxis->setLabel(tr("query token"));
    } else {
        auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
        ticker->setTickStep(1.0);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        m_plot->xAxis->setTicker(ticker);
        m_plot->yAxis->setTicker(ticker);
        m_plot->xAxis->setTickLabelRotation(0);
        m_plot->xAxis->setLabel(tr("key index"));
        m_plot->yAxis->setLabel(tr("query index"));
    }
    m_plot->xAxis->setSubTicks(false);
    m_plot->yAxis->setSubTicks(false);
    m_plot->xAxis->setTickLabelFont(tickFont);
    m_plot->yAxis->setTickLabelFont(tickFont);
    m_plot->xAxis->setRange(-0.5, static_cast<double>(m) - 0.5);
    m_plot->yAxis->setRange(-0.5, static_cast<double>(n) - 0.5);
}

void MaskView::setTokenTicks(std::int64_t n, std::int64_t m) {
    // Every label whose line has room (47 characters' labels overlapped on a laptop screen);
    // otherwise every step-th, at multiples of the step.
    const QRect rect = m_plot->axisRect()->rect();
    const QFont& font = m_plot->xAxis->tickLabelFont();
    const std::int64_t keyStep = tokenLabelStep(rect.width(), static_cast<double>(m), font);
    const std::int64_t queryStep = tokenLabelStep(rect.height(), static_cast<double>(n), font);
    auto yTicker = QSharedPointer<QCPAxisTickerText>::create();
    auto xTicker = QSharedPointer<QCPAxisTickerText>::create();
    for (std::int64_t i = 0; i < n; i += queryStep) yTicker->addTick(static_cast<double>(i), tokenText(i));
    for (std::int64_t j = 0; j < m; j += keyStep) xTicker->addTick(static_cast<double>(j), tokenText(j));
    m_plot->xAxis->setTicker(xTicker);
    m_plot->yAxis->setTicker(yTicker);
}

void MaskView::fitAxisRect() {
    const engine::AttentionResult* r = shownResult();
    const bool shown = r && m_shownHead >= 0;
    m_plot->fitCells(shown ? r->n : 0, shown ? r->m : 0);
    if (!shown || !m_tokenAxes) return;
    const QSize rect = m_plot->axisRect()->rect().size();
    if (rect == m_labelledRectSize) return;
    m_labelledRectSize = rect;
    setTokenTicks(r->n, r->m);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QSize MaskView::dataSize() const {
    if (m_shownHead < 0) return {};
    return {m_colorMap->data()->keySize(), m_colorMap->data()->valueSize()};
}

int MaskView::displayedReason(int query, int key) const {
    const QSize size = dataSize();
    const int f = poolFactor();
    if (query < 0 || key < 0 || query / f >= size.height() || key / f >= size.width()) return -1;
    auto* data = m_colorMap->data();
    if (data->alpha(key / f, query / f) == 0) return -1;
    return static_cast<int>(std::lround(data->cell(key / f, query / f)));
}

int MaskView::displayedAlpha(int query, int key) const {
    const QSize size = dataSize();
    const int f = poolFactor();
    if (query < 0 || key < 0 || query / f >= size.height() || key / f >= size.width()) return 0;
    return m_colorMap->data()->alpha(key / f, query / f);
}

MaskRowSummary MaskView::rowSummary(int query) const {
    const engine::AttentionResult* r = shownResult();
    if (!r || m_shownHead < 0) return {};
    return MaskMatrix::rowSummary(*r, m_shownHead, query, &m_matrix.reasonCounts());
}

QString MaskView::tokenText(std::int64_t index, int maxChars) const {
    if (!m_result) return {};
    const auto& tokens = m_result->input.tokens;
    if (index >= 0 && index < static_cast<std::int64_t>(tokens.size()))
        return tokenLabel(tokens[static_cast<std::size_t>(index)].text, maxChars);
    // Star's relay is key column n (VARIANTS.md); other extra keys go by index.
    const engine::AttentionResult* r = shownResult();
    if (r && index == r->n && r->m == r->n + 1 &&
        m_matrix.reasonCounts()[static_cast<std::size_t>(PatternReason::Relay)] > 0)
        return tr("⟨relay⟩");
    return QString::number(index);
}

QString MaskView::describe(const QString& role, std::int64_t index) const {
    const QString token = tokenText(index);
    return token.isEmpty() || token == QString::number(index) ? QStringLiteral("%1 %2").arg(role).arg(index)
                                                              : QStringLiteral("%1 %2 '%3'").arg(role).arg(index).arg(token);
}

QSize MaskView::beginFigureLayout(QSize windowSize, bool /*slide*/) {
    // A row panel that only asks for a hover is window help, not part of the figure.
    m_rowTitle->setVisible(m_panelQuery >= 0);
    m_rowScroll->setVisible(m_panelQuery >= 0);
    return windowSize;
}

void MaskView::endFigureLayout() {
    m_rowTitle->setVisible(true);
    m_rowScroll->setVisible(true);
}

void MaskView::showQuery(int query) {
    if (m_building) {
        m_panelQuery = query;  // shown with the head being classified (showHead)
        return;
    }
    const MaskRowSummary s = rowSummary(query);
    m_panelQuery = s.query < 0 ? -1 : static_cast<int>(s.query);
    const engine::AttentionResult* r = shownResult();
    if (m_panelQuery < 0 || !r) {
        m_rowMarker->setVisible(false);
        m_rowPanelPlain = m_shownHead < 0 ? QString() : tr("Hover a cell to see its query's allowed keys.");
        m_rowPanel->setText(m_rowPanelPlain.toHtmlEscaped());
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    m_rowMarker->topLeft->setCoords(-0.5, query - 0.5);
    m_rowMarker->bottomRight->setCoords(static_cast<double>(r->m) - 0.5, query + 0.5);
    m_rowMarker->setVisible(true);

    // Plain text for tests and copying; HTML (tokens escaped) for the panel.
    const int keys = static_cast<int>(s.allowedKeys.size());
    const auto duplicates = s.entries - keys;
    QStringList plain, html;
    const QString head = describe(tr("query"), query);
    plain << tr("%1, head %2").arg(head).arg(m_shownHead);
    html << QStringLiteral("<b>%1</b>, head %2").arg(head.toHtmlEscaped()).arg(m_shownHead);
    QString allowed = tr("allowed keys: %1").arg(keys);
    if (duplicates > 0) allowed += tr(" (%1 entries: duplicates count twice)").arg(s.entries);
    plain << allowed;
    if (s.rowStatus == 1) plain << tr("no admissible key: the row is all zero");
    if (s.rowStatus == 2) plain << tr("padded query: the row is zeroed");
    if (s.hasWeights) {
        plain << tr("exact zeros: %1 of %2").arg(s.exactZeros).arg(keys);
        QString entropy = tr("entropy: %1 nats").arg(s.entropy, 0, 'f', 4);
        if (keys > 1) entropy += tr(" (max ln %1 = %2)").arg(keys).arg(std::log(static_cast<double>(keys)), 0, 'f', 4);
        plain << entropy;
    } else {
        plain << tr("no weights: no zeros or entropy");
    }
    for (int i = 1; i < plain.size(); ++i) html << plain[i].toHtmlEscaped();

    const ReasonPalette& palette = ReasonPalette::standard();
    QStringList keyLines, keyHtml;
    auto addKey = [&](int idx) {
        const int j = s.allowedKeys[static_cast<std::size_t>(idx)];
        QString line = QStringLiteral("%1 %2").arg(j).arg(tokenText(j, 16));
        if (tokenText(j, 16) == QString::number(j)) line = QString::number(j);
        const auto reason = s.reasons[static_cast<std::size_t>(idx)];
        QString tail = QStringLiteral("  %1").arg(QString::fromLatin1(engine::patternReasonName(reason)));
        if (s.hasWeights) tail += QStringLiteral("  %1").arg(s.weights[static_cast<std::size_t>(idx)], 0, 'f', 4);
        if (s.multiplicity[static_cast<std::size_t>(idx)] > 1) tail += tr("  ×%1").arg(s.multiplicity[static_cast<std::size_t>(idx)]);
        keyLines << line + tail;
        keyHtml << QStringLiteral("<span style='color:%1'>■</span> %2<span style='color:gray'>%3</span>")
                       .arg(palette.color(reason).name(), line.toHtmlEscaped(), tail.toHtmlEscaped());
    };
    if (keys <= kMaxListedKeys) {
        for (int i = 0; i < keys; ++i) addKey(i);
    } else {
        for (int i = 0; i < kMaxListedKeys / 2; ++i) addKey(i);
        const QString more = tr("… %1 more keys …").arg(keys - kMaxListedKeys);
        keyLines << more;
        keyHtml << QStringLiteral("<span style='color:gray'>%1</span>").arg(more.toHtmlEscaped());
        for (int i = keys - kMaxListedKeys / 2; i < keys; ++i) addKey(i);
    }
    m_rowPanelPlain = plain.join(QLatin1Char('\n')) + QLatin1Char('\n') + keyLines.join(QLatin1Char('\n'));
    m_rowPanel->setText(html.join(QStringLiteral("<br>")) + QStringLiteral("<p style='white-space:pre'>") +
                        keyHtml.join(QStringLiteral("<br>")) + QStringLiteral("</p>"));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString MaskView::rowPanelText() const { return m_rowPanelPlain; }

QString MaskView::title() const { return m_shownHead >= 0 && !m_fullTitle.isEmpty() ? m_fullTitle : m_title->text(); }

QString MaskView::hoverText(int query, int key) const {
    const engine::AttentionResult* r = shownResult();
    if (!r || m_shownHead < 0 || query < 0 || key < 0 || query >= r->n || key >= r->m) return {};
    const int f = poolFactor();
    const std::uint8_t reason = m_matrix.reasonAt(query / f, key / f);
    if (f > 1) {
        const int q0 = query / f * f, k0 = key / f * f;
        const int q1 = static_cast<int>(std::min<std::int64_t>(q0 + f, r->n)) - 1;
        const int k1 = static_cast<int>(std::min<std::int64_t>(k0 + f, r->m)) - 1;
        if (reason == MaskMatrix::kBlank) return tr("queries %1–%2 → keys %3–%4: not in the pattern").arg(q0).arg(q1).arg(k0).arg(k1);
        return tr("queries %1–%2 → keys %3–%4: %5 (rarest reason in the block), max weight %6")
            .arg(q0).arg(q1).arg(k0).arg(k1)
            .arg(reasonName(reason))
            .arg(m_matrix.weightAt(query / f, key / f), 0, 'f', 4);
    }
    const QString cell = QStringLiteral("%1 → %2").arg(describe(tr("query"), query), describe(tr("key"), key));
    if (reason == MaskMatrix::kBlank) return tr("%1: not in the pattern").arg(cell);
    QString text = QStringLiteral("%1: %2").arg(cell, reasonName(reason));
    if (m_matrix.hasWeights()) text += tr(", weight %1").arg(m_matrix.weightAt(query, key), 0, 'f', 4);
    return text;
}

void MaskView::setHighlightedTokens(const QVector<int>& tokens) {
    m_highlighted = tokens;
    const engine::AttentionResult* r = shownResult();
    const bool shown = r && m_shownHead >= 0;
    m_highlight.show(m_plot, shown ? tokens : QVector<int>{}, shown ? r->n : 0, shown ? r->m : 0);
}

void MaskView::moveCursorTo(int query, int key) { m_pointer->moveCursorTo(query, key); }

bool MaskView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_plot && event->type() == QEvent::Resize && !m_fullTitle.isEmpty() && m_shownHead >= 0)
        m_title->setText(wrapTitle(m_fullTitle, m_title->font(), m_plot->width() - 12));
    return QWidget::eventFilter(watched, event);
}

}  // namespace attnscope::views
