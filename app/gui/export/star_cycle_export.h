#pragma once
// The Star-Transformer player's cycles for slides: one PNG per cycle (star-cycle-01.png …, each
// with its title, caption and sidecar like any figure) and one strip of every cycle side by side
// (star-cycles.png). Headless: a folder in, a message out.

#include <QString>

namespace attnscope::views {
class StarPlayer;
}

namespace attnscope::app {

struct StarCycleExport {
    QString error;  ///< empty on success
    int frames = 0;
    QString stripPath;
};

/// Writes the frames and the strip of `player`'s pass into `folder` at `dpi`; the player shows
/// its cycle again afterwards.
StarCycleExport exportStarCycles(views::StarPlayer* player, const QString& folder, int dpi);

}  // namespace attnscope::app
