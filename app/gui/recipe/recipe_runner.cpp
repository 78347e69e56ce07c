#include "gui/recipe/recipe_runner.h"
#include "common/run_plan.h"

#include "gui/engine/engine_backend.h"
#include "gui/export/figure_exporter.h"
#include "gui/export/figure_metadata.h"

#include "views/compare/compare_view.h"
#include "views/diagnostics/diagnostics_stack.h"
#include "views/heatmap/head_heatmap.h"
#include "views/heatmap/heads_grid.h"
#include "views/data/inspection_state.h"
#include "views/mask/mask_view.h"
#include "views/cost/scaling_plot.h"
#include "views/links/token_links.h"

#include <attnscope/diagnostics.h>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QTemporaryFile>
#include <QWidget>

#include <algorithm>
#include <map>
#include <memory>

namespace attnscope::app {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("RecipeRunner", text); }

/// Progress lines at most this often, so a long run shows life without flooding the terminal.
constexpr qint64 kProgressIntervalMs = 1000;

engine::RunRequest requestFor(const Recipe& recipe, const RecipeFigure& figure) {
    engine::RunRequest request;
    request.source = engine::InputSpec{recipe.inputs[static_cast<std::size_t>(figure.input)].text.toStdString(), recipe.tokenizer,
                                       std::nullopt};
    request.projection = recipe.projection;
    const RecipeVariant& primary = recipe.variants[static_cast<std::size_t>(figure.variant)];
    request.variants.push_back({primary.id.toStdString(), primary.params});
    if (figure.view == QLatin1String("compare")) {
        for (int index : figure.compareWith) {
            const RecipeVariant& other = recipe.variants[static_cast<std::size_t>(index)];
            request.variants.push_back({other.id.toStdString(), other.params});
        }
        // As in the window: exact softmax after the panes, for the error summary.
        addExactReference(request.variants);
    } else if (figure.view == QLatin1String("diagnostics") && engine::diagnosticsNeedExactReference(primary.id.toStdString())) {
        // The approximation page compares against exact softmax on the same Q, K, V, as in the window.
        request.variants.push_back(exactReferenceLike(request.variants.front()));
    }
    return request;
}

/// Figures that share an input and the same variant list share one engine run.
QString runKey(const RecipeFigure& figure) {
    QString key = QString::number(figure.input) + QLatin1Char('/') + QString::number(figure.variant);
    if (figure.view == QLatin1String("compare"))
        for (int index : figure.compareWith) key += QLatin1Char('/') + QString::number(index);
    if (figure.view == QLatin1String("diagnostics")) key += QStringLiteral("/exact");
    return key;
}

/// The view widget of `figure` showing `run`, laid out at the figure's size and never on screen.
std::unique_ptr<QWidget> makeView(const RecipeFigure& figure, const std::shared_ptr<const engine::RunResult>& run,
                                  views::InspectionState* state, const QHash<QString, QString>& names) {
    std::unique_ptr<QWidget> view;
    if (figure.view == QLatin1String("heatmap")) {
        auto* heatmap = new views::HeadHeatmap;
        heatmap->setVariantNames(names);
        heatmap->setOptions(figure.heatmap);
        heatmap->setInspectionState(state);
        heatmap->setResult(run);
        view.reset(heatmap);
    } else if (figure.view == QLatin1String("mask")) {
        auto* mask = new views::MaskView;
        mask->setVariantNames(names);
        mask->setShowWeights(figure.maskWeights);
        mask->setInspectionState(state);
        mask->setResult(run);
        view.reset(mask);
    } else if (figure.view == QLatin1String("compare")) {
        auto* compare = new views::CompareView;
        compare->setVariantNames(names);
        for (views::HeadHeatmap* pane : compare->findChildren<views::HeadHeatmap*>()) pane->setOptions(figure.heatmap);
        compare->setInspectionState(state);
        // The panes are the variant and the ones compared with it; an added `full` only feeds the
        // error summary.
        compare->setResult(run, 1 + static_cast<int>(figure.compareWith.size()));
        view.reset(compare);
    } else if (figure.view == QLatin1String("links")) {
        auto* links = new views::TokenLinks;
        links->setInspectionState(state);
        links->setResult(run);
        view.reset(links);
    } else if (figure.view == QLatin1String("diagnostics")) {
        auto* diagnostics = new views::DiagnosticsStack;
        diagnostics->setInspectionState(state);
        diagnostics->setResult(run);
        view.reset(diagnostics);
    } else {
        auto* grid = new views::HeadsGrid;
        grid->setInspectionState(state);
        grid->setResult(run);
        view.reset(grid);
    }
    // Sidecars name the view by the widget's object name where FigureSubject has no better word.
    view->setObjectName(figure.view);
    view->setAttribute(Qt::WA_DontShowOnScreen);
    view->resize(figure.size);
    view->show();
    // Layouts and the views' queued replots run before the figure is painted.
    QCoreApplication::sendPostedEvents();
    QCoreApplication::processEvents();
    return view;
}

