#pragma once
// Plot titles that wrap at their separators instead of being clipped when a view is narrow.

#include <QFont>
#include <QString>

namespace attnscope::views {

/// Breaks every line of `text` wider than `width` pixels (in `font`) after its " — " and ", "
/// separators, greedily, so that a long title wraps instead of losing both ends to clipping.
/// A piece wider than `width` on its own stays whole; width <= 0 (not laid out yet) changes nothing.
QString wrapTitle(const QString& text, const QFont& font, int width);

}  // namespace attnscope::views
