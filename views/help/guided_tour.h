#pragma once
// Help ▸ Guided Tour: a walk through the window on the bundled sample, one step per idea. Each
// step says which tab, variant and compared variants it shows; the window sets them and runs,
// the panel shows the step's text. Written for a student who has never seen the tool.

#include <QString>
#include <QStringList>
#include <vector>

namespace attnscope::views {

struct TourStep {
    QString view;         ///< tab: heatmap, mask, compare, diagnostics, links, cost, atlas
    QString variant;      ///< variant id to select; empty = keep
    QStringList compare;  ///< "Compare with" variant ids; empty = keep
    bool sampleModel = false;  ///< open the trained sample model first
    QString title;
    QString text;  ///< plain text
};

/// The steps, in order (resources/tour/guided_tour.json; every variant id is the catalog's, as
/// tests/views/test_guided_tour.cpp checks).
const std::vector<TourStep>& guidedTour();

}  // namespace attnscope::views
