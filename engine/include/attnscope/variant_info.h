#pragma once
// Everything a variant is, besides its kernel: the parameter schema the CLI and the GUI build
// their forms from, and the facts the views, the trainer, the atlas and the tests read (which
// diagnostics it writes and where the window shows them, whether it approximates softmax, how it
// trains). One entry per variant in the catalog (variant_catalog.h), torch-free.

#include <attnscope/image_input.h>
#include <attnscope/pattern_reason.h>
#include <attnscope/result.h>
#include <attnscope/tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace attnscope::engine {

enum class ParamType { Bool, Int, Float, Choice, IntList, FloatList };

/// Name of a ParamType as it appears in `attnscope-cli variants --json` ("bool", "int", ...).
const char* paramTypeName(ParamType type);

/// One parameter value. Choice values are held as std::string.
using ParamValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>,
                                std::vector<double>>;
using ParamValues = std::map<std::string, ParamValue>;

/// What an image input sets a parameter to when the request does not (docs/IMAGES.md).
enum class ImageDefault {
    None,
    PixelGridWidth,  ///< pixels mode only: the grid's width (the Sparse Transformer's stride on images)
    GridWidth,       ///< pixels or patches: the grid's width
    GridPrefix,      ///< pixels or patches: the tokens before the grid (CLS)
};

/// The value `from` gives on an image of this grid; nullopt when it gives none (None, or a
/// pixels-only default on patches).
std::optional<std::int64_t> imageDefaultValue(ImageDefault from, const GridShape& grid);
/// Why, in words: "the image's width", "patches across the image", "tokens before the grid".
std::string imageDefaultReason(ImageDefault from, const GridShape& grid);

struct ParamSpec {
    std::string name;  ///< contract: exactly as the issues spell it (e.g. "causal", "window")
    ParamType type = ParamType::Int;
    ParamValue defaultValue;
    double minValue = 0;  ///< inclusive; for lists it bounds every element
    double maxValue = 0;  ///< inclusive
    std::vector<std::string> choices;  ///< for ParamType::Choice
    std::string help;
    /// Not empty: when the parameter is not given, it takes the value of this one (Transformer-XL's
    /// `memory` follows `segment`); `defaultValue` is then what it shows beside the default of that one.
    std::string defaultFrom{};
    /// A number of tokens (a window, stride, block, kept keys): the head atlas shrinks it in
    /// proportion on inputs shorter than its settings were written for (coverage_settings.h).
    bool countsTokens = false;
    /// The value an image input gives it when not set (a notice says so).
    ImageDefault imageDefault = ImageDefault::None;
    /// Not empty: "NAME=VALUE", the parameter is read only while that choice or bool parameter
    /// has that value (BigBird's `extra_global` with `form=etc`); forms disable it otherwise.
    std::string usedWhen{};
};

/// When a run writes a diagnostic.
enum class DiagnosticWhen {
    Always,
    WithinDenseLimit,  ///< only when n, m <= the request's dense limit (an n x m computation)
    OnRequest,         ///< only when a parameter asks for it (and within the dense limit)
};

/// "always" | "within dense limit" | "on request".
const char* diagnosticWhenName(DiagnosticWhen when);

/// One tensor a variant writes into AttentionResult::diagnostics.
struct DiagnosticSpec {
    std::string name;   ///< the key, e.g. "buckets"
    DType dtype = DType::F32;
    std::string shape;  ///< in words, e.g. "[H, n_hashes, n]"
    DiagnosticWhen when = DiagnosticWhen::Always;
    std::string meaning;
};

/// The page of the window's Diagnostics tab that draws the variant's inner workings
/// (views/diagnostics/: one page per kind).
enum class DiagnosticsPage {
    None,           ///< a text page listing the diagnostics
    Approximation,  ///< error against exact softmax, its error curve; Linformer's spectrum
    Lsh,            ///< hash buckets and sorted chunks (Reformer)
    Clusters,       ///< k-means clusters and routing (Routing Transformer)
    Memory,         ///< segment memory and the four score terms (Transformer-XL)
    Star,           ///< the satellites' and relay's updates over the cycles (Star-Transformer)
    Sparsity,       ///< the keys each row keeps and the softmax mass they hold (sparse patterns, top-k, entmax)
};

