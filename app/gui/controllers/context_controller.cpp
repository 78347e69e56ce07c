#include "gui/controllers/context_controller.h"

#include "gui/engine/engine_backend.h"
#include "gui/engine/engine_runner.h"
#include "gui/engine/model_source.h"
#include "gui/engine/to_gui.h"

#include "views/context/context_search_view.h"
#include "views/data/token_label.h"

#include <attnscope/memory_budget.h>
#include <attnscope/variant_catalog.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QPointer>

#include <algorithm>

namespace attnscope::app {

/// The text's pass, kept between searches of one text (moving the token costs no pass).
struct ContextController::EngineSide {
    std::string folder, text;
    std::shared_ptr<const engine::ModelForward> pass;
};

namespace {

constexpr qint64 kMaxCorpusBytes = 64ll << 20;
constexpr qint64 kProgressIntervalMs = 50;

QString spaceWords(engine::ContextSpace space) {
    switch (space) {
    case engine::ContextSpace::Hidden: return ContextController::tr("hidden states");
    case engine::ContextSpace::Keys: return ContextController::tr("keys");
    case engine::ContextSpace::Queries: return ContextController::tr("queries");
    }
    return {};
}

bool isProjectionRun(const engine::RunResult* run) {
    return run && run->modelFolder.empty() && run->modelLayer < 0 && !run->input.image && !run->input.tokens.empty() && !run->q.empty();
}

}  // namespace

ContextController::ContextController(views::ContextSearchView* view, ModelSource* models, EngineRunner* runner, QObject* parent)
    : QObject(parent), m_view(view), m_models(models), m_runner(runner), m_engineSide(std::make_shared<EngineSide>()) {
    connect(m_view, &views::ContextSearchView::corpusChosen, this, &ContextController::chooseCorpus);
    connect(m_view, &views::ContextSearchView::spaceChanged, this, [this] { startIndex(false); });
    connect(m_view, &views::ContextSearchView::reindexRequested, this, [this] { startIndex(true); });
    connect(m_view, &views::ContextSearchView::cancelRequested, this, &ContextController::cancel);
    connect(m_view, &views::ContextSearchView::searchWanted, this, &ContextController::search);
}

ContextController::~ContextController() { cancel(); }

void ContextController::chooseCorpus(const QString& path) {
    QFile file(path);
    if (file.size() > kMaxCorpusBytes) {
        m_view->setStatus(tr("%1 has %2: a corpus may have at most %3.")
                              .arg(QDir::toNativeSeparators(path), QString::fromStdString(engine::formatBytes(file.size())),
                                   QString::fromStdString(engine::formatBytes(kMaxCorpusBytes))));
        return;
    }
    if (!file.open(QIODevice::ReadOnly)) {
        m_view->setStatus(tr("Cannot read %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
        return;
    }
    const QByteArray bytes = file.readAll();
    m_corpus.assign(bytes.constData(), static_cast<std::size_t>(bytes.size()));
    m_view->setCorpus(path);
    startIndex(false);
}

void ContextController::modelOpened() {
    if (source() == Source::Projections) return;  // (the shown run's index stays)
    m_index.reset();
    if (!m_corpus.empty()) startIndex(false);
    else search();  // (says what to do first)
}

void ContextController::cancel() {
    if (m_indexing && m_indexCancel) m_indexCancel->store(true);
}

ContextController::Source ContextController::source() const {
    const engine::RunResult* run = m_view->result().get();
    if (isProjectionRun(run)) return Source::Projections;
    if (m_models->model() && (!run || run->modelLayer >= 0)) return Source::Model;
    return Source::None;
}

std::string ContextController::sourceIdentity() const {
    switch (source()) {
    case Source::Model: return engine::contextModelIdentity(*m_models->model());
    case Source::Projections: return engine::contextProjectionIdentity(*m_view->result());
    case Source::None: break;
    }
    return {};
}

engine::ProgressFn ContextController::indexProgress(quint64 id) {
    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    auto lastMs = std::make_shared<qint64>(-kProgressIntervalMs);
    return [self = QPointer<ContextController>(this), id, cancelled = m_indexCancel, clock, lastMs](const engine::Progress& p) {
        if (cancelled->load(std::memory_order_relaxed)) return false;
        if (clock->elapsed() - *lastMs >= kProgressIntervalMs && p.total > 0) {
            *lastMs = clock->elapsed();
            toGui([self, id, permille = static_cast<int>(std::clamp<std::int64_t>(p.done * 1000 / p.total, 0, 1000))] {
                if (self) self->uiProgress(id, permille);
            });
        }
        return true;
    };
}

void ContextController::startIndex(bool rebuild) {
    cancel();
    m_index.reset();
    const Source from = source();
    if (m_corpus.empty() || from == Source::None ||
        (from == Source::Projections && m_view->space() == engine::ContextSpace::Hidden)) {
        m_indexing = false;
        search();  // (says what to do first)
        return;
    }
    const quint64 id = ++m_nextId;
    m_latestIndex = id;
    m_indexing = true;
    m_indexCancel = std::make_shared<std::atomic<bool>>(false);
    m_view->setIndexing(true, 0);
    m_view->setMessage(from == Source::Model ? tr("Reading the corpus with %1…").arg(QString::fromStdString(m_models->model()->familyName))
                                             : tr("Projecting the corpus with the run's random projections…"));
    Q_EMIT busyChanged();
    engine::ContextIndexOptions options;
    options.space = m_view->space();
    options.memoryBudgetBytes = std::min<std::uint64_t>(engine::memoryBudgetOr(0) / 4, 1ull << 30);
    options.identity = sourceIdentity();
    if (from == Source::Model) postModelIndex(m_corpus, options, rebuild, id);
    else postProjectionIndex(m_corpus, options, rebuild, id);
}

void ContextController::postModelIndex(const std::string& corpus, const engine::ContextIndexOptions& options, bool rebuild, quint64 id) {
    m_models->postWithModel([self = QPointer<ContextController>(this), id, corpus, info = *m_models->model(), options, rebuild,
                             progress = indexProgress(id)](EngineBackend* backend, const engine::Error* error) {
        engine::Result<engine::KeptContextIndex> kept = error ? engine::Result<engine::KeptContextIndex>(*error) : [&] {
            const auto forward = [backend](const engine::ModelInput& input) { return backend->forwardModel(input, {}); };
            return engine::keptOrBuiltContextIndex(corpus, info, options, forward, progress, rebuild);
        }();
        toGui([self, id, kept = std::move(kept)] {
            if (!self) return;
            if (kept) self->uiIndexed(id, kept.value());
            else self->uiIndexFailed(id, QString::fromStdString(kept.error().message), static_cast<int>(kept.error().code));
        });
    });
}

void ContextController::postProjectionIndex(const std::string& corpus, const engine::ContextIndexOptions& options, bool rebuild,
                                            quint64 id) {
    const engine::RunResult& run = *m_view->result();
    engine::ModelInfo info;  // (a one-layer "model": the run's projections; pieces of at most 256 bytes)
    info.arch = "random-projections";
    info.layers = 1;
    info.heads = run.heads;
    info.headDim = run.headDim;
    m_runner->postTask([self = QPointer<ContextController>(this), id, corpus, info, options, rebuild, projection = run.projection,
                        tokenizer = run.input.kind, progress = indexProgress(id)](EngineBackend& backend) {
        // Each piece through the same projections, exact softmax giving what each token looked at.
        const auto forward = [&](const engine::ModelInput& input) -> engine::Result<std::shared_ptr<const engine::ModelForward>> {
            engine::RunRequest request;
            request.source = engine::InputSpec{input.text, tokenizer, std::nullopt};
            request.projection = projection;
            request.variants.push_back(engine::VariantRequest{engine::exactReference().id, {}});
            auto run = backend.run(request, {});
            if (!run) return run.error();
            return engine::passOfRun(*run.value(), input.keepAttention);
        };
        auto kept = engine::keptOrBuiltContextIndex(corpus, info, options, forward, progress, rebuild);
        toGui([self, id, kept = std::move(kept)] {
            if (!self) return;
            if (kept) self->uiIndexed(id, kept.value());
            else self->uiIndexFailed(id, QString::fromStdString(kept.error().message), static_cast<int>(kept.error().code));
        });
        return false;
    });
}

void ContextController::uiProgress(quint64 id, int permille) {
    if (id == m_latestIndex && m_indexing) m_view->setIndexing(true, permille);
}

void ContextController::uiIndexed(quint64 id, const engine::KeptContextIndex& kept) {
    if (id != m_latestIndex) return;
    m_indexing = false;
    m_view->setIndexing(false);
    Q_EMIT busyChanged();
    m_index = kept.index;
    const QString corpusName = QFileInfo(m_view->corpus()).fileName();
    QString status = tr("%1 tokens of %2 (%3), %4 %5")
                         .arg(m_index->size())
                         .arg(corpusName, QString::fromStdString(engine::formatBytes(m_index->bytes())), spaceWords(m_index->space),
                              m_index->layers > 1 ? tr("at every layer") : tr("of every head"));
    if (!kept.path.empty())
        status += kept.reused ? tr(", read back from %1").arg(QDir::toNativeSeparators(QString::fromStdString(kept.path)))
                              : tr(", kept at %1").arg(QDir::toNativeSeparators(QString::fromStdString(kept.path)));
    status += QLatin1Char('.');
    for (const auto& notice : m_index->notices) status += QLatin1Char(' ') + QString::fromStdString(notice) + QLatin1Char('.');
    for (const auto& notice : kept.notices) status += QLatin1Char(' ') + QString::fromStdString(notice) + QLatin1Char('.');
    m_view->setStatus(status);
    Q_EMIT report(tr("Context index: %1 tokens of %2.").arg(m_index->size()).arg(corpusName));
    search();
}

void ContextController::uiIndexFailed(quint64 id, const QString& message, int code) {
    if (id != m_latestIndex) return;
    m_indexing = false;
    m_view->setIndexing(false);
    Q_EMIT busyChanged();
    const bool cancelled = code == static_cast<int>(engine::ErrorCode::Cancelled);
    const QString text = cancelled ? tr("Indexing the corpus was cancelled.") : tr("Indexing the corpus failed: %1").arg(message);
    m_view->setStatus(text);
    m_view->setMessage(cancelled ? tr("Press Index Again to read the corpus.") : text);
    Q_EMIT report(text, message);
}

QString ContextController::searchProblem() const {
    const auto& run = m_view->result();
    switch (source()) {
    case Source::None:
        if (run && run->input.image)
            return tr("Context search reads a text corpus: run a text (a picture's patches have no corpus to search).");
        return tr("Context search compares the shown run's vectors with a corpus's: run a text (random projections or a "
                  "model's layer), then choose a corpus.");
    case Source::Projections:
        if (m_view->space() == engine::ContextSpace::Hidden)
            return tr("Random projections have no hidden states: compare their keys or queries (the Compare box).");
        break;
    case Source::Model:
        if (!run || run->modelLayer < 0)
            return tr("Run a layer of the open model on a text: the search looks for the shown run's tokens in the corpus.");
        if (QFileInfo(QString::fromStdString(run->modelFolder)).canonicalFilePath() != QFileInfo(m_models->folder()).canonicalFilePath())
            return tr("The shown run is of another model than the open one: run the open model again.");
        break;
    }
    if (m_corpus.empty()) return tr("Choose a corpus (a text file): it is read once, and the index is kept for the next time.");
    if (m_indexing) return tr("Reading the corpus…");
    if (!m_index) return tr("The corpus has no index yet: press Index Again.");
    return {};
}

QString ContextController::searchTitle(int token) const {
    const auto& run = m_view->result();
    const std::string text = token < static_cast<int>(run->input.tokens.size()) ? run->input.tokens[static_cast<std::size_t>(token)].text : "";
    QString title = tr("Corpus tokens nearest ‘%1’ (token %2)").arg(views::tokenLabel(text)).arg(token);
    if (run->modelLayer >= 0) title += tr(" at layer %1").arg(run->modelLayer);
    title += tr(" — %1").arg(spaceWords(m_index->space));
    if (m_index->space != engine::ContextSpace::Hidden) title += tr(", head %1").arg(m_view->head());
    if (source() == Source::Projections) title += tr(", random projections");
    return title;
}

void ContextController::search() {
    const quint64 id = ++m_nextId;
    m_latestSearch = id;
    if (const QString problem = searchProblem(); !problem.isEmpty()) {
        if (!m_indexing) m_view->setMessage(problem);
        Q_EMIT searched();
        return;
    }
    if (m_index->modelIdentity != sourceIdentity()) {  // another model or other projections made the shown run
        startIndex(false);
        return;
    }
    const auto run = m_view->result();
    const int token = m_view->query();
    engine::ContextQuery query;
    query.layer = std::max(run->modelLayer, 0);
    query.head = std::clamp<std::int64_t>(m_view->head(), 0, std::max<std::int64_t>(m_index->heads - 1, 0));
    query.top = 20;  // (hidden states compare whole vectors; the head picks whose strongest key is listed)
    const QString title = searchTitle(token);
    const auto answer = [self = QPointer<ContextController>(this), id, title](engine::Result<std::vector<engine::ContextMatch>> matches) {
        toGui([self, id, title, matches = std::move(matches)] {
            if (!self) return;
            if (matches) self->uiMatches(id, matches.value(), title);
            else self->uiSearchFailed(id, QString::fromStdString(matches.error().message));
        });
    };
    if (source() == Source::Projections) {  // the run's own Q and K: no pass
        m_runner->postTask([index = m_index, run, token, query, answer](EngineBackend&) {
            auto vector = engine::contextVectorOfRun(*run, index->space, token);
            answer(vector ? engine::searchContext(*index, *vector, query) : engine::Result<std::vector<engine::ContextMatch>>(vector.error()));
            return false;
        });
        return;
    }
    m_models->postWithModel([side = m_engineSide, index = m_index, folder = run->modelFolder, text = run->input.text, n = run->n, token,
                             query, answer](EngineBackend* backend, const engine::Error* error) {
        using Matches = engine::Result<std::vector<engine::ContextMatch>>;
        if (error) return answer(Matches(*error));
        if (!side->pass || side->folder != folder || side->text != text) {
            engine::ModelInput input;
            input.text = text;
            input.keepAttention = false;
            auto pass = backend->forwardModel(input, {});
            if (!pass) return answer(Matches(pass.error()));
            *side = {folder, text, pass.value()};
        }
        if (side->pass->n != n)
            return answer(Matches(engine::makeError(engine::ErrorCode::InvalidArgument,
                                                    "the model reads the text as " + std::to_string(side->pass->n) + " tokens, the run as " +
                                                        std::to_string(n) + ": run the layer again")));
        auto vector = engine::contextVector(*side->pass, index->space, query.layer, token);
        answer(vector ? engine::searchContext(*index, *vector, query) : Matches(vector.error()));
    });
}

void ContextController::uiMatches(quint64 id, const std::vector<engine::ContextMatch>& matches, const QString& title) {
    if (id != m_latestSearch) return;
    m_view->setMatches(matches, title);
    Q_EMIT searched();
}

void ContextController::uiSearchFailed(quint64 id, const QString& message) {
    if (id != m_latestSearch) return;
    m_view->setMessage(tr("No context search: %1").arg(message));
    Q_EMIT searched();
}

}  // namespace attnscope::app
