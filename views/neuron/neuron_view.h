#pragma once
// The Neuron tab (BertViz's neuron view): why the selected head's query attends where it does. For
// the keys it weighs most, each row is a key and each cell one dimension's product q_c · k_c — a
// row's cells sum to the dot product q · k_j, which scaled (plus the variant's own terms) is the
// score the softmax turns into the weight drawn beside the row, the heatmap's. Hovering a cell
// gives q_c, k_c and their product. Follows the selected result, head and hovered query; any
// variant's Q and K, a model layer's, a picture's (attnscope/neuron_terms.h).

#include "views/widgets/result_view.h"
#include <attnscope/neuron_terms.h>
#include <attnscope/types.h>

#include <QPointer>
#include <QWidget>

#include <memory>
#include <optional>

class QCustomPlot;
class QCPAxisRect;
class QCPBars;
class QCheckBox;
class QCPColorMap;
class QCPColorScale;
class QCPTextElement;
class QLabel;
class QMouseEvent;
class QSpinBox;

namespace attnscope::views {

class InspectionState;

class NeuronView : public QWidget, public ResultView {
    Q_OBJECT
public:
    /// Keys drawn: the ones the query weighs most.
    static constexpr int kShownKeys = 20;

    explicit NeuronView(QWidget* parent = nullptr);
    ~NeuronView() override;

    void setInspectionState(InspectionState* state) override;
    void setResult(Run result) override;
    /// Hidden, it lets go of the run (it is given again when shown).
    bool park() override {
        setResult(nullptr);
        return true;
    }
    /// The query whose row is explained (clamped to the result's queries).
    void setQuery(int query);
    int query() const;

    /// What is drawn: the shown keys' terms, strongest first (none without a result), and the
    /// query's (its vector, head, scale; their `keys` are the shown ones above).
    const std::vector<engine::NeuronKey>& shownKeys() const { return m_shown; }
    const std::optional<engine::NeuronTerms>& terms() const { return m_terms; }
    QString explanation() const;
    /// The text the hover shows for a cell (empty outside the map).
    QString cellText(int row, int dimension) const;
    /// A rotary layer: the cells show q and k before the rotation (positions removed); the
    /// weights stay the model's. Ignored where the result has no rotation.
    void setBeforeRotation(bool before);
    bool showsBeforeRotation() const;
    /// Whether the shown terms have the before-rotation vectors (the box is offered).
    bool rotationOffered() const;
    /// The drawn score parts of row `row`: the scaled dot and the sum of the variant's own terms.
    std::pair<double, double> scoreParts(int row) const;

private:
    void rebuild();
    void showTerms();
    void hover(QMouseEvent* event);
    QString keyLabel(std::int64_t key) const;
    static double termsOf(const engine::NeuronKey& key);

    QPointer<InspectionState> m_state;
    std::shared_ptr<const engine::RunResult> m_result;
    std::optional<engine::NeuronTerms> m_terms;
    std::vector<engine::NeuronKey> m_shown;
    std::size_t m_index = 0;  ///< the result the terms are of
    QSpinBox* m_query = nullptr;
    QCheckBox* m_beforeRotation = nullptr;
    QLabel* m_info = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    QCPAxisRect* m_barRect = nullptr;
    QCPBars* m_bars = nullptr;
    QCPAxisRect* m_scoreRect = nullptr;  ///< each row's score: the scaled dot beside the variant's own terms
    QCPBars* m_dotBars = nullptr;
    QCPBars* m_termBars = nullptr;
};

}  // namespace attnscope::views
