#include "views/links/token_links.h"

#include <attnscope/weight_overview.h>

#include "views/widgets/figure_painter.h"
#include "views/data/inspection_state.h"
#include "views/data/token_label.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QSlider>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>

namespace attnscope::views {

namespace {
constexpr int kLabelWidth = 120;
constexpr int kMargin = 8;
constexpr int kMinimapWidth = 64;
constexpr double kMaxRowHeight = 32;
constexpr int kMinColumnWidth = 56;  // horizontal layout: room for a short word per token
// The threshold slider: 0 is "every link", 1..1000 span 0.001..1 of the largest weight on a log
// scale (on long inputs the weights worth drawing are a few thousandths of the largest).
constexpr int kSliderSteps = 1000;
double sliderFraction(int value) { return value <= 0 ? 0.0 : std::pow(10.0, -3.0 + 3.0 * value / kSliderSteps); }
int sliderValue(double fraction) {
    return fraction <= 0 ? 0 : std::clamp(static_cast<int>(std::lround((std::log10(fraction) + 3.0) / 3.0 * kSliderSteps)), 1, kSliderSteps);
}
const QColor kLinkColor(31, 119, 180);
const QColor kIsolatedColor(214, 39, 40);
const QColor kFoundColor(230, 120, 0);  // Find Token's orange, as the matrix views' bands
}  // namespace

// Draws the two token columns and the links; hovering a token isolates its links.
class TokenLinkCanvas : public QWidget {
public:
    explicit TokenLinkCanvas(TokenLinks* owner) : QWidget(owner), m_owner(owner) {
        setMouseTracking(true);
        setMinimumSize(320, 240);
    }

    // Rows of the shown tokens: spread over the height (a short text used to sit in the top of a
    // 48-row grid), at most kMaxRowHeight apart.
    double rowHeight() const {
        return std::min(kMaxRowHeight, (height() - 2.0 * kMargin) / std::max(1, m_owner->shownSlots()));
    }

    // Position of token `index` (window-relative slot) on the query or key side.
    QPointF anchor(int slot, bool querySide) const {
        const int window = std::max(1, m_owner->shownSlots());
        if (!m_owner->m_horizontal) {
            const double y = kMargin + (slot + 0.5) * rowHeight();
            return {querySide ? kMargin + kLabelWidth + 4.0 : width() - kMargin - kLabelWidth - 4.0, y};
        }
        const double colWidth = (width() - 2.0 * kMargin) / window;
        const double x = kMargin + (slot + 0.5) * colWidth;
        return {x, querySide ? kMargin + 28.0 : height() - kMargin - 28.0};
    }

