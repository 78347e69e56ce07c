#pragma once
// A session file's choices checked against the variants this build has, before the window applies
// any of them (a refused session changes nothing). Kept apart from the file format (session.h),
// which is parsed without the catalog.

#include "gui/settings/session.h"

#include <attnscope/variant_info.h>

#include <QString>

#include <optional>
#include <utility>
#include <vector>

namespace attnscope::app {

/// A session checked against the variants this build has: the schemas of its variant and its
/// compared ones, with their parameters as values (what the window applies).
struct ResolvedSession {
    /// The variant, or null when the session shows its model layer's own attention.
    const engine::VariantInfo* variant = nullptr;
    bool ownAttention = false;
    engine::ParamValues params;
    std::vector<std::pair<const engine::VariantInfo*, engine::ParamValues>> compared;
};

/// Checks `session` against `variants`: its variant and compared ones exist, their parameters fit
/// the schemas, at most `maxCompared` compared rows. nullopt and *error ("… Nothing was
/// changed.") when it does not fit.
std::optional<ResolvedSession> resolveSession(const SessionState& session, const std::vector<engine::VariantInfo>& variants,
                                              int maxCompared, QString* error);

}  // namespace attnscope::app
