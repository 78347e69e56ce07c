#pragma once
// The Context tab's work (exBERT's context search): the chosen corpus indexed with whatever made
// the shown run — the open model (read back when an index of this model and corpus is kept beside
// it), or the run's random projections (their keys and queries) — then, whenever the token, head,
// layer or shown run changes, the token's vector compared with every corpus token's; both on the
// engine thread, cancellable, the newest request winning.

#include <attnscope/context_search.h>
#include <attnscope/model.h>

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <string>

namespace attnscope::views {
class ContextSearchView;
}

namespace attnscope::app {

class EngineRunner;
class ModelSource;

class ContextController : public QObject {
    Q_OBJECT
public:
    /// `runner` and `models` must outlive this object.
    ContextController(views::ContextSearchView* view, ModelSource* models, EngineRunner* runner, QObject* parent);
    ~ContextController() override;

    /// Reads `path` as the corpus and indexes it (a file that cannot be read says so in the tab).
    void chooseCorpus(const QString& path);
    /// Another model opened: its index replaces the old one's (read back when kept).
    void modelOpened();
    void cancel();
    bool isIndexing() const { return m_indexing; }
    const std::shared_ptr<const engine::ContextIndex>& index() const { return m_index; }

Q_SIGNALS:
    void report(const QString& text, const QString& details = {});
    /// Indexing started or ended (Esc cancels it while it runs).
    void busyChanged();
    /// A search answered (matches shown, or a message why none).
    void searched();

private:
    struct EngineSide;
    /// What the shown run's vectors come from.
    enum class Source { None, Model, Projections };
    Source source() const;
    /// The identity an index of the shown run's source has ("" for none).
    std::string sourceIdentity() const;
    void startIndex(bool rebuild);
    void postModelIndex(const std::string& corpus, const engine::ContextIndexOptions& options, bool rebuild, quint64 id);
    void postProjectionIndex(const std::string& corpus, const engine::ContextIndexOptions& options, bool rebuild, quint64 id);
    engine::ProgressFn indexProgress(quint64 id);
    void search();
    void uiIndexed(quint64 id, const engine::KeptContextIndex& kept);
    void uiIndexFailed(quint64 id, const QString& message, int code);
    void uiProgress(quint64 id, int permille);
    void uiMatches(quint64 id, const std::vector<engine::ContextMatch>& matches, const QString& title);
    void uiSearchFailed(quint64 id, const QString& message);
    /// Why the shown run cannot be searched ("" when it can).
    QString searchProblem() const;
    QString searchTitle(int token) const;

    views::ContextSearchView* m_view = nullptr;
    ModelSource* m_models = nullptr;
    EngineRunner* m_runner = nullptr;
    std::shared_ptr<EngineSide> m_engineSide;  // the text's last pass, touched on the engine thread only
    std::string m_corpus;
    std::shared_ptr<const engine::ContextIndex> m_index;
    quint64 m_nextId = 0, m_latestIndex = 0, m_latestSearch = 0;
    bool m_indexing = false;
    std::shared_ptr<std::atomic<bool>> m_indexCancel;
};

}  // namespace attnscope::app
