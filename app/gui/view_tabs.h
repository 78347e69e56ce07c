#pragma once
// The window's right side: the random-projections note, the heads grid, the Find Token bar and the
// view tabs (Heatmap, Mask, Compare, Diagnostics, Links, Cost, Atlas, Experts, in ViewTab order),
// all following one InspectionState. It builds the views and what ties them to each other (the
// hovered cell, the chosen head, one colour map for the heatmap and the compare panes); what
// they ask of the engine is the window's to wire.

#include "gui/app_settings.h"

#include <QWidget>

class QTabWidget;

namespace attnscope::views {
class CompareView;
class CostView;
class DiagnosticsStack;
class HeadAtlasView;
class HeadHeatmap;
class HeadsGrid;
class InspectionState;
class MaskView;
class MoeRoutingView;
class TokenLinks;
}  // namespace attnscope::views

namespace attnscope::app {

class RandomProjectionBanner;
class TokenFindBar;

/// The tabs, in order (MainWindow::View).
enum class ViewTab { Heatmap = 0, Mask = 1, Compare = 2, Diagnostics = 3, Links = 4, Cost = 5, Atlas = 6, Experts = 7 };

class ViewTabs : public QWidget {
    Q_OBJECT
public:
    /// The heatmap options (colour map, scale, pooling) come from `settings`.
    ViewTabs(const AppSettings& settings, QWidget* parent = nullptr);

    views::InspectionState* state() const { return m_state; }
    QTabWidget* tabs() const { return m_tabs; }
    ViewTab current() const;
    views::HeadsGrid* headsGrid() const { return m_headsGrid; }
    views::HeadHeatmap* heatmap() const { return m_heatmap; }
    views::MaskView* maskView() const { return m_maskView; }
    views::CompareView* compareView() const { return m_compareView; }
    views::DiagnosticsStack* diagnostics() const { return m_diagnostics; }
    views::TokenLinks* tokenLinks() const { return m_tokenLinks; }
    views::CostView* costView() const { return m_costView; }
    views::HeadAtlasView* atlasView() const { return m_atlasView; }
    views::MoeRoutingView* routingView() const { return m_routingView; }
    RandomProjectionBanner* banner() const { return m_banner; }
    TokenFindBar* findBar() const { return m_findBar; }

private:
    void buildTabs(const AppSettings& settings);
    void addTooltips();
    void tieViews();

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
    RandomProjectionBanner* m_banner = nullptr;
    TokenFindBar* m_findBar = nullptr;
};

}  // namespace attnscope::app
