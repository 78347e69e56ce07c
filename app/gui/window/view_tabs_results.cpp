// ViewTabs and the shown run: which tab takes it when, the selected head, the views' part of a
// session and Find Token's marks (view_tabs.cpp builds the tabs).

#include "gui/window/view_tabs.h"

#include "gui/settings/session.h"

#include "views/data/background_job.h"
#include "views/compare/compare_view.h"
#include "views/cost/cost_view.h"
#include "views/diagnostics/diagnostics_stack.h"
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

#include <attnscope/types.h>

#include <QStringList>
#include <QTabWidget>

#include <algorithm>

namespace attnscope::app {

const QStringList& viewTabNames() {
    static const QStringList names{QStringLiteral("heatmap"),     QStringLiteral("mask"),  QStringLiteral("compare"),
                                   QStringLiteral("diagnostics"), QStringLiteral("links"), QStringLiteral("cost"),
                                   QStringLiteral("atlas"),       QStringLiteral("experts"), QStringLiteral("image"),
                                   QStringLiteral("neuron"),      QStringLiteral("qkmap"),   QStringLiteral("context")};
    return names;
}

QString viewTabName(ViewTab tab) { return viewTabNames().value(static_cast<int>(tab)); }

ViewTab viewTabNamed(const QString& name) { return static_cast<ViewTab>(std::max<qsizetype>(0, viewTabNames().indexOf(name))); }

void ViewTabs::tabChanged() {
    if (m_shown != current()) m_resultTabs.park(static_cast<int>(m_shown));
    m_shown = current();
    m_resultTabs.deliver(static_cast<int>(current()));
}

void ViewTabs::showResult(std::shared_ptr<const engine::RunResult> result, int comparePanes, const QString& exactNote) {
    std::shared_ptr<const engine::RunResult> previous = m_resultTabs.result();
    // Every tab's view lets go of the old run first (cheap), so the selection changes below redraw
    // nothing; then only the shown tab takes the new one, so a long run costs one view's work here.
    m_compareView->setNextRun(comparePanes, exactNote);
    m_resultTabs.setResult(result);
    // Keep the selected head when it still exists, so re-runs can be compared head by head.
    const std::int64_t heads = result->heads;
    m_state->setResultIndex(0);
    m_state->setHead(static_cast<int>(std::clamp<std::int64_t>(m_state->head(), 0, std::max<std::int64_t>(heads - 1, 0))));
    m_resultTabs.deliver(static_cast<int>(current()));  // first: its head is the first job of the background thread
    m_headsGrid->setResult(result);                      // above the tabs: always shown
    // NOTE: freeing a long run unmaps every page of its weights: the views have let go of it, so
    // the last reference goes on the background thread.
    if (previous) views::backgroundThreadPool()->start([previous = std::move(previous)]() mutable { previous.reset(); });
}

bool ViewTabs::showGrowingRun(const std::shared_ptr<const engine::RunResult>& run) {
    // (set straight on the views: the tabs' bookkeeping keeps the finished run for the other tabs)
    if (current() == ViewTab::Heatmap)
        m_heatmap->setResult(run);
    else if (current() == ViewTab::Links)
        m_tokenLinks->setResult(run);
    else
        return false;
    m_headsGrid->setResult(run);
    return true;
}

void ViewTabs::flushResult() {
    m_resultTabs.flush();
    m_headsGrid->finishPooling();
}

QWidget* ViewTabs::currentForExport() {
    m_resultTabs.deliver(static_cast<int>(current()));
    m_heatmap->finishPooling();
    if (views::ResultView* tab = m_resultTabs.tab(static_cast<int>(current()))) tab->finishBackgroundWork();
    return currentPage();
}

void ViewTabs::stepHead(int delta) {
    const auto& run = result();
    if (!run || run->heads <= 0) return;
    m_state->setHead(std::clamp(m_state->head() + delta, 0, static_cast<int>(run->heads) - 1));
}

void ViewTabs::markTokens(const QVector<int>& tokens) {
    m_heatmap->setHighlightedTokens(tokens);
    m_maskView->setHighlightedTokens(tokens);
    m_compareView->setHighlightedTokens(tokens);
    m_tokenLinks->setHighlightedTokens(tokens);
}

void ViewTabs::goToToken(int token) {
    // The found token as the query; the key stays where the cursor was (or the token itself).
    switch (current()) {
        case ViewTab::Mask:
            m_maskView->moveCursorTo(token, m_maskView->hoveredKey() >= 0 ? m_maskView->hoveredKey() : token);
            break;
        case ViewTab::Links:
            m_tokenLinks->showToken(token);
            break;
        case ViewTab::Heatmap:
            m_heatmap->moveCursorTo(token, m_heatmap->hoveredKey() >= 0 ? m_heatmap->hoveredKey() : token);
            break;
        case ViewTab::Neuron:
            m_neuronView->setQuery(token);
            break;
        case ViewTab::Context:
            m_contextView->setQuery(token);
            break;
        default:
            break;
    }
}

void ViewTabs::captureInto(SessionState& session) const {
    const QString tab = viewTabName(current());
    session.view = Session::viewNames().contains(tab) ? tab : QStringLiteral("heatmap");
    const views::HeatmapOptions heatmap = m_heatmap->options();
    session.colormap = heatmap.colormap;
    session.scale = views::colorScaleName(heatmap.scale);
    session.pooling = views::poolModeName(heatmap.pooling);
    session.maskWeights = m_maskView->showWeights();
    session.layer = m_state->layer();
    session.head = m_state->head();
    session.query = m_maskView->keptQuery();
}

void ViewTabs::captureInto(AppSettings& settings) const {
    const views::HeatmapOptions heatmap = m_heatmap->options();
    settings.heatmapColormap = heatmap.colormap;
    settings.heatmapScale = views::colorScaleName(heatmap.scale);
    settings.heatmapPooling = views::poolModeName(heatmap.pooling);
}

void ViewTabs::setVariantNames(const QHash<QString, QString>& idToName) {
    m_heatmap->setVariantNames(idToName);
    m_maskView->setVariantNames(idToName);
    m_compareView->setVariantNames(idToName);
}

void ViewTabs::applySession(const SessionState& session) {
    showHeatmapOptions(session.colormap, session.scale, session.pooling);
    m_maskView->setShowWeights(session.maskWeights);
    m_state->setLayer(session.layer);
    m_state->setHead(session.head);  // clamped to the run's heads when it arrives
    m_maskView->setQueryForNextRun(session.query);
}

}  // namespace attnscope::app