/// The sweep figure: the log-log plots of wall time and peak memory against n of the table it read.
std::unique_ptr<QWidget> makeSweepView(const RecipeFigure& figure) {
    auto plot = std::make_unique<views::ScalingPlot>();
    plot->setTimeLabel(tr("wall time of the whole run (s)"));
    for (const views::ScalingPoint& point : figure.sweep) plot->addPoint(point);
    plot->setObjectName(figure.view);
    plot->setAttribute(Qt::WA_DontShowOnScreen);
    plot->resize(figure.size);
    plot->show();
    QCoreApplication::sendPostedEvents();
    QCoreApplication::processEvents();
    return plot;
}

QJsonArray sweepVariants(const RecipeFigure& figure) {
    QJsonArray ids;
    for (const views::ScalingPoint& point : figure.sweep)
        if (!ids.contains(point.label)) ids.append(point.label);
    return ids;
}

/// Title, caption and sidecar of a sweep figure: what was measured, how, and from which table.
FigureRequest sweepFigureRequest(const RecipeFigure& figure, const QString& recipeName, int index) {
    FigureRequest request;
    request.dpi = figure.dpi;
    request.title = tr("Cost against sequence length (one fresh process per run)");
    QStringList sizes, skipped;
    for (const views::ScalingPoint& point : figure.sweep) {
        const QString n = QString::number(point.n);
        if (!sizes.contains(n)) sizes << n;
        if (point.skipped) skipped << tr("%1 at n = %2: %3").arg(point.label).arg(point.n).arg(point.message);
    }
    QStringList labels;
    for (const QJsonValue& id : sweepVariants(figure)) labels << id.toString();
    request.caption = tr("Wall time and peak RSS of attnscope-cli run, log-log against n = %1, for %2; slopes in the "
                         "legend. From %3.")
                          .arg(sizes.join(QStringLiteral(", ")), labels.join(QStringLiteral(", ")), figure.sweepFile);
    if (!skipped.isEmpty()) request.caption += QLatin1Char(' ') + tr("Not drawn: %1.").arg(skipped.join(QStringLiteral("; ")));
    QJsonArray rows;
    for (const views::ScalingPoint& point : figure.sweep)
        rows.append(QJsonObject{{QStringLiteral("variant"), point.label},
                                {QStringLiteral("n"), static_cast<double>(point.n)},
                                {QStringLiteral("status"), point.skipped ? point.message : QStringLiteral("ok")},
                                {QStringLiteral("wall_s"), point.seconds},
                                {QStringLiteral("peak_rss_mib"), static_cast<double>(point.peakBytes) / (1024.0 * 1024.0)}});
    request.sidecar = QJsonObject{{QStringLiteral("view"), figure.view},
                                  {QStringLiteral("title"), request.title},
                                  {QStringLiteral("caption"), request.caption},
                                  {QStringLiteral("sweep"), figure.sweepFile},
                                  {QStringLiteral("rows"), rows},
                                  {QStringLiteral("recipe"), QJsonObject{{QStringLiteral("file"), recipeName},
                                                                         {QStringLiteral("figure"), index}}}};
    return request;
}

}  // namespace

