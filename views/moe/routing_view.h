#pragma once
// The Experts tab: mixture-of-experts routing of the shown text's tokens (Fedus et al. 2021, Switch
// Transformer; top-k as GShard / Mixtral), by a seeded random router over the random projections'
// token states — the mechanics of capacity, drops and balance on any input. The tokens coloured by
// expert (opacity = gate, dropped struck through), the router probabilities (tokens × experts),
// and each expert's load against the capacity. Routing is O(n·E): every control re-routes at once,
// the paper's Fig. 3 made interactive. Plain engine code only (attnscope/moe_router.h).

#include "views/widgets/result_view.h"
#include <attnscope/moe_router.h>
#include <attnscope/types.h>

#include <QWidget>

#include <cstdint>
#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QLabel;
class QSlider;
class QSpinBox;
class QTabWidget;
class QTextBrowser;

namespace attnscope::views {

class ExpertLayersGrid;

class MoeRoutingView : public QWidget, public ResultView {
    Q_OBJECT
public:
    static constexpr int kDefaultExperts = 8;
    static constexpr int kStateDim = 64;  ///< d of the token states, as `attnscope-cli route --dim`
    /// Tokens written out in the strip; beyond, the first ones and a note.
    static constexpr int kMaxStripTokens = 2000;
    explicit MoeRoutingView(QWidget* parent = nullptr);

    /// The tokens to route and the seed of their states and of the router (the run's).
    void setTokens(const engine::TokenizedInput& input, std::uint64_t seed);
    /// A run on a Switch model's layer: its own router logits, routed by default with the
    /// model's capacity; the expert count is the model's. Moving the capacity slider re-routes
    /// the same logits with that factor.
    void setModelRouting(const engine::TokenizedInput& input, const engine::ModelRouting& routing, int layer);
    /// True while the shown logits are a model's (setModelRouting), false for the seeded router.
    bool showsModelRouter() const { return m_modelLayer >= 0; }
    void clear();
    /// A run: its model layer's own routing when the layer has a Switch FFN, else the seeded
    /// router on its tokens; null clears.
    void setResult(Run result) override;
    /// (routing is per token, whatever result or head is selected)
    void setInspectionState(InspectionState*) override {}

    // The controls (tests drive them as a user would).
    QSpinBox* expertsSpin() const { return m_experts; }
    QComboBox* policyCombo() const { return m_policy; }
    QSpinBox* kSpin() const { return m_k; }
    QCheckBox* normalizeCheck() const { return m_normalize; }
    /// Capacity factor in hundredths (0 = no capacity).
    QSlider* capacitySlider() const { return m_capacity; }
    QComboBox* priorityCombo() const { return m_priority; }
    QComboBox* droppedAsCombo() const { return m_droppedAs; }

    /// The router the controls set; with the model's router, its own scoring, choice bias (of
    /// model layer `layer`, −1: the run's layer), groups and scale beside them.
    engine::RouterOptions options(int layer = -1) const;
    /// The routing shown; nullopt without tokens or when the options are refused (message()).
    const std::optional<engine::Routing>& routing() const { return m_routing; }
    /// The router logits routed ([n, E]), for tests that route them again independently.
    const engine::PlainTensor& logits() const { return m_logits; }
    QString message() const;
    /// The shown routing to `path`: .safetensors holds the moe.* tensors and the summary (as
    /// `attnscope-cli route --out`), .csv one row per token and choice (as `route --csv`). "" on
    /// success, else the message.
    QString exportRouting(const QString& path) const;
    QString stripHtml() const;
    QCustomPlot* probabilityPlot() const { return m_probPlot; }
    QCustomPlot* loadPlot() const { return m_loadPlot; }
    /// "This layer" (probabilities, load) and "All layers" (a model's layers × tokens grid,
    /// specialisation, load per layer, co-activation; enabled for a model's router only).
    QTabWidget* pages() const { return m_pages; }
    ExpertLayersGrid* layersGrid() const { return m_layersGrid; }
    QString layersReportHtml() const;

private:
    QWidget* buildControls();
    QWidget* buildPlots();
    void useSeededRouter();
    void rebuildLogits();
    void reroute();
    void drawStrip();
    void drawProbabilities();
    void drawLoad();
    void drawModelLayers();
    void updateControls();

    QSpinBox* m_experts = nullptr;
    QComboBox* m_policy = nullptr;
    QSpinBox* m_k = nullptr;
    QCheckBox* m_normalize = nullptr;
    QSlider* m_capacity = nullptr;
    QLabel* m_capacityLabel = nullptr;
    QComboBox* m_priority = nullptr;
    QComboBox* m_droppedAs = nullptr;
    QLabel* m_source = nullptr;
    QLabel* m_summary = nullptr;
    QTextBrowser* m_strip = nullptr;
    QCustomPlot* m_probPlot = nullptr;
    QCPColorMap* m_probMap = nullptr;
    QCustomPlot* m_loadPlot = nullptr;
    QTabWidget* m_pages = nullptr;
    ExpertLayersGrid* m_layersGrid = nullptr;
    QTextBrowser* m_layersReport = nullptr;

    engine::TokenizedInput m_input;
    std::uint64_t m_seed = 0;
    engine::PlainTensor m_logits;
    std::optional<engine::Routing> m_routing;
    // the model's router (setModelRouting); m_modelLayer < 0 for the seeded one
    int m_modelLayer = -1;
    engine::PlainTensor m_modelLogits;
    std::vector<engine::PlainTensor> m_modelLayerLogits;  ///< per model layer, empty for dense ones
    std::int64_t m_modelExpertCapacity = 0;  ///< used until the user moves the capacity slider
    engine::ModelRouting m_modelRouter;  ///< the model's own scoring, biases, groups and scale (no logits)
    bool m_modelCapacity = false;
};

}  // namespace attnscope::views
