#pragma once
// Categorical colours of the pattern reasons, loaded from data (resources/colormaps/
// pattern_reasons.csv), never from code (CONVENTIONS.md rule 11).

#include <attnscope/types.h>

#include <QColor>
#include <QString>
#include <QVector>

#include <optional>

namespace attnscope::views {

class ReasonPalette {
public:
    /// Index of the extra "exact zero weight" colour, after the kPatternReasonCount reasons.
    static constexpr int kExactZero = engine::kPatternReasonCount;
    static constexpr int kSize = engine::kPatternReasonCount + 1;

    /// The palette from :/colormaps/pattern_reasons.csv; loaded once. A broken resource falls
    /// back to grey so views still draw (the views tests check the file).
    static const ReasonPalette& standard();

    /// Parses kSize lines "name,r,g,b"; the names must be patternReasonName() in enum order, then
    /// "exact_zero". Returns nullopt and sets *error otherwise.
    static std::optional<ReasonPalette> fromCsv(const QByteArray& csv, QString* error = nullptr);

    QColor color(int index) const { return index >= 0 && index < m_colors.size() ? m_colors[index] : QColor(Qt::gray); }
    QColor color(engine::PatternReason reason) const { return color(static_cast<int>(reason)); }
    const QVector<QColor>& colors() const { return m_colors; }

private:
    QVector<QColor> m_colors;
};

}  // namespace attnscope::views
