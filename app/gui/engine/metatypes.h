#pragma once
// Engine values that cross threads in queued signals (CONVENTIONS.md §3: only immutable values).

#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include <QMetaType>

#include <memory>
#include <vector>

Q_DECLARE_METATYPE(std::shared_ptr<const attnscope::engine::RunResult>)
Q_DECLARE_METATYPE(std::vector<attnscope::engine::VariantInfo>)

namespace attnscope::app {

/// Registers the types above with qRegisterMetaType; idempotent and thread-safe.
void registerEngineMetaTypes();

}  // namespace attnscope::app
