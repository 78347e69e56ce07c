#include "views/moe/expert_layers_grid.h"

#include "views/diagnostics/categorical_palette.h"
#include "views/data/token_label.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace attnscope::views {
namespace {
constexpr int kLabelWidth = 44;  // "L11" row labels
constexpr int kRowHeight = 22;
constexpr int kTokenRow = 16;    // token labels under the grid, when the cells are wide enough
constexpr int kMinLabelledCell = 14;
const QColor kDropped(170, 170, 170);
}  // namespace

ExpertLayersGrid::ExpertLayersGrid(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("moeLayersGrid"));
    setMinimumHeight(kRowHeight + kTokenRow + 8);
    setMouseTracking(true);
}

void ExpertLayersGrid::setRoutings(std::vector<std::pair<int, engine::Routing>> layers, engine::TokenizedInput input) {
    m_layers = std::move(layers);
    m_input = std::move(input);
    setMinimumHeight(std::max<int>(1, layerCount()) * kRowHeight + kTokenRow + 8);
    update();
}

void ExpertLayersGrid::clear() { setRoutings({}, {}); }

int ExpertLayersGrid::columns() const {
    if (m_layers.empty()) return 0;
    return static_cast<int>(std::min<std::int64_t>(m_layers.front().second.n, kMaxTokens));
}

QRect ExpertLayersGrid::gridRect() const {
    return QRect(kLabelWidth, 2, std::max(0, width() - kLabelWidth - 4), layerCount() * kRowHeight);
}

void ExpertLayersGrid::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const int cols = columns();
    if (cols == 0) {
        painter.drawText(rect(), Qt::AlignCenter, tr("Run on a Switch model's expert layer to see every layer's routing."));
        return;
    }
    const QRect grid = gridRect();
    const double cell = static_cast<double>(grid.width()) / cols;
    const CategoricalPalette& palette = CategoricalPalette::standard();
    for (int row = 0; row < layerCount(); ++row) {
        const auto& [layer, r] = m_layers[static_cast<std::size_t>(row)];
        const int y = grid.top() + row * kRowHeight;
        painter.setPen(palette.color(-1).darker());
        painter.drawText(QRect(0, y, kLabelWidth - 4, kRowHeight), Qt::AlignRight | Qt::AlignVCenter, tr("L%1").arg(layer));
        for (int t = 0; t < cols; ++t) {
            const std::size_t first = static_cast<std::size_t>(t) * static_cast<std::size_t>(r.k);
            QColor colour = kDropped;
            if (r.kept[first]) {
                colour = palette.color(r.expert[first]);
                colour.setAlphaF(static_cast<float>(0.3 + 0.7 * std::clamp<double>(r.gate[first], 0.0, 1.0)));
            }
            const QRectF box(grid.left() + t * cell, y + 1, std::max(1.0, cell - (cell >= 4 ? 1 : 0)), kRowHeight - 2);
            painter.fillRect(box, colour);
        }
    }
    if (cell >= kMinLabelledCell) {
        painter.setPen(palette.color(-1).darker());
        for (int t = 0; t < cols; ++t) {
            const QRectF box(grid.left() + t * cell, grid.bottom() + 2, cell, kTokenRow);
            painter.drawText(box, Qt::AlignCenter, tokenLabel(m_input.tokens[static_cast<std::size_t>(t)].text, 3));
        }
    }
}

QString ExpertLayersGrid::describeAt(const QPoint& pos) const {
    const QRect grid = gridRect();
    const int cols = columns();
    if (cols == 0 || !grid.contains(pos)) return {};
    const int row = (pos.y() - grid.top()) / kRowHeight;
    const int t = static_cast<int>((pos.x() - grid.left()) / (static_cast<double>(grid.width()) / cols));
    if (row < 0 || row >= layerCount() || t < 0 || t >= cols) return {};
    const auto& [layer, r] = m_layers[static_cast<std::size_t>(row)];
    const std::size_t first = static_cast<std::size_t>(t) * static_cast<std::size_t>(r.k);
    const QString token = t < static_cast<int>(m_input.tokens.size()) ? tokenLabel(m_input.tokens[static_cast<std::size_t>(t)].text, 24)
                                                                      : QString();
    return tr("layer %1, token %2 '%3': expert %4, gate %5%6")
        .arg(layer)
        .arg(t)
        .arg(token)
        .arg(r.expert[first])
        .arg(r.gate[first], 0, 'f', 3)
        .arg(r.kept[first] ? QString() : tr(" (dropped)"));
}

bool ExpertLayersGrid::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        const QString text = describeAt(help->pos());
        if (text.isEmpty()) QToolTip::hideText();
        else QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

}  // namespace attnscope::views