    // The token under the pointer: (index, querySide), index -1 when none.
    std::pair<int, bool> tokenAt(const QPointF& p) const {
        const int window = std::max(1, m_owner->shownSlots());
        int slot = -1;
        bool querySide = false;
        if (!m_owner->m_horizontal) {
            const double rowHeight = this->rowHeight();
            slot = static_cast<int>(std::floor((p.y() - kMargin) / rowHeight));
            if (p.x() < kMargin + kLabelWidth + 8) querySide = true;
            else if (p.x() <= width() - kMargin - kLabelWidth - 8) return {-1, false};
        } else {
            const double colWidth = (width() - 2.0 * kMargin) / window;
            slot = static_cast<int>(std::floor((p.x() - kMargin) / colWidth));
            if (p.y() < kMargin + 32) querySide = true;
            else if (p.y() <= height() - kMargin - 32) return {-1, false};
        }
        const int index = m_owner->m_first + slot;
        if (slot < 0 || slot >= window || index >= m_owner->tokenCount()) return {-1, false};
        return {index, querySide};
    }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter painter(this);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.fillRect(rect(), palette().base());
        const int count = m_owner->tokenCount();
        if (count == 0) {
            painter.setPen(palette().text().color());
            painter.drawText(rect(), Qt::AlignCenter, tr("Run a variant to see its token links."));
            return;
        }
        const float maxWeight = std::max(m_owner->m_headMax, 1e-12f);
        for (const TokenLink& link : m_owner->visibleLinks()) {
            const double strength = std::clamp(link.weight / maxWeight, 0.0f, 1.0f);
            QColor color = (m_owner->m_isolatedQuery >= 0 || m_owner->m_isolatedKey >= 0) ? kIsolatedColor : kLinkColor;
            color.setAlphaF(0.15 + 0.85 * strength);
            painter.setPen(QPen(color, 0.5 + 3.0 * strength));
            painter.drawLine(anchor(link.query - m_owner->m_first, true), anchor(link.key - m_owner->m_first, false));
        }
        const int last = std::min(count, m_owner->m_first + m_owner->m_window);
        QFont font = painter.font();
        for (int index = m_owner->m_first; index < last; ++index) {
            const int slot = index - m_owner->m_first;
            for (bool querySide : {true, false}) {
                const bool isolated = querySide ? index == m_owner->m_isolatedQuery : index == m_owner->m_isolatedKey;
                const bool found = m_owner->m_highlighted.contains(index);
                font.setBold(isolated || found);
                painter.setFont(font);
                painter.setPen(isolated ? kIsolatedColor : found ? kFoundColor : palette().text().color());
                const QPointF a = anchor(slot, querySide);
                const QString text = m_owner->tokenText(index);
                if (!m_owner->m_horizontal) {
                    const QRectF box = querySide ? QRectF(kMargin, a.y() - 9, kLabelWidth, 18)
                                                 : QRectF(a.x() + 8, a.y() - 9, kLabelWidth, 18);
                    painter.drawText(box, (querySide ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter, text);
                } else {
                    const double colWidth = (width() - 2.0 * kMargin) / std::max(1, m_owner->shownSlots());
                    const QRectF box(a.x() - colWidth / 2, querySide ? kMargin : a.y() + 6, colWidth, 20);
                    painter.drawText(box, Qt::AlignCenter, painter.fontMetrics().elidedText(text, Qt::ElideRight, int(colWidth)));
                }
            }
        }
        // Attention that leaves the window, for the isolated query: "↑ 0.12" before, "↓ 0.03" after.
        if (m_owner->m_isolatedQuery >= 0) {
            const OutsideMass mass = m_owner->outsideMass(m_owner->m_isolatedQuery);
            painter.setPen(kIsolatedColor);
            font.setBold(false);
            painter.setFont(font);
            const QString before = QStringLiteral("%1 %2").arg(m_owner->m_horizontal ? QStringLiteral("←") : QStringLiteral("↑")).arg(mass.before, 0, 'f', 3);
            const QString after = QStringLiteral("%1 %2").arg(m_owner->m_horizontal ? QStringLiteral("→") : QStringLiteral("↓")).arg(mass.after, 0, 'f', 3);
            if (mass.before > 0) painter.drawText(QRectF(0, 0, width() - kMargin, kMargin + 2), Qt::AlignRight | Qt::AlignTop, before);
            if (mass.after > 0) painter.drawText(QRectF(0, height() - kMargin - 12, width() - kMargin, 14), Qt::AlignRight, after);
        }
    }

    void resizeEvent(QResizeEvent* event) override {
        QWidget::resizeEvent(event);
        m_owner->fitWindowToCanvas();
    }

    void mouseMoveEvent(QMouseEvent* event) override {
        const auto [index, querySide] = tokenAt(event->position());
        if (index < 0) {
            m_owner->isolateQuery(-1);
            m_owner->isolateKey(-1);
            return;
        }
        if (querySide) {
            m_owner->isolateKey(-1);
            m_owner->isolateQuery(index);
        } else {
            m_owner->isolateQuery(-1);
            m_owner->isolateKey(index);
        }
        Q_EMIT m_owner->tokenHovered(index, querySide);
    }

