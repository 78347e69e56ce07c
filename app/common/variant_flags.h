#pragma once
// The window's variant flags (--variant, --param, --compare, --compare-param) checked against the
// catalog before the window opens, as the command line checks its own: a bad one is refused with
// exit status 2 and a line naming it, never replaced by the default variant.

#include <string>
#include <vector>

namespace attnscope::app {

struct VariantFlags {
    std::string variant;                     ///< --variant (empty: the settings' variant, `fallback`)
    std::string fallback;                    ///< the variant the window shows without --variant
    std::vector<std::string> params;         ///< --param NAME=VALUE
    std::string compare;                     ///< --compare A,B,C
    std::vector<std::string> compareParams;  ///< --compare-param [ID:]NAME=VALUE (no ID: for A)
};

/// One --compare-param split into the compared variant it is for and its NAME=VALUE: "ID:NAME=VALUE"
/// is for the --compare entry ID, a plain "NAME=VALUE" for the first entry (`firstId`).
struct CompareParam {
    std::string id;
    std::string assignment;
};
CompareParam splitCompareParam(const std::string& text, const std::string& firstId);

/// The first problem, as one line ("--variant 'frobnicate': unknown variant (available: …)"), or
/// an empty string when every flag names a variant and parameters it has, in range.
std::string checkVariantFlags(const VariantFlags& flags);

}  // namespace attnscope::app
