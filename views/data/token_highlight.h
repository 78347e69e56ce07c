#pragma once
// Tokens found with Edit ▸ Find Token (Ctrl+F), marked in a matrix view: a translucent band over
// each found token's row (as a query) and column (as a key). The search itself is
// findTokens(): case-insensitive, on the tokens' text and, where tokens are pieces of words
// (bytes, characters, BPE pieces), on the source text they came from.

#include <attnscope/types.h>

#include <QString>
#include <QVector>

#include <vector>

class QCustomPlot;
class QCPItemRect;

namespace attnscope::views {

/// Indices of the tokens whose text contains `needle` (case-insensitive; surrounding spaces of
/// the needle and the token's own leading space marker are ignored); empty for an empty needle.
QVector<int> findTokens(const std::vector<engine::Token>& tokens, const QString& needle);

/// The tokens findTokens(input.tokens, needle) finds, and every token whose byte span covers part
/// of an occurrence of `needle` in the source text (case-insensitive): "teacher" finds its seven
/// byte tokens, or the two BPE pieces "te" + "acher". In input order, each once.
QVector<int> findTokens(const engine::TokenizedInput& input, const QString& needle);

class TokenHighlightBands {
public:
    /// At most this many runs of neighbouring tokens are banded (beyond it the bands would cover
    /// the matrix).
    static constexpr int kMaxBands = 64;
    /// Runs up to this long are washed in orange; longer ones outlined only.
    static constexpr int kMaxWashedRun = 3;

    /// Replaces the bands of `plot` by those of `tokens` in an n × m matrix (query rows, key
    /// columns); queues a replot.
    void show(QCustomPlot* plot, const QVector<int>& tokens, long long n, long long m);
    int count() const { return static_cast<int>(m_items.size()); }

private:
    std::vector<QCPItemRect*> m_items;
};

}  // namespace attnscope::views