    void leaveEvent(QEvent*) override {
        m_owner->isolateQuery(-1);
        m_owner->isolateKey(-1);
    }

private:
    TokenLinks* m_owner;
};

// The whole head at a glance (row-max pooled) with the visible window outlined; a click moves
// the window there.
class TokenLinkMinimap : public QWidget {
public:
    explicit TokenLinkMinimap(TokenLinks* owner) : QWidget(owner), m_owner(owner) {
        setFixedWidth(kMinimapWidth);
        setToolTip(tr("The whole head; the outlined square is the visible window. Click to move there."));
    }
    void refresh() {
        // The owner's overview of the whole head (at most kMinimapWidth cells a side, max-pooled).
        // (block means where the head's maxima were not computed: linear and performer past
        // kMaxHeadScanWeights, shaded against the largest mean)
        const engine::WeightOverview& o = m_owner->m_overview;
        const int side = std::max(1, std::max(o.rows, o.cols));
        m_image = QImage(side, side, QImage::Format_ARGB32);
        m_image.fill(Qt::white);
        const bool means = !o.maxWeight.empty() && std::isnan(o.maxWeight[0]);
        const auto cellValue = [&](int y, int x) {
            const std::size_t c = static_cast<std::size_t>(y) * o.cols + x;
            return std::max(0.0f, means ? static_cast<float>(o.sumWeight[c] / static_cast<double>(o.cellArea(y, x))) : o.maxWeight[c]);
        };
        float maxWeight = means ? 0.0f : m_owner->m_headMax;
        if (means)
            for (int y = 0; y < o.rows; ++y)
                for (int x = 0; x < o.cols; ++x) maxWeight = std::max(maxWeight, cellValue(y, x));
        if (o.rows > 0 && maxWeight > 0) {
            for (int y = 0; y < o.rows; ++y)
                for (int x = 0; x < o.cols; ++x) {
                    const int shade = 255 - static_cast<int>(std::sqrt(std::min(1.0f, cellValue(y, x) / maxWeight)) * 200);
                    m_image.setPixel(x, y, qRgb(shade, shade, 255));
                }
        }
        update();
    }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter painter(this);
        const int side = width();
        painter.drawImage(QRect(0, 0, side, side), m_image);
        const int count = m_owner->tokenCount();
        if (count == 0) return;
        const double scale = static_cast<double>(side) / count;
        painter.setPen(QPen(kIsolatedColor, 1.5));
        const double a = m_owner->m_first * scale, len = std::min(m_owner->m_window, count) * scale;
        painter.drawRect(QRectF(a, a, len, len));
    }
    void mousePressEvent(QMouseEvent* event) override {
        const int count = m_owner->tokenCount();
        if (count == 0) return;
        const int center = static_cast<int>(event->position().y() / width() * count);
        m_owner->showWindow(center - m_owner->m_window / 2, m_owner->m_window);
    }

private:
    TokenLinks* m_owner;
    QImage m_image;
};

TokenLinks::TokenLinks(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Threshold"), this));
    m_thresholdSlider = new QSlider(Qt::Horizontal, this);
    m_thresholdSlider->setRange(0, kSliderSteps);
    m_thresholdSlider->setValue(sliderValue(m_threshold));
    m_thresholdSlider->setToolTip(tr("Hide links weaker than this share of the head's largest weight (log scale; far left: "
                                     "every link)."));
    controls->addWidget(m_thresholdSlider, 1);
    m_autoButton = new QToolButton(this);
    m_autoButton->setText(tr("Auto"));
    m_autoButton->setCheckable(true);
    m_autoButton->setChecked(true);
    m_autoButton->setToolTip(tr("Choose the threshold that draws about %1 links per shown token, for any length").arg(kAutoLinksPerToken));
    controls->addWidget(m_autoButton);
    m_horizontalBox = new QCheckBox(tr("Horizontal (long or CJK text)"), this);
    controls->addWidget(m_horizontalBox);
    layout->addLayout(controls);
    auto* body = new QHBoxLayout;
    m_canvas = new TokenLinkCanvas(this);
    m_canvas->setProperty(FigurePainter::kRenderProperty, true);  // exported figures draw the lines
    body->addWidget(m_canvas, 1);
    m_scroll = new QScrollBar(Qt::Vertical, this);
    body->addWidget(m_scroll);
    auto* side = new QVBoxLayout;
    m_minimap = new TokenLinkMinimap(this);
    m_minimap->setFixedHeight(kMinimapWidth);
    side->addWidget(m_minimap);
    side->addStretch(1);
    body->addLayout(side);
    layout->addLayout(body, 1);
    m_status = new QLabel(this);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);  // (one line of it asked 640 pixels of the window's width)
    layout->addWidget(m_status);

    connect(m_thresholdSlider, &QSlider::valueChanged, this, [this](int v) { setThreshold(sliderFraction(v)); });
    connect(m_autoButton, &QToolButton::toggled, this, [this](bool on) { setAutoThreshold(on); });
    connect(m_horizontalBox, &QCheckBox::toggled, this, &TokenLinks::setHorizontal);
    connect(m_scroll, &QScrollBar::valueChanged, this, [this](int v) { showWindow(v, m_window); });
    rebuild();
}

