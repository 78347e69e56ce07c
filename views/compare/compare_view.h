#pragma once
// The compare view: 2–4 variants run on the same input and Q, K, V (one RunRequest), side by side
// for the same head on one colour scale, with synchronised hover, a difference map (one pane
// minus a reference, diverging and centred at 0) and an error summary of every pane against exact
// softmax (`full`) when the result holds it. Everything comes from the result format: no
// per-variant code.

#include "views/widgets/result_view.h"
#include "views/data/latest_job.h"
#include "views/compare/compare_difference_map.h"
#include "views/data/error_summary.h"
#include "views/widgets/figure_layout.h"

#include <attnscope/types.h>

#include <QFuture>
#include <QHash>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include <array>
#include <functional>
#include <memory>
#include <optional>

class QComboBox;
class QGridLayout;
class QHBoxLayout;
class QLabel;
class QStackedWidget;
class QTabWidget;

namespace attnscope::views {

class CompareDifferenceMap;
class CompareErrorPanel;
class HeadHeatmap;
class InspectionState;
class SharedColorBar;

class CompareView : public QWidget, public FigureLayout, public ResultView {
    Q_OBJECT
public:
    static constexpr int kMinPanes = 2;
    static constexpr int kMaxPanes = 4;
    /// The difference map's reference choice meaning "the result's exact `full`".
    static constexpr int kExactReference = -1;

    explicit CompareView(QWidget* parent = nullptr);
    ~CompareView() override;

    /// Follows state->head(); the panes show RunResult::results[0 .. paneCount-1] whatever
    /// state->resultIndex() says. Hovered cells are written to state->setHovered().
    void setInspectionState(InspectionState* state) override;
    /// `paneCount` results become panes (0 = every result, at most kMaxPanes); results after them
    /// (the exact `full` the app adds for the error summary) are not shown as panes. Results whose
    /// shape differs from the first are refused with a message, never drawn side by side.
    void setResult(Run result, int paneCount);
    /// The run with the panes and exact note set for it (setNextRun), else every result as panes.
    void setResult(Run result) override;
    /// The window's comparison: the panes and note of the run it shows next (and again when the
    /// tab takes the run late).
    void setNextRun(int paneCount, const QString& exactNote);
    bool park() override {
        setResult(nullptr);
        return true;
    }
    /// Waits for the difference map and the error summaries computed in the background.
    void finishBackgroundWork() override;
    void setVariantNames(const QHash<QString, QString>& idToName);
    /// Shown with the error summary when the result has no `full` (e.g. "full was not run: over
    /// the memory budget"); empty restores the default text.
    void setExactNote(const QString& note);
    /// Why the comparison asked for did not run (a compared variant's parameter that does not
    /// parse), shown in the view's footer until the next result; empty clears it.
    void setProblem(const QString& problem);
    /// A comparison is being computed: panes without a result, the difference map and the footer
    /// say so (rather than "press Run"); false when the run ended, however it ended.
    void setRunning(bool running);
    /// Find Token's bands in every pane and the difference map.
    void setHighlightedTokens(const QVector<int>& tokens);

    int paneCount() const { return m_paneCount; }
    /// Columns of the pane grid: the count that gives the panes the largest square cells in the
    /// room there is (all in one row when wide, two by two when not).
    int paneColumns() const { return m_paneColumns; }
    /// No pane is drawn smaller than this.
    static constexpr QSize kMinPaneSize{150, 130};
    /// A figure adds the difference map and the error table below the panes, this high.
    static constexpr int kFigureBottomHeight = 340;
    /// The view's pages: the panes, the difference map, the error table.
    enum class Page { Panes, Difference, Errors };
    /// The tab widget holding the pages (tests: their count and tooltips).
    QTabWidget* pages() const { return m_pages; }
    void showPage(Page page);
    Page shownPage() const;
    /// The one colour bar of every pane.
    SharedColorBar* sharedColorBar() const { return m_sharedBar; }

    QSize beginFigureLayout(QSize windowSize, bool slide) override;
    void endFigureLayout() override;
    HeadHeatmap* pane(int index) const { return m_panes[static_cast<std::size_t>(index)]; }
    static QString paneName(int index);  ///< "A", "B", "C", "D"
    /// True when the result holds at least two comparable variants.
    bool hasComparison() const;
    /// Index into RunResult::results of the exact reference (the first `full`), -1 when none.
    int exactIndex() const { return m_exactIndex; }

