#pragma once
// The CSV that `attnscope-cli sweep` writes (variant, n, status, wall_s, peak_rss_mib, …) read back
// as the points of a scaling plot, for the recipe's "sweep" figures.

#include "views/cost/scaling_plot.h"

#include <QString>

#include <optional>
#include <vector>

namespace attnscope::app {

/// Every row of the table: measured rows with their wall time and peak RSS, the others skipped
/// with their status and note. On a malformed file: nothing, and *error names the line and field.
std::optional<std::vector<views::ScalingPoint>> parseSweepCsv(const QString& text, QString* error);

}  // namespace attnscope::app