TokenLinks::~TokenLinks() = default;

void TokenLinks::setInspectionState(InspectionState* state) {
    followInspectionState(this, m_state, state, [this] { rebuild(); });
}

void TokenLinks::setResult(Run result) {
    m_result = std::move(result);
    m_first = 0;
    m_isolatedQuery = m_isolatedKey = -1;
    rebuild();
}

void TokenLinks::setThreshold(double fraction) {
    if (m_autoThreshold) {  // a threshold chosen by hand (or by a caller) stays until Auto
        m_autoThreshold = false;
        const QSignalBlocker blocker(m_autoButton);
        m_autoButton->setChecked(false);
    }
    applyThreshold(fraction);
}

void TokenLinks::setAutoThreshold(bool on) {
    m_autoThreshold = on;
    {
        const QSignalBlocker blocker(m_autoButton);
        m_autoButton->setChecked(on);
    }
    if (on) chooseThreshold();
    updateChrome();
}

void TokenLinks::chooseThreshold() {
    // The weight of the k-th strongest link in the window, k = kAutoLinksPerToken per shown token.
    std::vector<float> magnitudes;
    magnitudes.reserve(m_windowTile.weights.size());
    for (float w : m_windowTile.weights)
        if (w != 0.0f && std::isfinite(w)) magnitudes.push_back(std::abs(w));
    const std::size_t wanted = static_cast<std::size_t>(kAutoLinksPerToken) * static_cast<std::size_t>(std::max(1, shownSlots()));
    if (magnitudes.empty() || m_headMax <= 0) return applyThreshold(0.05);
    if (magnitudes.size() <= wanted) return applyThreshold(0.0);
    std::nth_element(magnitudes.begin(), magnitudes.begin() + static_cast<std::ptrdiff_t>(wanted - 1), magnitudes.end(),
                     std::greater<float>());
    applyThreshold(magnitudes[wanted - 1] / m_headMax);
}

int TokenLinks::shownSlots() const { return std::max(0, std::min(m_window, tokenCount() - m_first)); }

void TokenLinks::fitWindowToCanvas() {
    if (m_fixedWindow) return;
    const int room = m_horizontal ? m_canvas->width() - 2 * kMargin : m_canvas->height() - 2 * kMargin;
    const int pitch = m_horizontal ? kMinColumnWidth : m_canvas->fontMetrics().height() + 2;  // a label per token
    const int fitting = std::clamp(room / std::max(1, pitch), 4, kMaxWindow);
    if (fitting != m_window) showWindow(m_first, fitting);
}

void TokenLinks::applyThreshold(double fraction) {
    m_threshold = std::clamp(fraction, 0.0, 1.0);
    const QSignalBlocker blocker(m_thresholdSlider);
    m_thresholdSlider->setValue(sliderValue(m_threshold));
    updateChrome();
}

void TokenLinks::setHorizontal(bool horizontal) {
    m_horizontal = horizontal;
    const QSignalBlocker blocker(m_horizontalBox);
    m_horizontalBox->setChecked(horizontal);
    fitWindowToCanvas();
    updateChrome();
}

