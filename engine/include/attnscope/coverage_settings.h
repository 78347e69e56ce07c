#pragma once
// The head atlas's coverage settings (docs/ATLAS.md, "Coverage settings"): which efficient
// variants, with which parameters, the atlas measures against every head; their defaults fitted
// to the input's length, and the text form `VARIANT[:NAME=VALUE,...]` that the CLI's --coverage
// and the window's Atlas tab both read and write.

#include <attnscope/result.h>
#include <attnscope/variant_info.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

/// One efficient variant with its parameters, as the atlas's coverage columns name it.
struct CoverageSetting {
    std::string label;   ///< e.g. "longformer window=16"; empty = built from id and params
    std::string variantId;
    ParamValues params;  ///< `causal` follows the model unless given
};

/// The length the catalog's coverage settings are written for: at n >= this, they are used as
/// they are; below it, every parameter that counts tokens shrinks in proportion.
constexpr std::int64_t kCoverageReferenceLength = 128;

/// Every catalog entry's atlasCoverage, as written (for kCoverageReferenceLength tokens or more).
std::vector<CoverageSetting> defaultCoverageSettings();

/// The default settings fitted to an input of n tokens: each parameter that counts tokens
/// (ParamSpec::countsTokens: windows, strides, blocks, top-k's k, Linformer's k) becomes
/// round(value · n / 128), at least 1 and the parameter's minimum, never more than written;
/// settings that become equal are kept once. At n >= 128 this is defaultCoverageSettings().
std::vector<CoverageSetting> coverageSettingsFor(std::int64_t n);

/// Parses "VARIANT[:NAME=VALUE[,NAME=VALUE...]]" (spaces around the parts are ignored) against
/// the catalog; the error names the part at fault.
Result<CoverageSetting> parseCoverageSetting(const std::string& text);

/// The text form parseCoverageSetting reads back: "longformer:window=8", "star".
std::string coverageSettingText(const CoverageSetting& setting);

}  // namespace attnscope::engine
