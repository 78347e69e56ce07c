#pragma once
// A routing (attnscope/moe_router.h) as files: the moe.* tensors in safetensors with the summary
// in its metadata (`attnscope-cli route --out`, the Experts tab's Export Data), and one CSV row per
// (token, choice) for spreadsheets (`route --csv`, Export Data as .csv).

#include <attnscope/moe_router.h>
#include <attnscope/result.h>
#include <attnscope/types.h>

#include <string>

namespace attnscope::engine {

/// The summary as JSON (tokens, experts, k, groups, expert_capacity, dropped, aux_loss, z_loss,
/// expert_counts, kept_counts, dropped_as), ending in a newline.
std::string routingSummaryJson(const Routing& routing, const std::string& droppedAs);

/// moe.router_logits [n, E], moe.router_probs [n, E], moe.expert / moe.gate / moe.position /
/// moe.kept [n, k], moe.expert_counts / moe.kept_counts [E]; metadata "attnscope.routing" holds
/// routingSummaryJson. Written atomically.
Result<void> writeRoutingFile(const std::string& path, const Routing& routing, const std::string& droppedAs);

/// "token,text,choice,expert,gate,router_prob,position,kept" then one row per (token, choice):
/// choice 1 … k, the expert's router probability, the 1-based slot, kept 1 or 0. `tokens` (may be
/// null) gives the text column (quoted, quotes doubled, line breaks as \n); n must match.
std::string routingCsv(const Routing& routing, const TokenizedInput* tokens);

/// routingCsv written atomically.
Result<void> writeRoutingCsv(const std::string& path, const Routing& routing, const TokenizedInput* tokens);

}  // namespace attnscope::engine