RecipeRunner::RecipeRunner(EngineBackend* backend, LogFn log) : m_backend(backend), m_log(std::move(log)) {
    if (!m_log) m_log = [](const QString&) {};
}

QString RecipeRunner::checkOutputFolder(const QString& dir) {
    const QString shown = QDir::toNativeSeparators(dir);
    if (dir.isEmpty()) return tr("no output folder given (--out-dir DIR)");
    if (QFileInfo(dir).exists() && !QFileInfo(dir).isDir()) return tr("output folder %1 is a file").arg(shown);
    if (!QDir().mkpath(dir)) return tr("cannot create the output folder %1").arg(shown);
    // NOTE: QFileInfo::isWritable() says yes to root on a read-only folder; creating a file is the
    // only check that tells the truth.
    QTemporaryFile probe(QDir(dir).filePath(QStringLiteral(".attnscope-write-test-XXXXXX")));
    if (!probe.open()) return tr("cannot write in the output folder %1: %2").arg(shown, probe.errorString());
    return {};
}

RecipeRunner::Outcome RecipeRunner::run(const Recipe& recipe, const QString& outDir, const QString& recipeName) {
    Outcome out;
    const auto fail = [&out](const QString& error) {
        out.error = error;
        out.exitCode = 1;
        return out;
    };
    if (const QString problem = checkOutputFolder(outDir); !problem.isEmpty()) return fail(problem);
    const QDir dir(outDir);
    QHash<QString, QString> names;
    for (const auto& info : m_backend->variants())
        names.insert(QString::fromStdString(info.id), QString::fromStdString(info.name));

    Runs runs;
    QJsonArray manifestFiles;
    const int count = static_cast<int>(recipe.figures.size());
    for (int index = 0; index < count; ++index) {
        const RecipeFigure& figure = recipe.figures[static_cast<std::size_t>(index)];
        const QString label = QStringLiteral("[%1/%2] %3").arg(index + 1).arg(count).arg(figure.file);
        FigurePlan plan;
        views::InspectionState state;
        if (figure.view == QLatin1String("sweep")) {
            plan.view = makeSweepView(figure);
            plan.request = sweepFigureRequest(figure, recipeName, index);
            plan.variants = sweepVariants(figure);
        } else {
            QString error;
            const std::shared_ptr<const engine::RunResult> run = runFor(recipe, figure, label, runs, &error);
            if (!run) return fail(error);
            state.setHead(figure.head);
            plan.view = makeView(figure, run, &state, names);
            const FigureSubject subject = FigureSubject::describe(plan.view.get(), run, 0, 0, figure.head, names);
            plan.request.dpi = figure.dpi;
            plan.request.title = FigureMetadata::title(subject);
            plan.request.caption = FigureMetadata::caption(subject);
            plan.request.sidecar = FigureMetadata::sidecar(subject);
            plan.request.sidecar.insert(QStringLiteral("recipe"),
                                        QJsonObject{{QStringLiteral("file"), recipeName}, {QStringLiteral("figure"), index}});
            for (const auto& r : run->results) plan.variants.append(QString::fromStdString(r.variantId));
        }
        if (!writeFigure(figure, index, label, plan, dir, out, manifestFiles)) return out;
    }
    if (const QString error = writeManifest(recipe, recipeName, dir, manifestFiles); !error.isEmpty()) return fail(error);
    out.files << QString::fromLatin1(Recipe::kManifestName);
    return out;
}

