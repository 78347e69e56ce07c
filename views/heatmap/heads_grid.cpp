#include "views/heatmap/heads_grid.h"

#include "views/data/background_job.h"
#include "views/widgets/figure_painter.h"
#include "views/data/colormap.h"
#include "views/data/head_matrix.h"
#include "views/data/head_matrix_source.h"
#include "views/data/inspection_state.h"

#include <QComboBox>
#include <QMouseEvent>
#include <QPainter>
#include <QSignalBlocker>
#include <QToolTip>

#include <algorithm>

namespace attnscope::views {

namespace {
constexpr int kSpacing = 6;
constexpr int kMinCellSide = 24;
}  // namespace

HeadsGrid::HeadsGrid(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setProperty(FigurePainter::kRenderProperty, true);  // custom-painted: exported as it is drawn
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    m_scaleCombo = new QComboBox(this);
    m_scaleCombo->addItem(tr("per-head colour scale"), static_cast<int>(ScaleMode::PerHead));
    m_scaleCombo->addItem(tr("shared colour scale"), static_cast<int>(ScaleMode::Shared));
    m_scaleCombo->setToolTip(tr("Per head: each thumbnail spans its own head's weights. Shared: one range for "
                                "every head, so equal colours mean equal weights."));
    connect(m_scaleCombo, &QComboBox::currentIndexChanged, this, [this] {
        setScaleMode(static_cast<ScaleMode>(m_scaleCombo->currentData().toInt()));
        Q_EMIT scaleModeChanged(m_scaleMode);
    });
}

void HeadsGrid::setInspectionState(InspectionState* state) {
    if (m_state) disconnect(m_state, nullptr, this, nullptr);
    m_state = state;
    if (state) {
        connect(state, &InspectionState::headChanged, this, qOverload<>(&QWidget::update));
        connect(state, &InspectionState::layerChanged, this, qOverload<>(&QWidget::update));
        connect(state, &InspectionState::resultIndexChanged, this, &HeadsGrid::rebuild);
    }
    rebuild();
}

void HeadsGrid::setResult(std::shared_ptr<const engine::RunResult> result) {
    m_result = std::move(result);
    rebuild();
}

void HeadsGrid::setScaleMode(ScaleMode mode) {
    {
        const QSignalBlocker block(m_scaleCombo);
        m_scaleCombo->setCurrentIndex(m_scaleCombo->findData(static_cast<int>(mode)));
    }
    if (mode == m_scaleMode) return;
    m_scaleMode = mode;
    recolor();
}

void HeadsGrid::setBackgroundPooling(std::int64_t minWeights) {
    m_backgroundWeights = std::max<std::int64_t>(minWeights, 0);
}

HeadsGrid::Layer HeadsGrid::poolLayer(const engine::AttentionResult& r) {
    Layer layer;
    for (int h = 0; h < r.heads; ++h) {
        const HeadMatrix matrix = HeadMatrix::fromResult(r, h, kThumbnailSide, HeadMatrixSource::modeFor(r, PoolMode::Max));
        Head head;
        head.rows = matrix.rows();
        head.cols = matrix.cols();
        head.values = matrix.values();
        head.max = matrix.maxValue();
        head.inPattern.resize(head.values.size(), 1);
        for (int y = 0; y < head.rows; ++y)
            for (int x = 0; x < head.cols; ++x)
                head.inPattern[static_cast<std::size_t>(y) * head.cols + x] = matrix.inPattern(y, x) ? 1 : 0;
        layer.push_back(std::move(head));
    }
    return layer;
}

void HeadsGrid::rebuild() {
    const quint64 generation = m_poolJob.start();
    m_pooling = false;
    const int index = m_state ? m_state->resultIndex() : 0;
    if (!m_result || index < 0 || index >= static_cast<int>(m_result->results.size())) {
        showLayer(nullptr);
        return;
    }
    // One layer per RunResult today; the grid keeps [layer][head] so checkpoints with several
    // layers per result only need to fill more rows.
    const engine::AttentionResult& r = m_result->results[static_cast<std::size_t>(index)];
    if (r.heads * r.n * r.m <= m_backgroundWeights) {
        const Layer layer = poolLayer(r);
        showLayer(&layer);
        return;
    }
    m_pooling = true;  // the previous thumbnails stay until these are ready, dimmed and inert
    update();
    m_future = runInBackground<Layer>(
        this, [run = m_result, index] { return poolLayer(run->results[static_cast<std::size_t>(index)]); },
        [this, generation](Layer layer) {
            if (!m_poolJob.isLatest(generation) || !m_pooling) return;  // superseded, or finishPooling() showed it
            m_pooling = false;
            showLayer(&layer);
            Q_EMIT thumbnailsReady();
        });
}

void HeadsGrid::finishPooling() {
    if (!m_pooling) return;
    m_future.waitForFinished();
    m_pooling = false;
    const Layer layer = m_future.result();
    showLayer(&layer);
}

void HeadsGrid::showLayer(const Layer* layer) {
    m_heads.clear();
    m_sharedMax = 0;
    if (layer) {
        for (const Head& head : *layer) m_sharedMax = std::max(m_sharedMax, head.max);
        m_heads.push_back(*layer);
    }
    recolor();
    updateGeometry();
}

void HeadsGrid::recolor() {
    m_thumbnails.clear();
    const Colormap& lut = Colormap::viridis();
    const QRgb blank = palette().color(QPalette::Base).rgb();  // keys outside the pattern, as in the heatmap
    for (int l = 0; l < m_heads.size(); ++l) {
        QVector<QImage> images;
        for (int h = 0; h < m_heads[l].size(); ++h) {
            const Head& head = m_heads[l][h];
            QImage image(std::max(head.cols, 1), std::max(head.rows, 1), QImage::Format_RGB32);
            image.fill(lut.color(0));
            const double hi = scaleRange(l, h).second;
            const double scale = hi > 0 ? 1.0 / hi : 0.0;
            for (int y = 0; y < head.rows; ++y) {
                auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
                for (int x = 0; x < head.cols; ++x) {
                    const std::size_t i = static_cast<std::size_t>(y) * head.cols + x;
                    line[x] = head.inPattern[i] ? lut.map(head.values[i] * scale) : blank;
                }
            }
            images.push_back(image);
        }
        m_thumbnails.push_back(images);
    }
    update();
}

QImage HeadsGrid::thumbnail(int layer, int head) const {
    if (layer < 0 || layer >= layerCount() || head < 0 || head >= m_thumbnails[layer].size()) return {};
    return m_thumbnails[layer][head];
}

double HeadsGrid::headMax(int layer, int head) const {
    if (layer < 0 || layer >= m_heads.size() || head < 0 || head >= m_heads[layer].size()) return 0;
    return m_heads[layer][head].max;
}

std::pair<double, double> HeadsGrid::scaleRange(int layer, int head) const {
    if (layer < 0 || layer >= m_heads.size() || head < 0 || head >= m_heads[layer].size()) return {0, 0};
    return {0.0, m_scaleMode == ScaleMode::Shared ? m_sharedMax : m_heads[layer][head].max};
}

int HeadsGrid::headerHeight() const { return m_figure ? 0 : m_scaleCombo->sizeHint().height() + 2; }
int HeadsGrid::labelHeight() const { return fontMetrics().height() + 2; }
int HeadsGrid::rowLabelWidth() const { return fontMetrics().horizontalAdvance(QStringLiteral("L00")) + kSpacing; }

int HeadsGrid::groupSize() const {
    const std::int64_t kv = m_result ? m_result->modelKvHeads : 0;
    const int heads = headCount();
    return kv > 0 && kv < heads && heads % kv == 0 ? heads / static_cast<int>(kv) : 1;
}

int HeadsGrid::groupGaps() const { return groupSize() > 1 ? headCount() / groupSize() - 1 : 0; }

int HeadsGrid::cellSide(int width) const {
    const int heads = std::max(headCount(), 1);
    const int available = width - rowLabelWidth() - kSpacing * (heads + 1) - kGroupGap * groupGaps() - colorBarWidth();
    return std::clamp(available / heads, kMinCellSide, m_figure ? kFigureCellSide : m_maxCellSide);
}

QRect HeadsGrid::thumbnailRect(int layer, int head) const {
    if (layer < 0 || layer >= layerCount() || head < 0 || head >= headCount()) return {};
    const int side = cellSide(width());
    // query heads reading one key/value head stand together, a gap between groups
    const int x = rowLabelWidth() + kSpacing + head * (side + kSpacing) + head / groupSize() * (groupSize() > 1 ? kGroupGap : 0);
    const int y = headerHeight() + kSpacing + layer * (side + labelHeight() + kSpacing);
    return {x, y, side, side};
}

int HeadsGrid::heightForWidth(int width) const {
    const int layers = std::max(layerCount(), 1);
    return headerHeight() + kSpacing + layers * (cellSide(width) + labelHeight() + kSpacing);
}

QSize HeadsGrid::sizeHint() const {
    const int heads = std::max(headCount(), 4);
    const int width = rowLabelWidth() + kSpacing + heads * (m_maxCellSide + kSpacing) + kGroupGap * groupGaps();
    return {width, heightForWidth(width)};
}

QSize HeadsGrid::minimumSizeHint() const {
    return {rowLabelWidth() + 4 * (kMinCellSide + kSpacing), heightForWidth(0)};
}

void HeadsGrid::setMaxCellSide(int side) {
    side = std::clamp(side, kMinCellSide, kMaxCellSide);
    if (side == m_maxCellSide) return;
    m_maxCellSide = side;
    updateGeometry();
    update();
}

int HeadsGrid::colorBarWidth() const {
    return m_figure ? 3 * kSpacing + 14 + fontMetrics().horizontalAdvance(QStringLiteral("0.0000")) : 0;
}

QSize HeadsGrid::beginFigureLayout(QSize windowSize, bool /*slide*/) {
    m_figure = true;
    const int heads = std::max(headCount(), 1);
    const int width = rowLabelWidth() + kSpacing + heads * (kFigureCellSide + kSpacing) + kGroupGap * groupGaps() + colorBarWidth();
    // As wide as the thumbnails at their figure size, or narrower when the window's grid was.
    const int shown = std::min(width, std::max(windowSize.width(), rowLabelWidth() + heads * (kMaxCellSide + kSpacing) + colorBarWidth()));
    return {shown, heightForWidth(shown)};
}

void HeadsGrid::endFigureLayout() {
    m_figure = false;
    update();
}

QString HeadsGrid::headLabel(int layer, int head, int width) const {
    // The widest that fits: "head 3 · kv 1" (grouped heads), then "head 3", then "3"; a per-head
    // figure keeps each head's maximum ("head 3 · max 0.812", narrow: "3 · 0.81").
    const bool withMax = m_figure && m_scaleMode == ScaleMode::PerHead;
    const double top = m_heads[layer][head].max;
    const int group = groupSize();
    QString wide = group > 1 ? QStringLiteral("head %1 · kv %2").arg(head).arg(head / group) : QStringLiteral("head %1").arg(head);
    if (withMax) wide += tr(" · max %1").arg(QString::number(top, 'g', 3));
    const auto fits = [&](const QString& text) { return fontMetrics().horizontalAdvance(text) < width; };
    if (fits(wide)) return wide;
    if (withMax) return QStringLiteral("%1 · %2").arg(head).arg(QString::number(top, 'g', 2));
    return fits(QStringLiteral("head 00")) ? QStringLiteral("head %1").arg(head) : QString::number(head);
}

void HeadsGrid::paintColorBar(QPainter& painter, const QRect& beside) const {
    // One bar for the shared scale (0 … its max); under per-head scales 0 … "head max", each
    // head's max under its thumbnail.
    const QRect bar(beside.right() + 2 * kSpacing, beside.top(), 14, beside.height());
    const Colormap& lut = Colormap::viridis();
    for (int y = 0; y < bar.height(); ++y)
        painter.fillRect(QRect(bar.left(), bar.bottom() - y, bar.width(), 1),
                         QColor(lut.map(bar.height() > 1 ? static_cast<double>(y) / (bar.height() - 1) : 0.0)));
    painter.setPen(palette().color(QPalette::Text));
    painter.drawRect(bar.adjusted(0, 0, -1, -1));
    const bool shared = m_scaleMode == ScaleMode::Shared;
    const QString top = shared ? QString::number(m_sharedMax, 'g', 3) : tr("max");
    const int textLeft = bar.right() + kSpacing;
    const int lineHeight = fontMetrics().height();
    painter.drawText(QRect(textLeft, bar.top() - lineHeight / 2, 200, lineHeight), Qt::AlignLeft | Qt::AlignVCenter, top);
    painter.drawText(QRect(textLeft, bar.bottom() - lineHeight / 2, 200, lineHeight), Qt::AlignLeft | Qt::AlignVCenter,
                     QStringLiteral("0"));
}

void HeadsGrid::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    const QSize combo = m_scaleCombo->sizeHint();
    m_scaleCombo->setGeometry(rowLabelWidth() + kSpacing, 1, combo.width(), combo.height());
}

