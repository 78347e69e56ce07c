#pragma once
// The window's right side: the random-projections note, the heads grid, the Find Token bar and the
// view tabs (Heatmap, Mask, Compare, Diagnostics, Links, Cost, Atlas, Experts, Image, Neuron, Q–K map,
// Context, in ViewTab order),
// all following one InspectionState. It builds the views and what ties them to each other (the
// hovered cell, the chosen head, one colour map for the heatmap and the compare panes); what
// they ask of the engine is the window's to wire.

#include "gui/settings/app_settings.h"
#include "gui/window/result_tabs.h"

#include <QImage>
#include <QVector>
#include <QWidget>

#include <memory>

class QTabWidget;

namespace attnscope::views {
class CompareView;
class CostView;
class DiagnosticsStack;
class HeadAtlasView;
class HeadHeatmap;
class HeadsGrid;
class ImageOverlayView;
class NeuronView;
class QkMapView;
class ContextSearchView;
class InspectionState;
class MaskView;
class MoeRoutingView;
class TokenLinks;
}  // namespace attnscope::views

namespace attnscope::engine {
struct RunResult;
}

namespace attnscope::app {

class RandomProjectionBanner;
class WelcomeCard;
class TokenFindBar;
struct SessionState;

/// The tabs, in order (MainWindow::View).
enum class ViewTab { Heatmap = 0, Mask = 1, Compare = 2, Diagnostics = 3, Links = 4, Cost = 5, Atlas = 6, Experts = 7, Image = 8, Neuron = 9, QkMap = 10, Context = 11 };
/// "heatmap", "mask", … "experts": the tabs' names in sessions, the tour and --view, in ViewTab order.
const QStringList& viewTabNames();
QString viewTabName(ViewTab tab);
/// The tab of a name; Heatmap for a name that is none.
ViewTab viewTabNamed(const QString& name);

class ViewTabs : public QWidget {
    Q_OBJECT
public:
    /// The heatmap options (colour map, scale, pooling) come from `settings`.
    ViewTabs(const AppSettings& settings, QWidget* parent = nullptr);

    views::InspectionState* state() const { return m_state; }
    QTabWidget* tabs() const { return m_tabs; }
    ViewTab current() const;
    /// The view of tab `index` (each tab holds its view in a scroll area) and of the shown tab.
    QWidget* page(int index) const;
    QWidget* currentPage() const;
    views::HeadsGrid* headsGrid() const { return m_headsGrid; }
    views::HeadHeatmap* heatmap() const { return m_heatmap; }
    views::MaskView* maskView() const { return m_maskView; }
    views::CompareView* compareView() const { return m_compareView; }
    views::DiagnosticsStack* diagnostics() const { return m_diagnostics; }
    views::TokenLinks* tokenLinks() const { return m_tokenLinks; }
    views::CostView* costView() const { return m_costView; }
    views::HeadAtlasView* atlasView() const { return m_atlasView; }
    views::MoeRoutingView* routingView() const { return m_routingView; }
    views::ImageOverlayView* imageView() const { return m_imageView; }
    views::NeuronView* neuronView() const { return m_neuronView; }
    views::QkMapView* qkMapView() const { return m_qkMapView; }
    views::ContextSearchView* contextView() const { return m_contextView; }
    /// The picture image runs are drawn on (the window's opened image).
    void setPicture(const QImage& picture);
    RandomProjectionBanner* banner() const { return m_banner; }
    /// The first-start card above the banner (hidden unless the window shows it).
    WelcomeCard* welcomeCard() const { return m_welcome; }
    TokenFindBar* findBar() const { return m_findBar; }

    // ---- the shown run (view_tabs_results.cpp)
    /// A new run: every tab lets go of the old one, the heads grid and the shown tab take the
    /// new one at once, a hidden tab when it is first shown. `comparePanes` of its variants are
    /// the Compare tab's panes, `exactNote` says why they lack the exact reference. The selected
    /// head stays when the run has it.
    void showResult(std::shared_ptr<const engine::RunResult> result, int comparePanes, const QString& exactNote);
    /// A run that grows while the model writes (GenerateController::liveRun): the heatmap or the
    /// links, whichever is shown, and the heads strip draw it; the other tabs keep the last finished
    /// run until the next showResult. False when neither view is shown.
    bool showGrowingRun(const std::shared_ptr<const engine::RunResult>& run);
    const std::shared_ptr<const engine::RunResult>& result() const { return m_resultTabs.result(); }
    /// True while `tab`'s view has not taken the shown run.
    bool resultPending(ViewTab tab) const { return m_resultTabs.pending(static_cast<int>(tab)); }
    /// Every tab takes the run and finishes its background work (exports, screenshots, tests).
    void flushResult();
    /// The shown tab as it will look in a figure: its run taken and its background work done.
    QWidget* currentForExport();
    /// The next or previous head of the run (clamped).
    void stepHead(int delta);
    /// Marks `tokens` in every view that shows tokens (Find Token).
    void markTokens(const QVector<int>& tokens);
    /// The shown view goes to `token` as the query (Find Token).
    void goToToken(int token);

    /// The views' part of a session: tab, heatmap options, mask weights, selection, query.
    void captureInto(SessionState& session) const;
    /// The heatmap options (colour map, scale, pooling) the next start begins with.
    void captureInto(AppSettings& settings) const;
    /// Display names by variant id, for every view's titles.
    void setVariantNames(const QHash<QString, QString>& idToName);
    /// Shows a session's view settings; its query shows with the next run.
    void applySession(const SessionState& session);

protected:
    /// The heads strip gets a tenth of the height (thumbnails 48–112 px): on a laptop screen the
    /// views under it need the rest.
    void resizeEvent(QResizeEvent* event) override;

private:
    void addPage(QWidget* view, const QString& title);
    /// `view` as tab `tab` (added in ViewTab order): it follows the state and takes the runs.
    template <class View>
    View* addResultTab(ViewTab tab, View* view, const QString& title);
    void buildTabs(const AppSettings& settings);
    void addTooltips();
    void tieViews();
    /// The heatmap's and the compare panes' colour map, scale and pooling, by their names.
    void showHeatmapOptions(const QString& colormap, const QString& scale, const QString& pooling);
    void tabChanged();

    views::InspectionState* m_state = nullptr;
    QTabWidget* m_tabs = nullptr;
    views::HeadsGrid* m_headsGrid = nullptr;
    views::HeadHeatmap* m_heatmap = nullptr;
    views::MaskView* m_maskView = nullptr;
    views::CompareView* m_compareView = nullptr;
    views::DiagnosticsStack* m_diagnostics = nullptr;
    views::TokenLinks* m_tokenLinks = nullptr;
    views::CostView* m_costView = nullptr;
    views::HeadAtlasView* m_atlasView = nullptr;
    views::MoeRoutingView* m_routingView = nullptr;
    views::ImageOverlayView* m_imageView = nullptr;
    views::NeuronView* m_neuronView = nullptr;
    views::QkMapView* m_qkMapView = nullptr;
    views::ContextSearchView* m_contextView = nullptr;
    RandomProjectionBanner* m_banner = nullptr;
    WelcomeCard* m_welcome = nullptr;
    TokenFindBar* m_findBar = nullptr;
    ResultTabs m_resultTabs;  // the tabs that show runs, and which of them has the shown one
    ViewTab m_shown = ViewTab::Heatmap;  // the tab shown before the current one changed
};

}  // namespace attnscope::app
