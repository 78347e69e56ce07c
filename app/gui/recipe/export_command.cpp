#include "gui/recipe/export_command.h"

#include "gui/engine/local_engine_backend.h"
#include "gui/recipe/recipe.h"
#include "gui/recipe/recipe_runner.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <cstdio>
#include <cstring>

namespace attnscope::app {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("ExportCommand", text); }

void printLine(const QString& text) {
    std::fprintf(stderr, "attnscope export: %s\n", qPrintable(text));
    std::fflush(stderr);
}

}  // namespace

bool isExportCommand(int argc, char** argv) { return argc >= 2 && std::strcmp(argv[1], "export") == 0; }

int runExportCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(tr("Render the figures a recipe lists (docs/RECIPES.md) without opening a window."));
    parser.addHelpOption();
    const QCommandLineOption outDirOption(QStringLiteral("out-dir"), tr("Folder for the figures and manifest.json."),
                                          QStringLiteral("DIR"));
    parser.addOption(outDirOption);
    parser.addPositionalArgument(QStringLiteral("export"), tr("The subcommand."));
    parser.addPositionalArgument(QStringLiteral("RECIPE.json"), tr("The recipe."));
    if (!parser.parse(arguments)) {
        printLine(parser.errorText());
        return 2;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        std::fprintf(stdout, "%s", qPrintable(parser.helpText()));
        return 0;
    }
    const QStringList positional = parser.positionalArguments();  // "export", RECIPE
    if (positional.size() != 2) {
        printLine(tr("usage: attnscope export RECIPE.json --out-dir DIR"));
        return 2;
    }
    if (!parser.isSet(outDirOption) || parser.value(outDirOption).isEmpty()) {
        printLine(tr("missing --out-dir DIR (where the figures and manifest.json go)"));
        return 2;
    }
    const QString recipePath = positional.at(1);
    const QString outDir = parser.value(outDirOption);

    // The engine runs on this thread: no window is open, so nothing waits on the event loop.
    LocalEngineBackend backend;
    const auto registry = backend.variants();
    if (registry.empty()) {
        printLine(tr("the engine did not start"));
        return 1;
    }
    RecipeError error;
    const auto recipe = RecipeParser::load(recipePath, registry, &error);
    if (!recipe) {
        printLine(error.message);
        return error.kind == RecipeError::Kind::Invalid ? 2 : 1;
    }
    printLine(tr("%1: %2 figures, %3 files into %4")
                  .arg(QDir::toNativeSeparators(recipePath))
                  .arg(recipe->figures.size())
                  .arg(recipe->outputFiles().size() + 1)
                  .arg(QDir::toNativeSeparators(outDir)));
    RecipeRunner runner(&backend, printLine);
    const RecipeRunner::Outcome outcome = runner.run(*recipe, outDir, QFileInfo(recipePath).fileName());
    if (!outcome.ok()) {
        printLine(outcome.error);
        return outcome.exitCode == 0 ? 1 : outcome.exitCode;
    }
    printLine(tr("done: %1 files").arg(outcome.files.size()));
    return 0;
}

}  // namespace attnscope::app
