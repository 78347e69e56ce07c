#pragma once
// "window=4" for a view's title; an empty list reads "global=none" (not "global=").

#include <attnscope/variant_info.h>

#include <QString>

#include <string>

namespace attnscope::views {

QString paramAssignment(const std::string& name, const engine::ParamValue& value);

}  // namespace attnscope::views
