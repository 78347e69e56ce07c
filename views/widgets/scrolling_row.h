#pragma once
// A row of controls that scrolls sideways instead of setting its window's minimum width (the
// heatmap's toolbar asked for 771 pixels, the expert-routing controls for 830: with the settings
// column and a help or tour panel beside them, more than a 1366-pixel screen).

class QScrollArea;
class QWidget;

namespace attnscope::views {

/// `row` inside a frameless scroll area of `parent`: as tall as the row, a horizontal bar only
/// when the row is wider than the room there is. Carries the row's export-skip property.
QScrollArea* scrollingRow(QWidget* row, QWidget* parent);

}  // namespace attnscope::views
