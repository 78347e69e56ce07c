#include "views/diagnostics/diagnostics_stack.h"

#include <attnscope/diagnostics.h>
#include <attnscope/variant_catalog.h>

#include "views/diagnostics/approximation_view.h"
#include "views/diagnostics/cluster_view.h"
#include "views/diagnostics/lsh_view.h"
#include "views/diagnostics/memory_view.h"
#include "views/diagnostics/receptive_field_view.h"
#include "views/diagnostics/rotary_profile_view.h"
#include "views/diagnostics/latent_view.h"
#include "views/diagnostics/sink_view.h"
#include "views/diagnostics/softcap_view.h"
#include "views/diagnostics/sparsity_view.h"
#include "views/diagnostics/spectrum_plot.h"
#include "views/diagnostics/star_player.h"
#include "views/diagnostics/star_reach_view.h"
#include "views/data/inspection_state.h"

#include <QLabel>
#include <QTabWidget>

namespace attnscope::views {

namespace {

constexpr int kApproximationTab = 0;
constexpr int kSpectrumTab = 1;
constexpr int kMemoryTab = 0;
constexpr int kReceptiveFieldTab = 1;
constexpr int kRotaryTab = 0;
constexpr int kSoftcapTab = 1;
constexpr int kLatentTab = 2;
constexpr int kSinkTab = 3;

}  // namespace

template <class Page>
Page* DiagnosticsStack::addPage(Page* page) {
    m_resultPages.push_back(page);
    return page;
}

DiagnosticsStack::DiagnosticsStack(QWidget* parent) : QStackedWidget(parent) {
    m_placeholder = new QLabel(this);
    m_placeholder->setTextFormat(Qt::PlainText);
    m_placeholder->setWordWrap(true);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setMargin(24);
    m_approximationTabs = new QTabWidget(this);
    m_approximation = addPage(new ApproximationView(m_approximationTabs));
    m_spectrum = addPage(new SpectrumPlot(m_approximationTabs));
    m_approximationTabs->insertTab(kApproximationTab, m_approximation, tr("Approximation"));
    m_approximationTabs->insertTab(kSpectrumTab, m_spectrum, tr("Spectrum"));
    m_approximationTabs->setTabToolTip(kApproximationTab, tr("Implied attention against exact softmax, error map and curve"));
    m_approximationTabs->setTabToolTip(kSpectrumTab, tr("Singular values of the exact softmax matrix (Linformer's low-rank evidence)"));
    m_lsh = addPage(new LshView(this));
    m_clusters = addPage(new ClusterView(this));
    m_memoryTabs = new QTabWidget(this);
    m_memory = addPage(new MemoryView(m_memoryTabs));
    m_receptiveField = addPage(new ReceptiveFieldView(m_memoryTabs));
    m_memoryTabs->insertTab(kMemoryTab, m_memory, tr("Memory"));
    m_memoryTabs->insertTab(kReceptiveFieldTab, m_receptiveField, tr("Receptive field"));
    m_memoryTabs->setTabToolTip(kMemoryTab, tr("One segment's attention over [memory | segment] and the four score terms"));
    m_memoryTabs->setTabToolTip(kReceptiveFieldTab, tr("The positions that reach a query through the layers, and the attention that flows"));
    addWidget(m_placeholder);
    addWidget(m_approximationTabs);
    addWidget(m_lsh);
    addWidget(m_clusters);
    addWidget(m_memoryTabs);
    m_starTabs = new QTabWidget(this);
    m_star = addPage(new StarPlayer(m_starTabs));
    m_starReach = new StarReachView(m_starTabs);
    m_starTabs->addTab(m_star, tr("Cycles"));
    m_starTabs->addTab(m_starReach, tr("Reach"));
    m_starTabs->setTabToolTip(1, tr("What reaches each node after the cycle shown: through the ring, through the relay"));
    connect(m_star, &StarPlayer::passChanged, m_starReach, &StarReachView::setPass);
    connect(m_star, &StarPlayer::cycleChanged, m_starReach, &StarReachView::setCycle);
    addWidget(m_starTabs);
    m_modelTabs = new QTabWidget(this);
    m_rotary = addPage(new RotaryProfileView(m_modelTabs));
    m_softcap = addPage(new SoftcapView(m_modelTabs));
    m_modelTabs->insertTab(kRotaryTab, m_rotary, tr("Rotary positions"));
    m_modelTabs->insertTab(kSoftcapTab, m_softcap, tr("Soft-cap"));
    m_modelTabs->setTabToolTip(kRotaryTab, tr("The layer's mean score by distance, with its rotary positions and with them undone"));
    m_modelTabs->setTabToolTip(kSoftcapTab, tr("How many of the layer's scores its soft-cap flattens, per head"));
    m_latent = addPage(new LatentView(m_modelTabs));
    m_modelTabs->insertTab(kLatentTab, m_latent, tr("Latent keys"));
    m_modelTabs->setTabToolTip(kLatentTab, tr("Multi-head latent attention: the keys' rank against the latent's, and each "
                                              "head's rotary and non-rotary score parts"));
    m_sink = addPage(new SinkView(m_modelTabs));
    m_modelTabs->insertTab(kSinkTab, m_sink, tr("Sinks"));
    m_modelTabs->setTabToolTip(kSinkTab, tr("Learned sinks: the weight each head's rows give to no token"));
    addWidget(m_modelTabs);
    m_sparsity = addPage(new SparsityView(this));
    addWidget(m_sparsity);
    connect(m_lsh, &LshView::settingSuggested, this, &DiagnosticsStack::settingSuggested);
    connect(m_clusters, &ClusterView::settingSuggested, this, &DiagnosticsStack::settingSuggested);
    // A new kind of diagnostic adds its page here (and to DiagnosticsPage); variants name theirs.
    m_pages = {{engine::DiagnosticsPage::Approximation, m_approximationTabs},
               {engine::DiagnosticsPage::Lsh, m_lsh},
               {engine::DiagnosticsPage::Clusters, m_clusters},
               {engine::DiagnosticsPage::Memory, m_memoryTabs},
               {engine::DiagnosticsPage::Star, m_starTabs},
               {engine::DiagnosticsPage::Sparsity, m_sparsity}};
    updatePage();
}

DiagnosticsStack::~DiagnosticsStack() = default;

QString DiagnosticsStack::variantsWithPages() {
    QStringList parts;
    for (const engine::VariantInfo& info : engine::variantCatalog()) {
        if (info.diagnosticsPage == engine::DiagnosticsPage::None) continue;
        const QString what = info.diagnosticsPage == engine::DiagnosticsPage::Approximation
                                 ? (engine::writesSpectrum(info) ? tr("approximation of softmax, spectrum") : tr("approximation of softmax"))
                             : info.diagnosticsPage == engine::DiagnosticsPage::Lsh    ? tr("LSH buckets and chunks")
                             : info.diagnosticsPage == engine::DiagnosticsPage::Memory ? tr("segment memory, score terms, receptive field")
                             : info.diagnosticsPage == engine::DiagnosticsPage::Star   ? tr("ring and relay cycles")
                             : info.diagnosticsPage == engine::DiagnosticsPage::Sparsity ? tr("keys kept and the softmax mass they hold")
                                                                                       : tr("k-means clusters");
        parts << QStringLiteral("%1 (%2)").arg(QString::fromStdString(info.id), what);
    }
    return parts.join(QStringLiteral(", "));
}

void DiagnosticsStack::setInspectionState(InspectionState* state) {
    if (m_state) disconnect(m_state, nullptr, this, nullptr);
    m_state = state;
    if (state) connect(state, &InspectionState::resultIndexChanged, this, &DiagnosticsStack::updatePage);
    for (ResultView* page : m_resultPages) page->setInspectionState(state);
    updatePage();
}

void DiagnosticsStack::setResult(Run result) {
    m_result = std::move(result);
    for (ResultView* page : m_resultPages) page->setResult(m_result);
    updatePage();
}

void DiagnosticsStack::updatePage() {
    const int index = m_state ? m_state->resultIndex() : 0;
    const QString previous = m_shownVariant;
    m_shownVariant.clear();
    if (m_result && index >= 0 && index < static_cast<int>(m_result->results.size()))
        m_shownVariant = QString::fromStdString(m_result->results[static_cast<std::size_t>(index)].variantId);
    const engine::VariantInfo* info = engine::findVariantInfo(m_shownVariant.toStdString());
    const auto page = info ? m_pages.find(info->diagnosticsPage) : m_pages.end();
    const bool rotary = m_result && m_result->rotaryProfile, capped = m_result && SoftcapView::shows(*m_result);
    const bool latent = m_result && m_result->latentProfile, sinks = m_result && SinkView::shows(*m_result);
    if (page == m_pages.end() && (rotary || capped || latent || sinks) && !m_shownVariant.isEmpty()) {
        m_modelTabs->setTabVisible(kRotaryTab, rotary);
        m_modelTabs->setTabVisible(kSoftcapTab, capped);
        m_modelTabs->setTabVisible(kLatentTab, latent);
        m_modelTabs->setTabVisible(kSinkTab, sinks);
        if (!m_modelTabs->isTabVisible(m_modelTabs->currentIndex()))
            m_modelTabs->setCurrentIndex(rotary ? kRotaryTab : capped ? kSoftcapTab : latent ? kLatentTab : kSinkTab);
        setCurrentWidget(m_modelTabs);
        return;
    }
    if (page == m_pages.end()) {
        m_placeholder->setText(m_shownVariant.isEmpty()
                                   ? tr("No result yet.")
                                   : tr("No diagnostics for this variant (%1). Diagnostics exist for %2.")
                                         .arg(m_shownVariant, variantsWithPages()));
        setCurrentWidget(m_placeholder);
        return;
    }
    const bool linformer = engine::writesSpectrum(*info);
    m_approximationTabs->setTabVisible(kSpectrumTab, linformer);
    // Entering linformer shows its spectrum first (the paper's evidence); leaving it shows the
    // approximation, the one page every approximating variant has.
    if (linformer && previous != m_shownVariant) m_approximationTabs->setCurrentIndex(kSpectrumTab);
    if (!linformer) m_approximationTabs->setCurrentIndex(kApproximationTab);
    setCurrentWidget(page->second);
}

QString DiagnosticsStack::placeholderText() const { return m_placeholder->text(); }
bool DiagnosticsStack::showsPlaceholder() const { return currentWidget() == m_placeholder; }

}  // namespace attnscope::views
