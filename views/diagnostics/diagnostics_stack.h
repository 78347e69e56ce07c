#pragma once
// The Diagnostics tab: one page per variant family, chosen by the selected result's variant id
// through a small id → page map; for a variant without a page, the model layer's own diagnostic
// when the run has one (the rotary-position profile of a Llama-family layer), else a sentence. The views behind
// the pages are per variant on purpose: showing a variant's inner workings is their job.

#include "views/widgets/result_view.h"

#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include <QPointer>
#include <QStackedWidget>
#include <QString>

#include <map>
#include <memory>
#include <string>
#include <vector>

class QLabel;
class QTabWidget;

namespace attnscope::views {

class ApproximationView;
class ClusterView;
class MemoryView;
class ReceptiveFieldView;
class RotaryProfileView;
class LatentView;
class SinkView;
class SoftcapView;
class SparsityView;
class InspectionState;
class LshView;
class SpectrumPlot;
class StarPlayer;
class StarReachView;

class DiagnosticsStack : public QStackedWidget, public ResultView {
    Q_OBJECT
public:
    explicit DiagnosticsStack(QWidget* parent = nullptr);
    ~DiagnosticsStack() override;

    /// "performer (approximation of softmax), …": the variants that have a page, from the catalog.
    static QString variantsWithPages();

    /// Every page follows the state and takes the run; the stack shows the selected result's page.
    void setInspectionState(InspectionState* state) override;
    void setResult(Run result) override;

    /// Variant id of the selected result ("" when there is none).
    QString shownVariant() const { return m_shownVariant; }
    bool showsPlaceholder() const;
    QString placeholderText() const;
    SpectrumPlot* spectrumPlot() const { return m_spectrum; }
    ApproximationView* approximationView() const { return m_approximation; }
    LshView* lshView() const { return m_lsh; }
    ClusterView* clusterView() const { return m_clusters; }
    MemoryView* memoryView() const { return m_memory; }
    ReceptiveFieldView* receptiveFieldView() const { return m_receptiveField; }
    StarPlayer* starPlayer() const { return m_star; }
    StarReachView* starReachView() const { return m_starReach; }
    RotaryProfileView* rotaryProfileView() const { return m_rotary; }
    SoftcapView* softcapView() const { return m_softcap; }
    LatentView* latentView() const { return m_latent; }
    SinkView* sinkView() const { return m_sink; }
    SparsityView* sparsityView() const { return m_sparsity; }
    /// A model layer's page (a run without a variant page of its own): "Rotary positions" when the
    /// run has the profile, "Soft-cap" when the layer caps its scores, "Latent keys" for MLA,
    /// "Sinks" when its heads have learned sinks.
    QTabWidget* modelTabs() const { return m_modelTabs; }
    /// The star page's tabs: "Cycles" (the player) and "Reach".
    QTabWidget* starTabs() const { return m_starTabs; }
    /// The memory page's tabs: "Memory" and "Receptive field".
    QTabWidget* memoryTabs() const { return m_memoryTabs; }
    /// The approximation page's tabs: "Approximation" and (linformer only) "Spectrum".
    QTabWidget* approximationTabs() const { return m_approximationTabs; }

Q_SIGNALS:
    /// Intent: run `variantId` again with "name=value" (a page's suggestion, e.g. Reformer's chunk_len).
    void settingSuggested(const QString& variantId, const QString& setting);

private:
    void updatePage();
    /// `page` registered among the pages that take every run and follow the state.
    template <class Page>
    Page* addPage(Page* page);

    QLabel* m_placeholder = nullptr;
    QTabWidget* m_approximationTabs = nullptr;
    SpectrumPlot* m_spectrum = nullptr;
    ApproximationView* m_approximation = nullptr;
    LshView* m_lsh = nullptr;
    ClusterView* m_clusters = nullptr;
    QTabWidget* m_memoryTabs = nullptr;
    MemoryView* m_memory = nullptr;
    ReceptiveFieldView* m_receptiveField = nullptr;
    QTabWidget* m_starTabs = nullptr;
    StarPlayer* m_star = nullptr;
    StarReachView* m_starReach = nullptr;
    QTabWidget* m_modelTabs = nullptr;
    RotaryProfileView* m_rotary = nullptr;
    SoftcapView* m_softcap = nullptr;
    LatentView* m_latent = nullptr;
    SinkView* m_sink = nullptr;
    SparsityView* m_sparsity = nullptr;
    std::map<engine::DiagnosticsPage, QWidget*> m_pages;  // the catalog's page kinds → widgets
    std::vector<ResultView*> m_resultPages;                // every page that takes the run
    QPointer<InspectionState> m_state;
    std::shared_ptr<const engine::RunResult> m_result;
    QString m_shownVariant;
};

}  // namespace attnscope::views