void TokenLinks::setWindow(int first, int size) {
    m_fixedWindow = true;  // a size asked for is kept; otherwise it follows the canvas's height
    showWindow(first, size);
}

void TokenLinks::showWindow(int first, int size) {
    m_window = std::max(1, size);
    m_first = std::clamp(first, 0, std::max(0, tokenCount() - m_window));
    refreshWindowTile();
    if (m_autoThreshold) chooseThreshold();
    updateChrome();
}

void TokenLinks::setHighlightedTokens(const QVector<int>& tokens) {
    m_highlighted = tokens;
    m_canvas->update();
}

void TokenLinks::showToken(int token) {
    if (token < 0 || token >= tokenCount()) return;
    if (token < m_first || token >= m_first + m_window) showWindow(token - m_window / 2, m_window);
    isolateKey(-1);
    isolateQuery(token);
}

void TokenLinks::isolateQuery(int query) {
    if (query == m_isolatedQuery) return;
    m_isolatedQuery = query;
    updateChrome();
}

void TokenLinks::isolateKey(int key) {
    if (key == m_isolatedKey) return;
    m_isolatedKey = key;
    updateChrome();
}

const engine::AttentionResult* TokenLinks::shownResult() const {
    if (!m_result || m_result->results.empty()) return nullptr;
    const int index = m_state ? m_state->resultIndex() : 0;
    if (index < 0 || index >= static_cast<int>(m_result->results.size())) return nullptr;
    return &m_result->results[static_cast<std::size_t>(index)];
}

int TokenLinks::head() const { return m_state ? m_state->head() : 0; }

int TokenLinks::tokenCount() const {
    const auto* r = shownResult();
    // Links need a square self-attention matrix; extra key columns (a relay) are not tokens.
    return r ? static_cast<int>(std::min(r->n, r->m)) : 0;
}

QString TokenLinks::tokenText(int index) const {
    if (m_result && index >= 0 && index < static_cast<int>(m_result->input.tokens.size()))
        return tokenLabel(m_result->input.tokens[static_cast<std::size_t>(index)].text);
    return QString::number(index);
}

float TokenLinks::weight(int query, int key) const {
    const auto* r = shownResult();
    if (!r) return 0.0f;
    const engine::WeightTile& t = m_windowTile;
    if (t.head == head() && query >= t.r0 && query < t.r1 && key >= t.c0 && key < t.c1 && !t.weights.empty())
        return t.at(query, key);
    return r->weightAt(head(), query, key);
}

void TokenLinks::refreshWindowTile() {
    m_windowTile = engine::WeightTile{};
    const auto* r = shownResult();
    const int h = head();
    const int count = tokenCount();
    if (!r || !r->weights || h < 0 || h >= r->heads || count == 0) return;
    const std::int64_t last = std::min<std::int64_t>(count, m_first + m_window);
    m_windowTile = r->weights->tile(h, m_first, last, m_first, std::min<std::int64_t>(last, r->m));
    if (!m_headMaxOfWindow) return;
    m_headMax = 0.0f;
    for (float w : m_windowTile.weights) m_headMax = std::max(m_headMax, std::abs(w));
}

std::vector<TokenLink> TokenLinks::visibleLinks() const {
    std::vector<TokenLink> links;
    const int count = tokenCount();
    if (count == 0 || m_headMax <= 0) return links;
    const int last = std::min(count, m_first + m_window);
    const float cut = static_cast<float>(m_threshold) * m_headMax;
    for (int q = m_first; q < last; ++q) {
        if (m_isolatedQuery >= 0 && q != m_isolatedQuery) continue;
        for (int k = m_first; k < last; ++k) {
            if (m_isolatedKey >= 0 && k != m_isolatedKey) continue;
            const float w = weight(q, k);
            // Signed weights (Linformer's P̄F) are drawn by magnitude.
            if (w != 0.0f && std::abs(w) >= cut) links.push_back(TokenLink{q, k, w});
        }
    }
    return links;
}