std::shared_ptr<const engine::RunResult> RecipeRunner::runFor(const Recipe& recipe, const RecipeFigure& figure,
                                                              const QString& label, Runs& runs, QString* error) {
    const QString key = runKey(figure);
    if (const auto found = runs.find(key); found != runs.end()) return found->second;
    const engine::RunRequest runRequest = requestFor(recipe, figure);
    QStringList ids;
    for (const auto& v : runRequest.variants) ids << QString::fromStdString(v.id);
    m_log(tr("%1: running %2 on \"%3\"…").arg(label, ids.join(QStringLiteral(" + ")),
                                              recipe.inputs[static_cast<std::size_t>(figure.input)].name));
    QElapsedTimer clock;
    clock.start();
    qint64 lastReport = 0;
    const auto progress = [&](const engine::Progress& p) {
        if (clock.elapsed() - lastReport >= kProgressIntervalMs && p.total > 0) {
            lastReport = clock.elapsed();
            m_log(tr("%1:   %2 %3%").arg(label, QString::fromLatin1(p.stage)).arg(100 * p.done / p.total));
        }
        return true;
    };
    auto result = m_backend->run(runRequest, progress);
    if (!result) {
        *error = tr("%1: the run of %2 failed (%3): %4")
                     .arg(figure.file, ids.join(QStringLiteral(" + ")), QString::fromLatin1(engine::errorCodeName(result.error().code)),
                          QString::fromStdString(result.error().message));
        return nullptr;
    }
    for (const auto& warning : (*result)->warnings) m_log(tr("%1: warning: %2").arg(label, QString::fromStdString(warning)));
    return runs.emplace(key, *result).first->second;
}

bool RecipeRunner::writeFigure(const RecipeFigure& figure, int index, const QString& label, FigurePlan& plan,
                               const QDir& dir, Outcome& out, QJsonArray& manifest) {
    FigureRequest& request = plan.request;
    QString sidecar;
    for (std::size_t f = 0; f < figure.formats.size(); ++f) {
        request.format = figure.formats[f];
        // One sidecar per figure, written with its first format.
        request.writeSidecar = figure.sidecar && f == 0;
        request.slide = figure.slide;
        const QString name = figure.file + QLatin1Char('.') + FigureExporter::formatName(request.format);
        const FigureOutcome written = FigureExporter::exportFigure(plan.view.get(), dir.filePath(name), request);
        if (!written.ok()) {
            out.error = tr("%1: %2").arg(name, written.error);
            out.exitCode = 1;
            return false;
        }
        out.files << name;
        manifest.append(QJsonObject{{QStringLiteral("file"), name},
                                    {QStringLiteral("kind"), QStringLiteral("figure")},
                                    {QStringLiteral("figure"), index},
                                    {QStringLiteral("view"), figure.view},
                                    {QStringLiteral("format"), FigureExporter::formatName(request.format)},
                                    {QStringLiteral("width"), written.size.width()},
                                    {QStringLiteral("height"), written.size.height()},
                                    {QStringLiteral("variants"), plan.variants},
                                    {QStringLiteral("head"), figure.head}});
        if (request.writeSidecar) sidecar = QFileInfo(written.sidecarPath).fileName();
        m_log(tr("%1: wrote %2").arg(label, name));
    }
    // Listed after the figure's formats, as RecipeFigure::outputFiles() names them.
    if (!sidecar.isEmpty()) {
        out.files << sidecar;
        manifest.append(QJsonObject{{QStringLiteral("file"), sidecar},
                                    {QStringLiteral("kind"), QStringLiteral("sidecar")},
                                    {QStringLiteral("figure"), index}});
    }
    return true;
}

QString RecipeRunner::writeManifest(const Recipe& recipe, const QString& recipeName, const QDir& dir, const QJsonArray& files) {
    const QJsonObject manifest{{QStringLiteral("attnscopeManifest"), 1},
                               {QStringLiteral("app"), QStringLiteral("AttnScope %1").arg(QCoreApplication::applicationVersion())},
                               {QStringLiteral("recipe"), recipeName},
                               {QStringLiteral("title"), recipe.title},
                               {QStringLiteral("files"), files}};
    QSaveFile file(dir.filePath(QString::fromLatin1(Recipe::kManifestName)));
    const QByteArray bytes = QJsonDocument(manifest).toJson(QJsonDocument::Indented);
    if (file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size() && file.commit()) return {};
    return tr("cannot write %1: %2")
        .arg(QDir::toNativeSeparators(dir.filePath(QString::fromLatin1(Recipe::kManifestName))), file.errorString());
}

}  // namespace attnscope::app
