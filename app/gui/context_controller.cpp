#include "gui/context_controller.h"

#include "gui/engine_backend.h"
#include "gui/model_source.h"
#include "gui/to_gui.h"

#include "views/context_search_view.h"
#include "views/token_label.h"

#include <attnscope/memory_budget.h>

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

}  // namespace

ContextController::ContextController(views::ContextSearchView* view, ModelSource* models, QObject* parent)
    : QObject(parent), m_view(view), m_models(models), m_engineSide(std::make_shared<EngineSide>()) {
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
    m_index.reset();
    if (!m_corpus.empty()) startIndex(false);
    else search();  // (says what to do first)
}

void ContextController::cancel() {
    if (m_indexing && m_indexCancel) m_indexCancel->store(true);
}

void ContextController::startIndex(bool rebuild) {
    cancel();
    m_index.reset();
    const auto& model = m_models->model();
    if (m_corpus.empty() || !model) {
        search();
        return;
    }
    const quint64 id = ++m_nextId;
    m_latestIndex = id;
    m_indexing = true;
    m_indexCancel = std::make_shared<std::atomic<bool>>(false);
    m_view->setIndexing(true, 0);
    m_view->setMessage(tr("Reading the corpus with %1…").arg(QString::fromStdString(model->familyName)));
    Q_EMIT busyChanged();
    engine::ContextIndexOptions options;
    options.space = m_view->space();
    options.memoryBudgetBytes = std::min<std::uint64_t>(engine::memoryBudgetOr(0) / 4, 1ull << 30);
    m_models->postWithModel([self = QPointer<ContextController>(this), id, corpus = m_corpus, info = *model, options, rebuild,
                             cancelled = m_indexCancel](EngineBackend* backend, const engine::Error* error) {
        const auto fail = [&](const engine::Error& e) {
            toGui([self, id, message = QString::fromStdString(e.message), code = static_cast<int>(e.code)] {
                if (self) self->uiIndexFailed(id, message, code);
            });
        };
        if (error) return fail(*error);
        QElapsedTimer clock;
        clock.start();
        qint64 lastMs = -kProgressIntervalMs;
        const engine::ProgressFn progress = [&](const engine::Progress& p) {
            if (cancelled->load(std::memory_order_relaxed)) return false;
            if (clock.elapsed() - lastMs >= kProgressIntervalMs && p.total > 0) {
                lastMs = clock.elapsed();
                toGui([self, id, permille = static_cast<int>(std::clamp<std::int64_t>(p.done * 1000 / p.total, 0, 1000))] {
                    if (self) self->uiProgress(id, permille);
                });
            }
            return true;
        };
        const auto forward = [backend](const engine::ModelInput& input) { return backend->forwardModel(input, {}); };
        auto kept = engine::keptOrBuiltContextIndex(corpus, info, options, forward, progress, rebuild);
        if (!kept) return fail(kept.error());
        toGui([self, id, kept = std::move(kept.value())] {
            if (self) self->uiIndexed(id, kept);
        });
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
    QString status = tr("%1 tokens of %2 (%3), %4 at every layer")
                         .arg(m_index->size())
                         .arg(corpusName, QString::fromStdString(engine::formatBytes(m_index->bytes())), spaceWords(m_index->space));
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
    if (!m_models->model())
        return tr("Context search compares the open model's vectors: open a model (File ▸ Open Model…), run one of its "
                  "layers, then choose a corpus.");
    if (!run || run->modelLayer < 0 || run->input.image)
        return tr("Run a layer of the open model on a text (Q/K/V source: the model): the search looks for the shown "
                  "run's tokens in the corpus.");
    if (QFileInfo(QString::fromStdString(run->modelFolder)).canonicalFilePath() != QFileInfo(m_models->folder()).canonicalFilePath())
        return tr("The shown run is of another model than the open one: run the open model again.");
    if (m_corpus.empty()) return tr("Choose a corpus (a text file): the model reads it once, and the index is kept beside it.");
    if (m_indexing) return tr("Reading the corpus…");
    if (!m_index) return tr("The corpus has no index yet: press Index Again.");
    return {};
}

void ContextController::search() {
    const quint64 id = ++m_nextId;
    m_latestSearch = id;
    if (const QString problem = searchProblem(); !problem.isEmpty()) {
        if (!m_indexing) m_view->setMessage(problem);
        Q_EMIT searched();
        return;
    }
    const auto& run = m_view->result();
    const int token = m_view->query();
    engine::ContextQuery query;
    query.layer = run->modelLayer;
    query.head = std::clamp<std::int64_t>(m_view->head(), 0, std::max<std::int64_t>(m_index->heads - 1, 0));
    query.top = 20;  // (hidden states compare whole vectors; the head picks whose strongest key is listed)
    const std::string tokenText = token < static_cast<int>(run->input.tokens.size()) ? run->input.tokens[static_cast<std::size_t>(token)].text : "";
    QString title = tr("Corpus tokens nearest ‘%1’ (token %2) at layer %3 — %4")
                        .arg(views::tokenLabel(tokenText))
                        .arg(token)
                        .arg(run->modelLayer)
                        .arg(spaceWords(m_index->space));
    if (m_index->space != engine::ContextSpace::Hidden) title += tr(", head %1").arg(*query.head);
    m_models->postWithModel([self = QPointer<ContextController>(this), side = m_engineSide, id, index = m_index, folder = run->modelFolder,
                             text = run->input.text, n = run->n, token, query, title](EngineBackend* backend, const engine::Error* error) {
        const auto fail = [&](const std::string& message) {
            toGui([self, id, message = QString::fromStdString(message)] {
                if (self) self->uiSearchFailed(id, message);
            });
        };
        if (error) return fail(error->message);
        if (!side->pass || side->folder != folder || side->text != text) {
            engine::ModelInput input;
            input.text = text;
            input.keepAttention = false;
            auto pass = backend->forwardModel(input, {});
            if (!pass) return fail(pass.error().message);
            *side = {folder, text, pass.value()};
        }
        if (side->pass->n != n) return fail("the model reads the text as " + std::to_string(side->pass->n) + " tokens, the run as " +
                                            std::to_string(n) + ": run the layer again");
        auto vector = engine::contextVector(*side->pass, index->space, query.layer, token);
        if (!vector) return fail(vector.error().message);
        auto matches = engine::searchContext(*index, *vector, query);
        if (!matches) return fail(matches.error().message);
        toGui([self, id, matches = std::move(matches.value()), title] {
            if (self) self->uiMatches(id, matches, title);
        });
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
