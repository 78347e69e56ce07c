#include "views/data/token_highlight.h"

#include "views/widgets/qcp.h"

#include <algorithm>
#include <cstdint>
#include <utility>

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

namespace {

// For each UTF-16 position of `text` (and its end), the UTF-8 byte offset it starts at.
std::vector<std::int64_t> utf8Offsets(const QString& text) {
    std::vector<std::int64_t> at(static_cast<std::size_t>(text.size()) + 1, 0);
    std::int64_t bytes = 0;
    for (qsizetype i = 0; i < text.size(); ++i) {
        at[static_cast<std::size_t>(i)] = bytes;
        const char16_t unit = text[i].unicode();
        if (QChar::isHighSurrogate(unit)) bytes += 4;  // (the pair's low half adds nothing)
        else if (QChar::isLowSurrogate(unit)) bytes += 0;
        else bytes += unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3;
    }
    at.back() = bytes;
    return at;
}

// The byte ranges [begin, end) of the needle's occurrences in the source text, in order, apart.
std::vector<std::pair<std::int64_t, std::int64_t>> occurrences(const std::string& source, const QString& needle) {
    const QString text = QString::fromStdString(source);
    const std::vector<std::int64_t> at = utf8Offsets(text);
    std::vector<std::pair<std::int64_t, std::int64_t>> found;
    for (qsizetype p = text.indexOf(needle, 0, Qt::CaseInsensitive); p >= 0;
         p = text.indexOf(needle, p + needle.size(), Qt::CaseInsensitive))
        found.emplace_back(at[static_cast<std::size_t>(p)], at[static_cast<std::size_t>(p + needle.size())]);
    return found;
}

}  // namespace

QVector<int> findTokens(const engine::TokenizedInput& input, const QString& needle) {
    QVector<int> byText = findTokens(input.tokens, needle);
    const QString wanted = needle.trimmed();
    if (wanted.isEmpty() || input.text.empty()) return byText;
    const auto spans = occurrences(input.text, wanted);
    if (spans.empty()) return byText;
    std::vector<bool> marked(input.tokens.size(), false);
    for (int i : byText) marked[static_cast<std::size_t>(i)] = true;
    for (std::size_t i = 0; i < input.tokens.size(); ++i) {
        const engine::Token& token = input.tokens[i];
        if (token.byteEnd <= token.byteBegin) continue;  // special tokens cover no text
        // the first occurrence ending after the token's start; it overlaps when it starts before its end
        const auto it = std::upper_bound(spans.begin(), spans.end(), token.byteBegin,
                                         [](std::int64_t at, const auto& span) { return at < span.second; });
        if (it != spans.end() && it->first < token.byteEnd) marked[i] = true;
    }
    QVector<int> out;
    for (std::size_t i = 0; i < marked.size(); ++i)
        if (marked[i]) out << static_cast<int>(i);
    return out;
}

void TokenHighlightBands::show(QCustomPlot* plot, const QVector<int>& tokens, long long n, long long m) {
    for (QCPItemRect* item : m_items) plot->removeItem(item);
    m_items.clear();
    const QColor edge(255, 140, 0);  // orange: apart from viridis, the reason palette and the cursor's red
    QColor fill = edge;
    fill.setAlpha(55);
    // a long run is outlined, not washed: its cells stay readable (a generated passage)
    const auto band = [&](double x0, double y0, double x1, double y1, bool washed) {
        auto* rect = new QCPItemRect(plot);
        rect->setPen(QPen(edge, washed ? 1.0 : 2.0));
        rect->setBrush(washed ? QBrush(fill) : QBrush(Qt::NoBrush));
        rect->setSelectable(false);
        rect->topLeft->setCoords(x0, y0);
        rect->bottomRight->setCoords(x1, y1);
        m_items.push_back(rect);
    };
    // neighbouring tokens share one band (a generated passage is one block, however long)
    QVector<int> sorted = tokens;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    int shown = 0;
    for (qsizetype i = 0; i < sorted.size();) {
        qsizetype j = i + 1;
        while (j < sorted.size() && sorted[j] == sorted[j - 1] + 1) ++j;
        if (shown++ >= kMaxBands) break;
        const double first = sorted[i] - 0.5, last = sorted[j - 1] + 0.5;
        const bool washed = j - i <= kMaxWashedRun;
        if (sorted[i] < n) band(-0.5, first, static_cast<double>(m) - 0.5, std::min<double>(last, static_cast<double>(n) - 0.5), washed);  // rows, as queries
        if (sorted[i] < m) band(first, -0.5, std::min<double>(last, static_cast<double>(m) - 0.5), static_cast<double>(n) - 0.5, washed);  // columns, as keys
        i = j;
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace attnscope::views
