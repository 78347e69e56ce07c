#include "views/token_highlight.h"

#include "views/qcp.h"

namespace attnscope::views {

QVector<int> findTokens(const std::vector<engine::Token>& tokens, const QString& needle) {
    QVector<int> out;
    const QString wanted = needle.trimmed();
    if (wanted.isEmpty()) return out;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        QString text = QString::fromStdString(tokens[i].text).trimmed();
        // Byte-level BPE marks a leading space with "Ġ", SentencePiece with "▁".
        if (text.startsWith(QChar(0x0120)) || text.startsWith(QChar(0x2581))) text.remove(0, 1);
        if (text.contains(wanted, Qt::CaseInsensitive)) out << static_cast<int>(i);
    }
    return out;
}

void TokenHighlightBands::show(QCustomPlot* plot, const QVector<int>& tokens, long long n, long long m) {
    for (QCPItemRect* item : m_items) plot->removeItem(item);
    m_items.clear();
    const QColor edge(255, 140, 0);  // orange: apart from viridis, the reason palette and the cursor's red
    QColor fill = edge;
    fill.setAlpha(55);
    const auto band = [&](double x0, double y0, double x1, double y1) {
        auto* rect = new QCPItemRect(plot);
        rect->setPen(QPen(edge, 1.0));
        rect->setBrush(fill);
        rect->setSelectable(false);
        rect->topLeft->setCoords(x0, y0);
        rect->bottomRight->setCoords(x1, y1);
        m_items.push_back(rect);
    };
    int shown = 0;
    for (int t : tokens) {
        if (shown++ >= kMaxBands) break;
        if (t < n) band(-0.5, t - 0.5, static_cast<double>(m) - 0.5, t + 0.5);  // its row, as a query
        if (t < m) band(t - 0.5, -0.5, t + 0.5, static_cast<double>(n) - 0.5);  // its column, as a key
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace attnscope::views
