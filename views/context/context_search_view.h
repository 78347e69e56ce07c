#pragma once
// The Context tab (exBERT's context search): the corpus tokens whose vectors at the shown layer
// point the same way as the selected token's (cosine), one row each in keyword-in-context form —
// the corpus before the token, the token, the corpus after — with what that corpus token looked
// at itself in the selected head. The view shows and asks; the app indexes the corpus with the
// open model and searches (attnscope/context_search.h), on the engine thread.

#include "views/widgets/result_view.h"
#include <attnscope/context_search.h>
#include <attnscope/types.h>

#include <QPointer>
#include <QWidget>

#include <memory>
#include <vector>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace attnscope::views {

class InspectionState;

class ContextSearchView : public QWidget, public ResultView {
    Q_OBJECT
public:
    explicit ContextSearchView(QWidget* parent = nullptr);

    void setInspectionState(InspectionState* state) override;
    /// The shown run: its tokens are the ones searched for, its layer the one compared.
    void setResult(Run result) override;
    /// Hidden, it lets go of the run (it is given again when shown).
    bool park() override {
        setResult(nullptr);
        return true;
    }
    const std::shared_ptr<const engine::RunResult>& result() const { return m_result; }
    /// The token searched for (clamped to the run's tokens); hovering a query in the heatmap or
    /// Links picks it too.
    void setQuery(int token);
    int query() const;
    int head() const;
    engine::ContextSpace space() const;
    void setSpace(engine::ContextSpace space);

    // ---- what the app reports
    void setCorpus(const QString& path);
    QString corpus() const { return m_corpusPath; }
    /// Indexing in progress (permille of the corpus) or not.
    void setIndexing(bool busy, int permille = 0);
    /// Under the controls: the index's size and where it is kept, or why there is none.
    void setStatus(const QString& text);
    QString status() const;
    /// The matches of the latest search under `title`; an empty list says so.
    void setMatches(const std::vector<engine::ContextMatch>& matches, const QString& title);
    /// Instead of matches: what to do first ("choose a corpus", "open a model").
    void setMessage(const QString& text);
    const std::vector<engine::ContextMatch>& matches() const { return m_matches; }
    QString title() const;

Q_SIGNALS:
    void corpusChosen(const QString& path);
    void spaceChanged();
    void reindexRequested();
    void cancelRequested();
    /// The token, head, layer or run changed: search again.
    void searchWanted();

private:
    void chooseCorpus();
    void showTable(bool shown);

    QPointer<InspectionState> m_state;
    std::shared_ptr<const engine::RunResult> m_result;
    std::vector<engine::ContextMatch> m_matches;
    QString m_corpusPath;
    QPushButton* m_choose = nullptr;
    QLabel* m_corpusLabel = nullptr;
    QComboBox* m_space = nullptr;
    QSpinBox* m_token = nullptr;
    QPushButton* m_reindex = nullptr;
    QPushButton* m_cancel = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_title = nullptr;
    QLabel* m_message = nullptr;
    QTableWidget* m_table = nullptr;
};

}  // namespace attnscope::views
