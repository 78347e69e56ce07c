#pragma once
// The query and key axes of a matrix plot: token text while at most kMaxTokenTicks cells are
// visible at full resolution (every step-th token when their labels would overlap, the axis label
// saying so), indices with ticks spaced by their labels' size otherwise.

#include <QString>

#include <cstdint>
#include <functional>

class QCPAxis;
class QCustomPlot;
class QFont;
class QSize;

namespace attnscope::views {

class MatrixTickLabels {
public:
    /// An axis shows token text while at most this many queries/keys are visible, indices above.
    static constexpr int kMaxTokenTicks = 64;

    /// What the plot draws: queries × keys, whether at full resolution, and the input's tokens
    /// (`tokenCount` texts; token axes only when they count the queries or keys).
    struct Matrix {
        std::int64_t queries = 0, keys = 0;  ///< 0: nothing drawn
        bool fullResolution = true;
        std::int64_t tokenCount = 0;
        std::function<QString(std::int64_t)> tokenText;
    };

    /// Labels both axes of `plot` for `matrix` in `font` (the widget's).
    void update(QCustomPlot* plot, const Matrix& matrix, const QFont& font);
    /// After a layout pass: labels again when the axis rect's size changed (the cells' size is
    /// known only then); true when the labels changed and the plot needs drawing again.
    bool refit(QCustomPlot* plot, const Matrix& matrix, const QFont& font);

    bool keyTokens() const { return m_keyTokens; }
    bool queryTokens() const { return m_queryTokens; }
    int keyLabelStep() const { return m_keyLabelStep; }
    int queryLabelStep() const { return m_queryLabelStep; }
    void clearTokens() { m_keyTokens = m_queryTokens = false; }

    /// Ticks of an index axis whose labels never collide at its current length.
    static int indexTickCount(const QCPAxis* axis, const QFont& font, std::int64_t largestIndex);

private:
    void label(QCPAxis* axis, bool useTokens, const Matrix& matrix, const QFont& font, const QString& tokenLabel,
               const QString& indexLabel);

    bool m_keyTokens = false, m_queryTokens = false;
    int m_keyLabelStep = 1, m_queryLabelStep = 1;
    int m_rectWidth = -1, m_rectHeight = -1;  // the axis rect the token labels were thinned for
};

}  // namespace attnscope::views
