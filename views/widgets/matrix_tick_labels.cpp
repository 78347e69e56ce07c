#include "views/widgets/matrix_tick_labels.h"

#include "views/data/token_label.h"
#include "views/widgets/qcp.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>

namespace attnscope::views {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("attnscope::views::MatrixTickLabels", text); }

int fixedTickCount(const QCPAxis* axis) {
    const auto fixed = qSharedPointerDynamicCast<QCPAxisTickerFixed>(axis->ticker());
    return fixed ? fixed->tickCount() : 0;
}

}  // namespace

void MatrixTickLabels::update(QCustomPlot* plot, const Matrix& matrix, const QFont& font) {
    const auto visible = [](QCPAxis* axis) { return axis->range().size(); };
    // Token text only where it can be read: at most kMaxTokenTicks cells visible, full resolution.
    const bool drawn = matrix.queries > 0 && matrix.keys > 0 && matrix.fullResolution;
    const bool keyTokens = drawn && matrix.tokenCount == matrix.keys && visible(plot->xAxis) <= kMaxTokenTicks + 0.5;
    const bool queryTokens = drawn && matrix.tokenCount == matrix.queries && visible(plot->yAxis) <= kMaxTokenTicks + 0.5;
    label(plot->xAxis, keyTokens, matrix, font, tr("key token"), tr("key index"));
    label(plot->yAxis, queryTokens, matrix, font, tr("query token"), tr("query index"));
    plot->xAxis->setTickLabelRotation(keyTokens ? -90 : 0);
    m_keyTokens = keyTokens;
    m_queryTokens = queryTokens;
}

void MatrixTickLabels::label(QCPAxis* axis, bool useTokens, const Matrix& matrix, const QFont& font, const QString& tokenLabel,
                             const QString& indexLabel) {
    QFont tickFont = font;
    if (useTokens) {
        const QCPRange range = axis->range();
        const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::ceil(range.lower)));
        const auto last = std::min<std::int64_t>(matrix.tokenCount - 1, static_cast<std::int64_t>(std::floor(range.upper)));
        const double shown = static_cast<double>(last - first + 1);
        tickFont.setPointSizeF(std::max(7.0, std::min(9.0, 9.0 - (shown - 32) / 16.0)));
        // Every token whose label has room (a line of text per label); otherwise every step-th,
        // at multiples of the step so labels stay put while panning.
        const double pixels = axis->orientation() == Qt::Horizontal ? axis->axisRect()->width() : axis->axisRect()->height();
        const int step = tokenLabelStep(pixels, range.size(), tickFont);
        (axis->orientation() == Qt::Horizontal ? m_keyLabelStep : m_queryLabelStep) = step;
        auto ticker = QSharedPointer<QCPAxisTickerText>::create();
        for (std::int64_t i = first; i <= last; ++i)
            if (i % step == 0) ticker->addTick(static_cast<double>(i), matrix.tokenText(i));
        axis->setTicker(ticker);
        // Say that labels were left out, or a reader takes the shown ones for neighbours.
        axis->setLabel(step > 1 ? tr("%1 (1 in %2 labelled)").arg(tokenLabel).arg(step) : tokenLabel);
    } else {
        auto ticker = qSharedPointerDynamicCast<QCPAxisTickerFixed>(axis->ticker());
        if (!ticker) {
            ticker = QSharedPointer<QCPAxisTickerFixed>::create();
            ticker->setTickStep(1.0);
            ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);  // integer indices only
            axis->setTicker(ticker);
        }
        ticker->setTickCount(indexTickCount(axis, tickFont, std::max(matrix.queries, matrix.keys)));
        axis->setLabel(indexLabel);
    }
    axis->setTickLabelFont(tickFont);
}

bool MatrixTickLabels::refit(QCustomPlot* plot, const Matrix& matrix, const QFont& font) {
    // Every replot lays out; the labels are rebuilt only for a new size.
    const QRect rect = plot->axisRect()->rect();
    if (rect.width() == m_rectWidth && rect.height() == m_rectHeight) return false;
    m_rectWidth = rect.width();
    m_rectHeight = rect.height();
    const int keyStep = m_keyLabelStep, queryStep = m_queryLabelStep;
    const int keyTicks = fixedTickCount(plot->xAxis), queryTicks = fixedTickCount(plot->yAxis);
    update(plot, matrix, font);
    return keyStep != m_keyLabelStep || queryStep != m_queryLabelStep || keyTicks != fixedTickCount(plot->xAxis) ||
           queryTicks != fixedTickCount(plot->yAxis);
}

int MatrixTickLabels::indexTickCount(const QCPAxis* axis, const QFont& font, std::int64_t largestIndex) {
    // As many ticks as their labels fit with a label's width between them (QCP may round the step
    // down to 1, 2, 2.5 or 5 times a power of ten: up to 1.4 times the count asked for).
    const QFontMetricsF metrics(font);
    const bool horizontal = axis->orientation() == Qt::Horizontal;
    const double pixels = horizontal ? axis->axisRect()->width() : axis->axisRect()->height();
    const double label = horizontal ? metrics.horizontalAdvance(QString::number(std::max<std::int64_t>(largestIndex, 10)))
                                    : metrics.height();
    return std::clamp(static_cast<int>(pixels / (2.0 * label) / 1.4), 2, 8);
}

}  // namespace attnscope::views
