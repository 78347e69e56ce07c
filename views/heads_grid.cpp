#include "views/heads_grid.h"

#include "views/colormap.h"
#include "views/head_matrix.h"
#include "views/inspection_state.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace attnscope::views {

namespace {
constexpr int kSpacing = 6;
constexpr int kMinCellSide = 24;
}  // namespace

HeadsGrid::HeadsGrid(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

void HeadsGrid::setInspectionState(InspectionState* state) {
    if (m_state) disconnect(m_state, nullptr, this, nullptr);
    m_state = state;
    if (state) {
        connect(state, &InspectionState::headChanged, this, qOverload<>(&QWidget::update));
        connect(state, &InspectionState::resultIndexChanged, this, &HeadsGrid::rebuild);
    }
    rebuild();
}

void HeadsGrid::setResult(std::shared_ptr<const engine::RunResult> result) {
    m_result = std::move(result);
    rebuild();
}

void HeadsGrid::rebuild() {
    m_thumbnails.clear();
    const int index = m_state ? m_state->resultIndex() : 0;
    if (m_result && index >= 0 && index < static_cast<int>(m_result->results.size())) {
        const engine::AttentionResult& r = m_result->results[static_cast<std::size_t>(index)];
        const Colormap& lut = Colormap::viridis();
        const QRgb blank = palette().color(QPalette::Base).rgb();  // keys outside the pattern, as in the heatmap
        for (int h = 0; h < r.heads; ++h) {
            const HeadMatrix matrix = HeadMatrix::fromResult(r, h, kThumbnailSide);
            QImage image(std::max(matrix.cols(), 1), std::max(matrix.rows(), 1), QImage::Format_RGB32);
            image.fill(lut.color(0));
            // Each head scaled to its own maximum, like the large heatmap, so patterns stay visible.
            const float scale = matrix.maxValue() > 0.0f ? 1.0f / matrix.maxValue() : 0.0f;
            for (int y = 0; y < matrix.rows(); ++y) {
                auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
                for (int x = 0; x < matrix.cols(); ++x)
                    line[x] = matrix.inPattern(y, x) ? lut.map(matrix.at(y, x) * scale) : blank;
            }
            m_thumbnails.push_back(image);
        }
    }
    updateGeometry();
    update();
}

QImage HeadsGrid::thumbnail(int layer, int head) const {
    if (layer != 0 || head < 0 || head >= m_thumbnails.size()) return {};
    return m_thumbnails[head];
}

int HeadsGrid::labelHeight() const { return fontMetrics().height() + 2; }
int HeadsGrid::rowLabelWidth() const { return fontMetrics().horizontalAdvance(QStringLiteral("L00")) + kSpacing; }

int HeadsGrid::cellSide(int width) const {
    const int heads = std::max(headCount(), 1);
    const int available = width - rowLabelWidth() - kSpacing * (heads + 1);
    return std::clamp(available / heads, kMinCellSide, kMaxCellSide);
}

QRect HeadsGrid::thumbnailRect(int layer, int head) const {
    if (layer < 0 || layer >= layerCount() || head < 0 || head >= headCount()) return {};
    const int side = cellSide(width());
    const int x = rowLabelWidth() + kSpacing + head * (side + kSpacing);
    const int y = kSpacing + layer * (side + labelHeight() + kSpacing);
    return {x, y, side, side};
}

int HeadsGrid::heightForWidth(int width) const {
    const int layers = std::max(layerCount(), 1);
    return kSpacing + layers * (cellSide(width) + labelHeight() + kSpacing);
}

QSize HeadsGrid::sizeHint() const {
    const int heads = std::max(headCount(), 4);
    const int width = rowLabelWidth() + kSpacing + heads * (kMaxCellSide + kSpacing);
    return {width, heightForWidth(width)};
}

QSize HeadsGrid::minimumSizeHint() const {
    return {rowLabelWidth() + 4 * (kMinCellSide + kSpacing), heightForWidth(0)};
}

void HeadsGrid::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().brush(QPalette::Base));
    painter.setPen(palette().color(QPalette::Text));
    if (m_thumbnails.isEmpty()) {
        painter.drawText(rect(), Qt::AlignCenter, tr("Heads appear here after a run"));
        return;
    }
    const int selected = m_state ? m_state->head() : -1;
    for (int layer = 0; layer < layerCount(); ++layer) {
        const QRect first = thumbnailRect(layer, 0);
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(QRect(0, first.top(), rowLabelWidth(), first.height()), Qt::AlignCenter,
                         QStringLiteral("L%1").arg(layer));
        for (int head = 0; head < headCount(); ++head) {
            const QRect cell = thumbnailRect(layer, head);
            // Nearest-neighbour scaling keeps cells crisp, as in the large heatmap.
            painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
            painter.drawImage(cell, m_thumbnails[head]);
            const bool isSelected = head == selected;
            QPen frame(isSelected ? palette().color(QPalette::Highlight) : palette().color(QPalette::Mid),
                       isSelected ? 3 : 1);
            painter.setPen(frame);
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(cell.adjusted(-1, -1, 0, 0));
            QFont f = font();
            f.setBold(isSelected);
            painter.setFont(f);
            painter.setPen(palette().color(QPalette::Text));
            painter.drawText(QRect(cell.left(), cell.bottom() + 2, cell.width(), labelHeight()), Qt::AlignCenter,
                             fontMetrics().horizontalAdvance(QStringLiteral("head 00")) < cell.width()
                                 ? QStringLiteral("head %1").arg(head)
                                 : QString::number(head));
            painter.setFont(font());
        }
    }
}

void HeadsGrid::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
    for (int layer = 0; layer < layerCount(); ++layer) {
        for (int head = 0; head < headCount(); ++head) {
            if (thumbnailRect(layer, head).contains(event->position().toPoint())) {
                Q_EMIT headSelected(layer, head);
                return;
            }
        }
    }
    QWidget::mousePressEvent(event);
}

void HeadsGrid::mouseMoveEvent(QMouseEvent* event) {
    for (int layer = 0; layer < layerCount(); ++layer) {
        for (int head = 0; head < headCount(); ++head) {
            if (thumbnailRect(layer, head).contains(event->position().toPoint())) {
                setCursor(Qt::PointingHandCursor);
                setToolTip(tr("Layer %1, head %2: click to enlarge").arg(layer).arg(head));
                return;
            }
        }
    }
    unsetCursor();
    setToolTip(QString());
}

}  // namespace attnscope::views