    // Difference map: pane `minuend` minus the reference (a pane index or kExactReference).
    void setDifference(int minuend, int reference);
    int differenceMinuend() const { return m_diffMinuend; }
    int differenceReference() const { return m_diffReference; }
    /// The difference map and the error panel, brought up to date first (they are computed only
    /// while the view is visible: O(n·m) per pane on every head change).
    CompareDifferenceMap* differenceMap() const;
    /// Both wait for what is still computed in the background (setBackgroundWork()).
    CompareErrorPanel* errorPanel() const;
    /// Computes the difference map and the error summaries (O(n·m) per pane) on a worker thread:
    /// the map keeps its previous picture and the panel says "computing…" meanwhile, and an answer
    /// for a head, pair or result no longer shown is dropped. Default: off (computed at once, as
    /// exports and tests expect).
    void setBackgroundWork(bool on) { m_background = on; }
    /// True while error summaries are computed in the background.
    bool errorsPending() const { return m_errorsPending; }
    /// True while the difference map is computed in the background.
    bool differencePending() const { return m_diffPending; }
    /// Error summary of pane `index` against `full` for the shown head (not ok when there is no
    /// `full` or the pane cannot be compared; `message` says why).
    /// "The panes differ in causality (A causal, B not): …" when they do, else empty.
    QString causalityMismatch() const;
    ErrorSummary errorSummary(int index) const;

    // Test accessors. The hovered cell is marked in every pane; (-1, -1) when none.
    int hoveredQuery(int pane) const;
    int hoveredKey(int pane) const;
    /// Weight that pane shows at the hovered cell (0 outside its pattern); NaN when none.
    double shownValue(int pane) const;
    /// False when the hovered cell is outside that pane's pattern.
    bool shownInPattern(int pane) const;
    /// "query 3 'it' → key 1 'cat': A = 0.1200, B = 0.0300, C = — (not in pattern)".
    QString infoText() const;

public Q_SLOTS:
    /// As if the pointer were over (query, key) of any pane; (-1, -1) clears.
    void hoverCell(int query, int key);

Q_SIGNALS:
    /// Intent: (query, key) is hovered in one of the panes; (-1, -1) when the pointer left.
    void cellHovered(int query, int key);

protected:
    void showEvent(QShowEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void syncHead();
    void syncSharedBar();
    /// The three pages as tabs, in order, with their tooltips (again after a figure).
    void addPageTabs();
    void rebuildPanes();
    void layoutPanes();
    int shownPaneCount() const;
    void updateSharedRange();
    void updateDifferenceChoices();
    void applyDifference(int minuend, int reference);
    /// Recompute now when visible, else mark the derived panels stale (see refreshDerived()).
    void updateDifference();
    void updateErrors();
    void computeDifference();
    void computeErrors();
    void refreshDerived();
    void updateInfo();
    const engine::AttentionResult* paneResult(int pane) const;
    const engine::AttentionResult* referenceResult(int choice) const;
    QString paneLabel(int pane) const;
    QString describe(const QString& role, int index) const;
    int shownHead() const;

    std::array<HeadHeatmap*, kMaxPanes> m_panes{};
    QStackedWidget* m_stack = nullptr;  // the pages, or the figure page while exporting
    QTabWidget* m_pages = nullptr;
    QWidget* m_figurePage = nullptr;
    QHBoxLayout* m_figureBottom = nullptr;  // the difference map and the errors, in a figure
    int m_figurePageShown = 0;  // the page shown before the figure layout
    QWidget* m_panesPage = nullptr;
    QWidget* m_diffBox = nullptr;
    SharedColorBar* m_sharedBar = nullptr;
    QWidget* m_panesWidget = nullptr;
    QGridLayout* m_paneGrid = nullptr;
    int m_paneColumns = 0;
    int m_laidOutPanes = 0;
    std::array<InspectionState*, kMaxPanes> m_paneStates{};
    CompareDifferenceMap* m_diffMap = nullptr;
    CompareErrorPanel* m_errorPanel = nullptr;
    QComboBox* m_minuendCombo = nullptr;
    QComboBox* m_referenceCombo = nullptr;
    QLabel* m_info = nullptr;
    QPointer<InspectionState> m_state;
    std::shared_ptr<const engine::RunResult> m_result;
    QHash<QString, QString> m_names;
    QString m_exactNote;
    QString m_refusal;  // why the result cannot be compared; empty when it can
    QString m_problem;  // why the comparison asked for did not run (setProblem)
    int m_paneCount = 0;
    int m_nextPaneCount = 0;                // setNextRun's
    std::optional<QString> m_nextExactNote;  // setNextRun's, applied with each run
    int m_exactIndex = -1;
    int m_diffMinuend = 1;
    int m_diffReference = 0;
    bool m_diffChosen = false;
    bool m_background = false;
    bool m_running = false;
    bool m_diffPending = false;
    LatestJob m_diffJob;  // the latest difference asked for; older ones are dropped
    QFuture<CompareDifferenceMap::Cells> m_diffFuture;
    std::function<void(CompareDifferenceMap::Cells)> m_showDifference;  // shows m_diffFuture's cells
    bool m_errorsPending = false;
    LatestJob m_errorJob;  // the latest summary asked for; older ones are dropped
    QFuture<QVector<ErrorSummary>> m_errorFuture;
    std::function<void(QVector<ErrorSummary>)> m_showErrors;  // shows m_errorFuture's summaries
    bool m_derivedStale = false;  // difference map and error panel wait for the view to be shown  // the user (or setDifference) picked the pair: keep it while valid
    int m_query = -1;
    int m_key = -1;
};

}  // namespace attnscope::views
