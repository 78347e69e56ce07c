// HeadHeatmap's pointer and keys: the hovered cell's text (the exact weight at any pool factor),
// hover signals, zoom keys and Esc to stop a pooling.

#include "views/heatmap/head_heatmap.h"
#include "views/widgets/cell_cursor.h"
#include "views/data/colormap.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"
#include "views/widgets/matrix_plot.h"
#include "views/data/title_wrap.h"
#include "views/data/token_label.h"
#include <QComboBox>
#include <QHelpEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLoggingCategory>
#include <QProgressBar>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

QString HeadHeatmap::tokenText(std::int64_t index) const {
    if (!result()) return {};
    const auto& tokens = result()->input.tokens;
    if (index < 0 || index >= static_cast<std::int64_t>(tokens.size())) return {};
    return tokenLabel(tokens[static_cast<std::size_t>(index)].text, 24);
}

QString HeadHeatmap::hoverText(int query, int key) const {
    const engine::AttentionResult* r = shownResult();
    if (!r || m_shownHead < 0 || query < 0 || key < 0 || query >= r->n || key >= r->m) return {};
    auto describe = [this](const QString& role, int index) {
        const QString token = tokenText(index);
        return token.isEmpty() ? QStringLiteral("%1 %2").arg(role).arg(index)
                               : QStringLiteral("%1 %2 '%3'").arg(role).arg(index).arg(token);
    };
    // The zoomed region when it holds the cell, else the whole (maybe pooled) head.
    const bool inRegion = showsRegion() && query >= m_shown->rowOffset() && key >= m_shown->colOffset() &&
                          query < m_shown->rowOffset() + m_shown->rows() && key < m_shown->colOffset() + m_shown->cols();
    const HeadMatrix& mx = inRegion ? *m_shown : *m_pooled;
    const int f = mx.poolFactor();
    const auto qi = static_cast<int>((query - mx.rowOffset()) / f), ki = static_cast<int>((key - mx.colOffset()) / f);
    const double w = mx.at(qi, ki);
    const bool attended = mx.inPattern(qi, ki);
    if (f == 1 && !attended)
        return tr("%1 → %2: not in the pattern").arg(describe(tr("query"), query), describe(tr("key"), key));
    if (f == 1)
        return QStringLiteral("%1 → %2: weight %3")
            .arg(describe(tr("query"), query), describe(tr("key"), key))
            .arg(w, 0, 'f', 4);
    // A pooled cell: the exact weight under the pointer (recomputed from the result's kept state),
    // then what the cell draws for its block.
    const int q0 = query / f * f, k0 = key / f * f;
    const int q1 = std::min<int>(q0 + f, r->n) - 1, k1 = std::min<int>(k0 + f, r->m) - 1;
    QString exact;
    if (r->weights) {
        const engine::WeightTile cell = r->weights->tile(m_shownHead, query, query + 1, key, key + 1, true);
        exact = cell.reasons[0] != 0 ? QStringLiteral("%1 → %2: weight %3\n")
                                           .arg(describe(tr("query"), query), describe(tr("key"), key))
                                           .arg(cell.weights[0], 0, 'g', 4)
                        : tr("%1 → %2: not in the pattern\n").arg(describe(tr("query"), query), describe(tr("key"), key));
    }
    return exact + (mx.poolMode() == PoolMode::Mean ? tr("queries %1–%2 → keys %3–%4: mean weight %5")
                                                     : tr("queries %1–%2 → keys %3–%4: max weight %5"))
                       .arg(q0)
                       .arg(q1)
                       .arg(k0)
                       .arg(k1)
                       .arg(w, 0, 'f', 4);
}

void HeadHeatmap::onPlotMouseMove(QMouseEvent* event) {
    const QPointF pos = event->position();
    const engine::AttentionResult* r = shownResult();
    if (!r || m_shownHead < 0 || !m_plot->axisRect()->rect().contains(pos.toPoint())) {
        clearHover();
        return;
    }
    const int key = static_cast<int>(std::floor(m_plot->xAxis->pixelToCoord(pos.x()) + 0.5));
    const int query = static_cast<int>(std::floor(m_plot->yAxis->pixelToCoord(pos.y()) + 0.5));
    if (query < 0 || key < 0 || query >= r->n || key >= r->m) {
        clearHover();
        return;
    }
    if (query == m_hoverQuery && key == m_hoverKey) return;
    m_hoverQuery = query;
    m_hoverKey = key;
    Q_EMIT cellHovered(query, key);
    // Tokens are untrusted: escape them and force rich text, which QToolTip would otherwise guess.
    const QString html = QStringLiteral("<p style='white-space:pre'>%1</p>").arg(hoverText(query, key).toHtmlEscaped());
    QToolTip::showText(event->globalPosition().toPoint(), html, m_plot);
}

void HeadHeatmap::moveCursorTo(int query, int key) {
    const engine::AttentionResult* r = shownResult();
    if (!r || m_shownHead < 0 || query < 0 || key < 0 || query >= r->n || key >= r->m) return;
    scrollCellIntoView(m_plot, query, key);
    m_hoverQuery = query;
    m_hoverKey = key;
    setMarkedCell(query, key);
    Q_EMIT cellHovered(query, key);
    showCellText(m_plot, query, key, hoverText(query, key));
}

void HeadHeatmap::clearHover() {
    if (m_hoverQuery < 0 && m_hoverKey < 0) return;
    m_hoverQuery = m_hoverKey = -1;
    QToolTip::hideText();
    Q_EMIT cellHovered(-1, -1);
}

bool HeadHeatmap::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_plot && event->type() == QEvent::Leave) clearHover();
    if (watched == m_plot && event->type() == QEvent::ToolTip && m_compactTitle) {
        // Over the shortened title: the whole of it (every parameter, head, n, source).
        const QPoint pos = static_cast<QHelpEvent*>(event)->pos();
        if (m_title->outerRect().contains(pos)) {
            QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(), m_fullTitle, m_plot);
            return true;
        }
    }
    // (the token labels follow the new size after the next layout: fitAxisRect)
    if (watched == m_plot && event->type() == QEvent::Resize) updateTitle();  // re-wrap to the new width
    if (watched == m_plot && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        const bool in = key->matches(QKeySequence::ZoomIn) || key->key() == Qt::Key_Plus || key->key() == Qt::Key_Equal;
        const bool out = key->matches(QKeySequence::ZoomOut) || key->key() == Qt::Key_Minus;
        if (in || out) {
            zoomBy(in ? kKeyZoomFactor : 1.0 / kKeyZoomFactor);
            return true;
        }
        if (const engine::AttentionResult* r = shownResult(); r && m_shownHead >= 0) {
            const int fromQuery = m_hoverQuery >= 0 ? m_hoverQuery : m_markedQuery;
            const int fromKey = m_hoverKey >= 0 ? m_hoverKey : m_markedKey;
            if (const auto cell = steppedCell(*key, fromQuery, fromKey, r->n, r->m)) {
                moveCursorTo(cell->y(), cell->x());
                return true;
            }
        }
        if (key->key() == Qt::Key_Escape && isPooling()) {
            stopPooling();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace attnscope::views
