// HeadHeatmap's cells under the pointer and the keyboard (head_heatmap.cpp holds the plot): the
// hovered cell's text (the exact weight at any pool factor), the title's tooltip and Esc to stop
// a pooling; CellPointer moves the cursor and zooms.

#include "views/heatmap/head_heatmap.h"

#include "views/data/token_label.h"
#include "views/heatmap/heatmap_cell_text.h"
#include "views/widgets/matrix_plot.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QToolTip>

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
    // The zoomed region when it holds the cell, else the whole (maybe pooled) head.
    const bool inRegion = showsRegion() && query >= m_shown->rowOffset() && key >= m_shown->colOffset() &&
                          query < m_shown->rowOffset() + m_shown->rows() && key < m_shown->colOffset() + m_shown->cols();
    return heatmapCellText(*r, m_shownHead, inRegion ? *m_shown : *m_pooled, [this](std::int64_t i) { return tokenText(i); },
                           query, key);
}

void HeadHeatmap::moveCursorTo(int query, int key) { m_pointer->moveCursorTo(query, key); }

bool HeadHeatmap::eventFilter(QObject* watched, QEvent* event) {
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
    if (watched == m_plot && event->type() == QEvent::KeyPress && static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape &&
        isPooling()) {
        stopPooling();
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace attnscope::views