void HeadsGrid::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().brush(QPalette::Base));
    painter.setPen(palette().color(QPalette::Text));
    if (headCount() == 0) {
        painter.drawText(rect().adjusted(0, headerHeight(), 0, 0), Qt::AlignCenter, tr("Heads appear here after a run"));
        return;
    }
    const int selectedHead = m_state ? m_state->head() : -1;
    const int selectedLayer = m_state ? m_state->layer() : 0;
    for (int layer = 0; layer < layerCount(); ++layer) {
        const QRect first = thumbnailRect(layer, 0);
        painter.setPen(palette().color(QPalette::Text));
        // A checkpoint layer's run is labelled with the model's layer number.
        const int shownLayer = m_result && m_result->modelLayer >= 0 ? m_result->modelLayer + layer : layer;
        painter.drawText(QRect(0, first.top(), rowLabelWidth(), first.height()), Qt::AlignCenter,
                         QStringLiteral("L%1").arg(shownLayer));
        for (int head = 0; head < headCount(); ++head) {
            const QRect cell = thumbnailRect(layer, head);
            // Nearest-neighbour scaling keeps cells crisp, as in the large heatmap.
            painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
            painter.drawImage(cell, m_thumbnails[layer][head]);
            const bool isSelected = !m_figure && head == selectedHead && layer == selectedLayer;
            QPen frame(isSelected ? palette().color(QPalette::Highlight) : palette().color(QPalette::Mid),
                       isSelected ? 3 : 1);
            painter.setPen(frame);
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(cell.adjusted(-1, -1, 0, 0));
            QFont f = font();
            f.setBold(isSelected);
            painter.setFont(f);
            painter.setPen(palette().color(QPalette::Text));
            const QString label = headLabel(layer, head, cell.width());
            painter.drawText(QRect(cell.left(), cell.bottom() + 2, cell.width(), labelHeight()), Qt::AlignCenter, label);
            painter.setFont(font());
        }
        if (m_figure) paintColorBar(painter, thumbnailRect(layer, headCount() - 1));
    }
    if (m_pooling) paintStale(painter);
}