/// How the trainer makes the variant differentiable (engine/src/torch/train/trainable_attention.cpp).
enum class Training {
    None,       ///< not trainable
    Pattern,    ///< exact softmax restricted to its pattern (log-count bias)
    Linformer,  ///< its drawn E, F projections
    Linear,     ///< elu + 1 features
    Performer,  ///< its drawn random features
};

/// A diagnostic that puts each token in a group (Reformer's hash buckets, Routing's clusters): the
/// image view colours each pixel or patch by its group. The tensor is [H, R, n] (I64).
struct TokenGroupsSpec {
    std::string diagnostic;  ///< e.g. "buckets"
    std::string noun;        ///< one group, e.g. "bucket"
    std::string roundNoun;   ///< what R counts, e.g. "hash round"; empty when roundNames name them
    std::vector<std::string> roundNames;  ///< names of the R entries when fixed ("queries", "keys")
};

struct VariantInfo {
    std::string id;    ///< registry id, e.g. "full"
    std::string name;  ///< display name
    std::string paper; ///< citation, e.g. "Vaswani et al. 2017, arXiv 1706.03762"
    std::string summary;
    std::vector<ParamSpec> params;

    /// Exact softmax over every key: the reference the others are compared against.
    bool exact = false;
    /// Its weights estimate softmax's (kernels, low rank): the window runs the exact reference
    /// beside it and draws the approximation page.
    bool approximatesSoftmax = false;
    /// The integer parameter the error curve sweeps (empty: no curve).
    std::string errorSweepParam;
    DiagnosticsPage diagnosticsPage = DiagnosticsPage::None;
    /// Every diagnostic it writes; a run writes exactly these (tested for every variant).
    std::vector<DiagnosticSpec> diagnostics;
    /// Tensors it reads, when given, from the request's variant inputs (a `--qkv` file's tensors
    /// of these names: Transformer-XL's r_w_bias, r_r_bias, pos_keys); drawn from the seed when
    /// absent. `when` is unused.
    std::vector<DiagnosticSpec> inputs;
    /// Set when a diagnostic groups the tokens (the image view's colours per pixel).
    std::optional<TokenGroupsSpec> tokenGroups;
    /// The reasons its weights' tiles carry (its mask legend).
    std::vector<PatternReason> reasons;
    /// The settings the head atlas measures coverage with (docs/ATLAS.md); empty: none.
    std::vector<ParamValues> atlasCoverage;
    Training training = Training::None;
    /// Keys after the input's tokens (the Star-Transformer's relay: 1): a result then has m = n +
    /// extraKeys, and comparisons with other variants use its first m - extraKeys keys.
    int extraKeys = 0;
    /// The variant the window's compare view puts beside the first one until the user picks.
    bool compareDefault = false;
    /// Long Range Arena's speed-up over vanilla at 4K tokens (Tay et al. 2021, on TPU), as the
    /// issues quote it ("5.7×"); empty when the benchmark has none for this variant.
    std::string lraSpeedup;
    /// The computation of a model layer's own attention (`model_softmax`): chosen by opening a
    /// model, with the layer's settings; never offered in a picker, the atlas or the trainer.
    bool modelOnly = false;

    const ParamSpec* findParam(const std::string& param) const;
    const DiagnosticSpec* findDiagnostic(const std::string& name) const;
    const DiagnosticSpec* findInput(const std::string& name) const;
};

/// Text form of a value ("true", "64", "0.5", "union", "1,2,3").
std::string formatParamValue(const ParamValue& value);

/// Parses "NAME=VALUE" text for one parameter and checks its type and range.
/// Errors name the parameter and its allowed range (ErrorCode::InvalidArgument).
Result<ParamValue> parseParamValue(const ParamSpec& spec, const std::string& text);

/// Checks a complete set of values against the schema and fills in defaults.
/// Unknown names, wrong types and out-of-range values are InvalidArgument errors.
Result<ParamValues> resolveParams(const VariantInfo& info, const ParamValues& given);

}  // namespace attnscope::engine
