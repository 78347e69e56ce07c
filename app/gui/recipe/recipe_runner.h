#pragma once
// Runs a checked Recipe: one engine run per distinct (input, variants) set, each figure rendered
// by the same view widgets and FigureExporter as the window, then manifest.json. Synchronous, on
// the calling thread: the headless `attnscope export` has no window whose event loop could stall.

#include "gui/export/figure_exporter.h"
#include "gui/recipe/recipe.h"

#include <attnscope/types.h>

#include <QJsonArray>

#include <QString>
#include <QStringList>

#include <functional>
#include <map>
#include <memory>

class QDir;
class QWidget;

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
    using Runs = std::map<QString, std::shared_ptr<const engine::RunResult>>;
    /// What one figure writes: the view drawn, how, and the variants it shows.
    struct FigurePlan {
        std::unique_ptr<QWidget> view;
        FigureRequest request;
        QJsonArray variants;
    };

    /// The run a figure shows: from `runs` when an earlier figure made it, else run now (and kept).
    std::shared_ptr<const engine::RunResult> runFor(const Recipe& recipe, const RecipeFigure& figure,
                                                    const QString& label, Runs& runs, QString* error);
    /// Writes each format of the figure (and its sidecar with the first) into `dir`, listing
    /// them in `out` and `manifest`. False with out.error set when a write fails.
    bool writeFigure(const RecipeFigure& figure, int index, const QString& label, FigurePlan& plan, const QDir& dir,
                     Outcome& out, QJsonArray& manifest);
    /// The manifest (Recipe::kManifestName) listing `files`; empty or why it could not be written.
    QString writeManifest(const Recipe& recipe, const QString& recipeName, const QDir& dir, const QJsonArray& files);

    EngineBackend* m_backend = nullptr;
    LogFn m_log;
};

}  // namespace attnscope::app
