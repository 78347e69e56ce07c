#pragma once
// What a heatmap's title says of the head it draws: the result's name, head, length and source,
// how the cells were pooled, and the parameters on a line of their own (the layer's own attention
// in words instead); and the compare panes' one-line form.

#include "views/data/pool_mode.h"

#include <attnscope/types.h>

#include <QFont>
#include <QHash>
#include <QString>
#include <QStringList>

namespace attnscope::views {

struct HeatmapTitleFacts {
    const engine::RunResult* run = nullptr;
    int resultIndex = 0;
    QHash<QString, QString> variantNames;
    int head = 0;
    int poolFactor = 1;
    PoolMode poolMode = PoolMode::Max;
    bool zoomedRegion = false;  ///< a zoomed region drawn at full resolution
    bool weightsKept = true;
    QString poolingNote;  ///< " — pooling head 3: 40 %…", or empty
};

struct HeatmapTitle {
    QString name;           ///< the result's display name
    QString text;           ///< the whole title (lines)
    QStringList changed;    ///< the parameters that differ from the variant's defaults ("k=8")
};

HeatmapTitle heatmapTitle(const HeatmapTitleFacts& facts);

/// One line within `room` pixels: the display name while it fits, else the variant id, with the
/// changed parameters in brackets ("bigbird (pad=true)"), elided.
QString compactHeatmapTitle(const QString& prefix, const HeatmapTitle& title, const std::string& variantId, const QFont& font,
                            int room);

}  // namespace attnscope::views
