// A batch-export recipe (`attnscope export RECIPE`): every key, variant, parameter, figure and the
// files it names checked against the registry. Part 0 is the recipe; parts 1 and 2, when present,
// are the files "input.txt" and "sweep.csv" beside it (fuzz_files.h), which recipes may name.
#include "fuzz_files.h"

#include "gui/recipe/recipe.h"

#include <attnscope/variant_catalog.h>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static ScratchFolder scratch;
    scratch.clear();
    const auto parts = splitFileParts(data, size);
    if (parts.size() > 1) scratch.write("input.txt", parts[1]);
    if (parts.size() > 2) scratch.write("sweep.csv", parts[2]);
    const QByteArray recipe(parts[0].data(), static_cast<qsizetype>(parts[0].size()));
    attnscope::app::RecipeError error;
    auto parsed = attnscope::app::RecipeParser::parse(recipe, QString::fromStdString(scratch.folder()),
                                                      QStringLiteral("fuzzed.json"), attnscope::engine::variantCatalog(), &error);
    if (parsed) (void)parsed->outputFiles();
    return 0;
}
