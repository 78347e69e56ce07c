#pragma once
// The text half of the Experts tab's "All layers" page for a Switch model: the tokens each expert
// of the chosen layer takes most, every expert layer's load (assigned and kept per expert, dead
// experts flagged), and for top-k the chosen layer's co-activation counts. HTML for a QTextBrowser.

#include <attnscope/moe_router.h>
#include <attnscope/types.h>

#include <QString>

#include <utility>
#include <vector>

namespace attnscope::views {

/// `layers`: (layer, routing) per expert layer; `selected` the layer the tab routes.
QString expertReportHtml(const std::vector<std::pair<int, engine::Routing>>& layers, int selected,
                         const engine::TokenizedInput& input);

}  // namespace attnscope::views
