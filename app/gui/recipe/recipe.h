#pragma once
// A batch-export recipe (docs/RECIPES.md): inputs, run settings, named variants with their
// parameters, and the figures to write. Parsing checks everything before anything runs: unknown
// keys (named with their path), variants and parameters against the registry's schemas, file
// names, and it reads the input texts.

#include "gui/export/figure_format.h"

#include "views/data/heatmap_options.h"
#include "views/cost/scaling_plot.h"

#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace attnscope::app {

struct RecipeInput {
    QString name;
    QString text;
    QString source;  ///< the text file as written in the recipe; empty for inline text
};

struct RecipeVariant {
    QString name;  ///< the recipe's name for this entry (figures refer to it)
    QString id;    ///< registry id
    engine::ParamValues params;  ///< checked against the schema; missing names take defaults
};

struct RecipeFigure {
    QString file;  ///< base name; each format adds its suffix, the sidecar is FILE.json
    QString view;  ///< one of Recipe::viewNames()
    int input = 0;            ///< index into Recipe::inputs
    int variant = 0;          ///< index into Recipe::variants
    /// Compare view: the 1–3 variants shown beside `variant` (indexes into Recipe::variants).
    std::vector<int> compareWith;
    int head = 0;
    QSize size{800, 600};     ///< logical pixels (1/96 inch) of the view
    int dpi = 150;
    std::vector<FigureFormat> formats{FigureFormat::Png};
    bool sidecar = true;
    /// The 16:9 slide layout (FigureRequest::slide) instead of the figure's own size.
    bool slide = false;
    views::HeatmapOptions heatmap;  ///< heatmap and compare views
    bool maskWeights = false;       ///< mask view: shade allowed cells by weight
    /// Sweep view: the CSV of `attnscope-cli sweep` (as written in the recipe) and its rows.
    QString sweepFile;
    std::vector<views::ScalingPoint> sweep;

    /// The files this figure writes, in order: one per format, then the sidecar.
    QStringList outputFiles() const;
};

struct Recipe {
    /// The format version this build reads; a recipe with a larger "recipe" value is refused.
    static constexpr int kVersion = 1;
    static constexpr const char* kManifestName = "manifest.json";

    QString title;
    std::vector<RecipeInput> inputs;
    engine::TokenizerKind tokenizer = engine::TokenizerKind::Words;
    engine::ProjectionSpec projection;
    std::vector<RecipeVariant> variants;
    std::vector<RecipeFigure> figures;

    /// Every file a run writes except the manifest, in figure order.
    QStringList outputFiles() const;
    static QStringList viewNames();  ///< heatmap, mask, compare, links, diagnostics, heads, sweep
};

struct RecipeError {
    enum class Kind {
        Invalid,  ///< the recipe breaks a rule (exit status 2)
        Input,    ///< a file it names cannot be read (exit status 1)
    };
    Kind kind = Kind::Invalid;
    QString message;  ///< "RECIPE: figures[2]: unknown key \"colour\" (allowed: …)"
};

class RecipeParser {
public:
    /// Reads and checks the recipe at `path`; input text files are relative to its folder.
    static std::optional<Recipe> load(const QString& path, const std::vector<engine::VariantInfo>& registry,
                                      RecipeError* error);
    /// The same for recipe bytes; `baseDir` resolves text files, `displayName` starts messages.
    static std::optional<Recipe> parse(const QByteArray& json, const QString& baseDir, const QString& displayName,
                                       const std::vector<engine::VariantInfo>& registry, RecipeError* error);
};

}  // namespace attnscope::app