OutsideMass TokenLinks::outsideMass(int query) const {
    OutsideMass mass;
    const int count = tokenCount();
    const auto* r = shownResult();
    if (query < 0 || query >= count || !r || !r->weights || head() < 0 || head() >= r->heads) return mass;
    const engine::WeightTile row = r->weights->tile(head(), query, query + 1, 0, std::min<std::int64_t>(count, r->m));
    for (int k = 0; k < std::min<int>(m_first, static_cast<int>(row.weights.size())); ++k) mass.before += row.weights[static_cast<std::size_t>(k)];
    for (int k = std::min(count, m_first + m_window); k < static_cast<int>(row.weights.size()); ++k)
        mass.after += row.weights[static_cast<std::size_t>(k)];
    return mass;
}

void TokenLinks::rebuild() {
    m_headMax = 0.0f;
    m_headMaxOfWindow = false;
    m_overview = engine::WeightOverview{};
    const auto* r = shownResult();
    const int h = head();
    const int count = tokenCount();
    if (r && r->weights && h >= 0 && h < r->heads && count > 0) {
        // The largest weight (by magnitude: Linformer's P̄F is signed) from a pooled overview, which
        // costs what the pattern costs, not n² calls. A head past kMaxHeadScanWeights is not
        // visited whole on this thread: its minimap from block means where they come by factors
        // (linear, performer), none otherwise, and the largest weight the visible window's.
        const std::int64_t keys = std::min<std::int64_t>(count, r->m);
        const std::int64_t factor = (std::max<std::int64_t>(count, keys) + kMinimapWidth - 1) / kMinimapWidth;
        engine::OverviewRequest request{h, 0, count, 0, keys, std::max<std::int64_t>(factor, 1)};
        m_headMaxOfWindow = r->weights->entries(h) > kMaxHeadScanWeights;
        request.sumsOnly = m_headMaxOfWindow;
        if (!m_headMaxOfWindow || engine::poolsSumsByFactors(*r->weights)) engine::buildOverview(*r->weights, request, m_overview);
        for (std::size_t c = 0; c < m_overview.maxWeight.size() && !m_headMaxOfWindow; ++c) {
            if (std::isfinite(m_overview.maxWeight[c])) m_headMax = std::max(m_headMax, std::abs(m_overview.maxWeight[c]));
            if (std::isfinite(m_overview.minWeight[c])) m_headMax = std::max(m_headMax, std::abs(m_overview.minWeight[c]));
        }
    }
    m_first = std::clamp(m_first, 0, std::max(0, tokenCount() - m_window));
    refreshWindowTile();
    if (m_autoThreshold) chooseThreshold();
    m_minimap->refresh();
    updateChrome();
}

void TokenLinks::updateChrome() {
    const int count = tokenCount();
    const bool scrolls = count > m_window;
    m_scroll->setVisible(scrolls);
    m_minimap->setVisible(scrolls);
    {
        const QSignalBlocker blocker(m_scroll);
        m_scroll->setRange(0, std::max(0, count - m_window));
        m_scroll->setPageStep(m_window);
        m_scroll->setValue(m_first);
    }
    const auto* r = shownResult();
    if (!r) m_status->setText(tr("No result."));
    else
        m_status->setText((m_headMaxOfWindow ? tr("head %1 · tokens %2–%3 of %4 · %5 links ≥ %6 of the window's largest weight %7%8")
                                             : tr("head %1 · tokens %2–%3 of %4 · %5 links ≥ %6 of the largest weight %7%8"))
                              .arg(head())
                              .arg(m_first)
                              .arg(std::min(count, m_first + m_window) - 1)
                              .arg(count)
                              .arg(visibleLinks().size())
                              .arg(m_threshold, 0, 'g', 2)
                              .arg(m_headMax, 0, 'g', 4)
                              .arg(m_autoThreshold ? tr(" (automatic: about %1 per token)").arg(kAutoLinksPerToken) : QString()));
    m_minimap->update();
    m_canvas->update();
}

}  // namespace attnscope::views