// The previous result's thumbnails while the new result's are pooled: dimmed, and saying so (a
// new result may have other heads: they must not pass for its own).
void HeadsGrid::paintStale(QPainter& painter) const {
    const QRect area = rect().adjusted(0, headerHeight(), 0, 0);
    QColor veil = palette().color(QPalette::Base);
    veil.setAlpha(170);
    painter.fillRect(area, veil);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(area, Qt::AlignCenter, tr("Pooling the new result's heads…"));
}

bool HeadsGrid::hitTest(const QPoint& pos, int* layer, int* head) const {
    for (int l = 0; l < layerCount(); ++l) {
        for (int h = 0; h < headCount(); ++h) {
            if (thumbnailRect(l, h).contains(pos)) {
                *layer = l;
                *head = h;
                return true;
            }
        }
    }
    return false;
}

void HeadsGrid::mousePressEvent(QMouseEvent* event) {
    int layer = 0, head = 0;
    if (!m_pooling && event->button() == Qt::LeftButton && hitTest(event->position().toPoint(), &layer, &head)) {
        Q_EMIT headSelected(layer, head);
        return;
    }
    QWidget::mousePressEvent(event);
}

void HeadsGrid::mouseDoubleClickEvent(QMouseEvent* event) {
    int layer = 0, head = 0;
    if (!m_pooling && event->button() == Qt::LeftButton && hitTest(event->position().toPoint(), &layer, &head)) {
        Q_EMIT headOpened(layer, head);
        return;
    }
    QWidget::mouseDoubleClickEvent(event);
}

void HeadsGrid::mouseMoveEvent(QMouseEvent* event) {
    int layer = 0, head = 0;
    if (m_pooling) {  // (the thumbnails shown are the previous result's)
        unsetCursor();
        setToolTip(tr("The new result's heads are being pooled; they appear here when ready"));
        return;
    }
    if (hitTest(event->position().toPoint(), &layer, &head)) {
        setCursor(Qt::PointingHandCursor);
        const int group = groupSize();
        const QString shared = group > 1 ? tr("; reads key/value head %1 with heads %2–%3")
                                               .arg(head / group)
                                               .arg(head / group * group)
                                               .arg(head / group * group + group - 1)
                                         : QString();
        setToolTip(tr("Layer %1, head %2 (max weight %3%4): click to select, double-click to open")
                       .arg(m_result && m_result->modelLayer >= 0 ? m_result->modelLayer + layer : layer)
                       .arg(head)
                       .arg(headMax(layer, head), 0, 'g', 3)
                       .arg(shared));
        return;
    }
    unsetCursor();
    setToolTip(QString());
}

}  // namespace attnscope::views
