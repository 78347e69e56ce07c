#pragma once
// Runs a checked Recipe: one engine run per distinct (input, variants) set, each figure rendered
// by the same view widgets and FigureExporter as the window, then manifest.json. Synchronous, on
// the calling thread: the headless `attnscope export` has no window whose event loop could stall.

#include "gui/recipe/recipe.h"

#include <QString>
#include <QStringList>

#include <functional>

namespace attnscope::app {

class EngineBackend;

class RecipeRunner {
public:
    /// One line of progress or a notice (the command prints them to stderr).
    using LogFn = std::function<void(const QString&)>;

    struct Outcome {
        QString error;      ///< empty on success; names the figure, file or variant
        int exitCode = 0;   ///< 0, or 1 for a failed run or write
        QStringList files;  ///< written, relative to the output folder, manifest last
        bool ok() const { return error.isEmpty(); }
    };

    /// `backend` must outlive the runner; its calls happen on this thread.
    RecipeRunner(EngineBackend* backend, LogFn log = {});

    /// Creates `outDir` when missing and checks it is writable before running anything.
    /// `recipeName` is recorded in the manifest.
    Outcome run(const Recipe& recipe, const QString& outDir, const QString& recipeName = {});

    /// Empty when `dir` exists (created if needed) and a file can be created in it, else why not.
    static QString checkOutputFolder(const QString& dir);

private:
    EngineBackend* m_backend = nullptr;
    LogFn m_log;
};

}  // namespace attnscope::app
