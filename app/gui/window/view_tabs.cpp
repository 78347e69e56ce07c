#include "gui/window/view_tabs.h"

#include "gui/window/random_projection_banner.h"
#include "gui/window/welcome_card.h"
#include "gui/window/token_find_bar.h"

#include "views/compare/compare_view.h"
#include "views/cost/cost_view.h"
#include "views/diagnostics/diagnostics_stack.h"
#include "views/atlas/head_atlas.h"
#include "views/heatmap/head_heatmap.h"
#include "views/heatmap/heads_grid.h"
#include "views/data/heatmap_options.h"
#include "views/image/image_overlay_view.h"
#include "views/data/inspection_state.h"
#include "views/mask/mask_view.h"
#include "views/context/context_search_view.h"
#include "views/neuron/neuron_view.h"
#include "views/qkmap/qk_map_view.h"
#include "views/moe/routing_view.h"
#include "views/links/token_links.h"

#include <QResizeEvent>
#include <QScrollArea>
#include <QTabWidget>
#include <QVBoxLayout>

namespace attnscope::app {

ViewTabs::ViewTabs(const AppSettings& settings, QWidget* parent) : QWidget(parent) {
    m_state = new views::InspectionState(this);
    auto* layout = new QVBoxLayout(this);
    m_welcome = new WelcomeCard(this);
    m_welcome->hide();
    m_banner = new RandomProjectionBanner(this);
    m_headsGrid = new views::HeadsGrid(this);
    m_headsGrid->setInspectionState(m_state);
    m_headsGrid->setBackgroundPooling();
    m_findBar = new TokenFindBar(this);
    m_tabs = new QTabWidget(this);
    buildTabs(settings);
    addTooltips();
    tieViews();
    connect(m_tabs, &QTabWidget::currentChanged, this, &ViewTabs::tabChanged);
    layout->addWidget(m_welcome);
    layout->addWidget(m_banner);
    layout->addWidget(m_headsGrid);
    layout->addWidget(m_findBar);
    layout->addWidget(m_tabs, 1);
}

namespace {

// A page's layout that hides its word-wrapped labels' height-for-width from the scroll area: with
// it, the scroll area sized the view to its preferred height and scrolled views (Compare, Experts)
// that fit the tab; without it, the view takes the tab's height and scrolls only below its minimum.
class PageLayout final : public QVBoxLayout {
public:
    using QVBoxLayout::QVBoxLayout;
    bool hasHeightForWidth() const override { return false; }
};

}  // namespace

// Each view in a scroll area of its own: on a short screen (a laptop's 768 px with the Messages
// dock open) a view scrolls inside its tab instead of asking the window to grow past the screen.
void ViewTabs::addPage(QWidget* view, const QString& title) {
    auto* scroll = new QScrollArea(m_tabs);
    auto* page = new QWidget(scroll);
    auto* layout = new PageLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view);
    scroll->setWidget(page);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumSize(0, 0);
    m_tabs->addTab(scroll, title);
}

QWidget* ViewTabs::page(int index) const {
    auto* scroll = qobject_cast<QScrollArea*>(m_tabs->widget(index));
    return scroll ? scroll->widget()->layout()->itemAt(0)->widget() : m_tabs->widget(index);
}

QWidget* ViewTabs::currentPage() const { return page(m_tabs->currentIndex()); }

ViewTab ViewTabs::current() const { return static_cast<ViewTab>(m_tabs->currentIndex()); }

template <class View>
View* ViewTabs::addResultTab(ViewTab tab, View* view, const QString& title) {
    Q_ASSERT(m_tabs->count() == static_cast<int>(tab));  // (tabs are added in ViewTab order)
    addPage(view, title);
    view->setInspectionState(m_state);
    m_resultTabs.add(static_cast<int>(tab), view);
    return view;
}

