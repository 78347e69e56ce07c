#pragma once
// Transformer-XL's receptive field, drawn as the paper's Fig. 2b cone: layers upwards, positions
// across. For the chosen query at the top layer, the outline shows every position each layer
// below can reach it from (growing by up to M per layer through the memory) beside the cone of a
// model without memory (its own segment only); with a Transformer-XL model the cells show how
// much attention actually flows from there (rollout across segments, log scale).
// The query: the spin box, or a click in the plot.

#include "views/diagnostics/result_page.h"
#include <attnscope/receptive_field.h>
#include <attnscope/types.h>

#include <QPointer>
#include <QString>
#include <QWidget>

#include <memory>
#include <optional>

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QLabel;
class QSpinBox;

namespace attnscope::views {

class InspectionState;

class ReceptiveFieldView : public ResultPage {
    Q_OBJECT
public:
    /// Layers of the structural cone drawn without a model.
    static constexpr int kDefaultLayers = 3;
    explicit ReceptiveFieldView(QWidget* parent = nullptr);
    ~ReceptiveFieldView() override;

    /// A run; its transformer_xl result sets the layout. When the run's Q/K/V came from a model,
    /// bandsRequested asks for that model's attention on the run's text (once the page shows).
    void setResult(Run result) override;
    /// The model's attention (Engine::modelAttentionBands) for the rollout; ignored unless it is
    /// for the shown run's model and text.
    void setModelBands(std::shared_ptr<const engine::ModelAttentionBands> bands);
    /// The request for bands failed: the cone stays, the message says why there is no flow.
    void setBandsFailed(const QString& message);
    void setQuery(long long query);
    void setLayers(int layers);

    // Data accessors for tests.
    long long query() const { return m_query; }
    int layers() const { return m_field ? m_field->layers : 0; }
    const engine::ReceptiveField* field() const { return m_field ? &*m_field : nullptr; }
    bool hasFlow() const { return m_field && !m_field->flow.empty(); }
    /// The share of the query's top state that comes from positions before its segment (the
    /// memory path) through every layer; NaN without flow.
    double memoryShare() const;
    QString message() const;
    QCustomPlot* plot() const { return m_plot; }
    QSpinBox* querySpin() const { return m_queryBox; }
    QSpinBox* layersSpin() const { return m_layersBox; }

Q_SIGNALS:
    /// Intent: compute the model's attention on `text` (the app answers with setModelBands).
    void bandsRequested(const QString& folder, const QString& text);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void requestBandsOnce();
    void rebuild() override;
    void showMessage(const QString& text);
    void removeOutlines();
    void showColourScale(bool show);
    void drawCone(const engine::ReceptiveField& field, const engine::SegmentLayout& layout);
    void onPlotClick(QMouseEvent* event);

    QLabel* m_info = nullptr;
    QSpinBox* m_queryBox = nullptr;
    QSpinBox* m_layersBox = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    std::shared_ptr<const engine::ModelAttentionBands> m_bands;
    QString m_bandsError;
    std::optional<engine::SegmentLayout> m_layout;
    std::optional<engine::ReceptiveField> m_field;
    bool m_bandsAsked = false;
    long long m_query = -1;
    int m_layers = kDefaultLayers;
};

}  // namespace attnscope::views