// The tabs in ViewTab order: each view that shows runs is registered once, by its contract
// (views::ResultView), in the table that delivers runs and follows the state. Long inputs are
// pooled, classified and compared on the views' worker thread, so the GUI thread never does it.
void ViewTabs::buildTabs(const AppSettings& settings) {
    m_heatmap = addResultTab(ViewTab::Heatmap, new views::HeadHeatmap(m_tabs), tr("Heatmap"));
    m_heatmap->setBackgroundPooling();
    m_maskView = addResultTab(ViewTab::Mask, new views::MaskView(m_tabs), tr("Mask"));
    m_maskView->setBackgroundBuild();
    m_compareView = addResultTab(ViewTab::Compare, new views::CompareView(m_tabs), tr("Compare"));
    m_compareView->setBackgroundWork(true);  // difference map and error summaries: O(n·m) per pane
    m_diagnostics = addResultTab(ViewTab::Diagnostics, new views::DiagnosticsStack(m_tabs), tr("Diagnostics"));
    m_tokenLinks = addResultTab(ViewTab::Links, new views::TokenLinks(m_tabs), tr("Links"));
    m_costView = addResultTab(ViewTab::Cost, new views::CostView(m_tabs), tr("Cost"));
    m_atlasView = new views::HeadAtlasView(m_tabs);  // the model's analysis, not runs
    addPage(m_atlasView, tr("Atlas"));
    m_routingView = addResultTab(ViewTab::Experts, new views::MoeRoutingView(m_tabs), tr("Experts"));
    m_imageView = addResultTab(ViewTab::Image, new views::ImageOverlayView(m_tabs), tr("Image"));
    m_neuronView = addResultTab(ViewTab::Neuron, new views::NeuronView(m_tabs), tr("Neuron"));
    m_qkMapView = addResultTab(ViewTab::QkMap, new views::QkMapView(m_tabs), tr("Q–K map"));
    m_contextView = addResultTab(ViewTab::Context, new views::ContextSearchView(m_tabs), tr("Context"));
    // Colour map, scale and pooling: persisted, and shared by the compare panes.
    showHeatmapOptions(settings.heatmapColormap, settings.heatmapScale, settings.heatmapPooling);
}

void ViewTabs::showHeatmapOptions(const QString& colormap, const QString& scale, const QString& pooling) {
    views::HeatmapOptions options;
    options.colormap = colormap;
    options.scale = views::colorScaleFromName(scale);
    options.pooling = views::poolModeFromName(pooling);
    m_heatmap->setOptions(options);
    for (int i = 0; i < views::CompareView::kMaxPanes; ++i) m_compareView->pane(i)->setOptions(options);
}

void ViewTabs::addTooltips() {
    const auto tip = [this](ViewTab tab, const QString& text) { m_tabs->setTabToolTip(static_cast<int>(tab), text); };
    tip(ViewTab::Heatmap, tr("The selected head's attention weights"));
    tip(ViewTab::Mask, tr("Which keys each query may attend and why, with a row panel for the hovered query"));
    tip(ViewTab::Compare, tr("The variant and the “Compare with” variant on the same Q, K, V, same head"));
    tip(ViewTab::Diagnostics, tr("The variant's inner workings: approximation error against exact softmax, "
                                 "Linformer's spectrum, Reformer's LSH buckets, Routing's clusters, "
                                 "Transformer-XL's memory and receptive field; a model layer's rotary positions, "
                                 "soft-cap, sinks or latent keys"));
    tip(ViewTab::Links, tr("Query tokens linked to key tokens, lines weighted by attention; hover a token to isolate it"));
    tip(ViewTab::Cost, tr("Time, memory and FLOPs of the run per stage; scaling of time and memory with n"));
    tip(ViewTab::Atlas, tr("Every head of the opened model coloured by one metric, and what each efficient "
                           "variant would keep of it; attention rollout across layers"));
    tip(ViewTab::Experts, tr("Mixture-of-experts routing of the tokens (Switch top-1 or top-k): experts, capacity, "
                             "dropped tokens, load and the balancing losses"));
    tip(ViewTab::Image, tr("An image run drawn on its picture: the weights from a pixel or patch you click, the keys it may "
                           "attend, LSH buckets and k-means clusters; one head or all"));
}

void ViewTabs::setPicture(const QImage& picture) { m_imageView->setPicture(picture); }

// The hovered cell and the chosen head are the state's; the panes take the heatmap's options.
void ViewTabs::tieViews() {
    connect(m_heatmap, &views::HeadHeatmap::optionsChanged, this, [this](const views::HeatmapOptions& options) {
        for (int i = 0; i < views::CompareView::kMaxPanes; ++i) m_compareView->pane(i)->setOptions(options);
    });
    connect(m_maskView, &views::MaskView::cellHovered, m_state, &views::InspectionState::setHovered);
    connect(m_heatmap, &views::HeadHeatmap::cellHovered, m_state, &views::InspectionState::setHovered);
    // A query chosen on the picture is the mask view's row panel too.
    connect(m_imageView, &views::ImageOverlayView::queryChosen, this, [this](int token) {
        if (const auto& run = result(); run && token < run->n) m_maskView->showQuery(token);
    });
    connect(m_headsGrid, &views::HeadsGrid::headSelected, this, [this](int layer, int head) {
        m_state->setLayer(layer);
        m_state->setHead(head);
    });
}

void ViewTabs::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    m_headsGrid->setMaxCellSide(height() / 10);
}

}  // namespace attnscope::app
