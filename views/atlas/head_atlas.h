#pragma once
// The head atlas of a trained checkpoint (docs/ATLAS.md): a layers x heads grid coloured by one
// chosen metric (what the head does, or what a coverage setting keeps of it), with the attention
// rollout beside it. Fed by plain HeadAtlas data; clicking a head is an intent (headSelected), the
// app decides what to run. Built from the atlas's own settings: no per-variant code.

#include <attnscope/head_atlas.h>

#include <QString>
#include <QWidget>

#include <memory>
#include <vector>

class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPItemRect;
class QCPTextElement;
class QLabel;
class QMouseEvent;
class QProgressBar;
class QPushButton;

namespace attnscope::views {

class CoverageEditor;
class RolloutView;

/// One colouring of the grid: a per-head metric, or a coverage setting's kept mass / output error.
struct AtlasMetric {
    enum class Kind {
        Entropy,
        MeanDistance,
        SelfShare,
        PreviousShare,
        NextShare,
        SpecialShare,
        FirstShare,
        SinkShare,
        StreamingKept,
        WindowOnlyKept,
        GroupSimilarity,
        Rank90,
        KeptMass,
        OutputError,
    };
    Kind kind = Kind::Entropy;
    int setting = -1;  ///< index into HeadAtlas::settings for KeptMass and OutputError

    /// The metrics an atlas offers: the per-head metrics (group similarity for grouped-query
    /// models only), then kept mass and output error
    /// of each coverage setting, in the atlas's order.
    static std::vector<AtlasMetric> listFor(const engine::HeadAtlas& atlas);
    /// The head's value; NaN where the setting does not apply (docs/ATLAS.md).
    double valueOf(const engine::HeadMetrics& head) const;
    /// Shown in the combo and on the colour bar, e.g. "kept mass: longformer window=16".
    QString name(const engine::HeadAtlas& atlas) const;
    /// The definition from docs/ATLAS.md, for tooltips.
    QString definition() const;
    /// True for shares and kept mass, drawn on a fixed 0–1 scale so grids of different models
    /// and metrics read alike; the others use the atlas's own range.
    bool isFraction() const;
};

class HeadAtlasView : public QWidget {
    Q_OBJECT
public:
    explicit HeadAtlasView(QWidget* parent = nullptr);
    ~HeadAtlasView() override;

    /// "This model was trained 3000 steps (text), held-out accuracy 0.523 (chance 0.004), loss 1.571.",
    /// led by a warning when the accuracy is near chance; empty without a training record.
    static QString trainingSummary(const engine::ModelInfo& model);

    /// Shows `atlas` (null clears the grid); keeps the chosen metric when the new atlas has it.
    void setAtlas(std::shared_ptr<const engine::HeadAtlas> atlas);
    const std::shared_ptr<const engine::HeadAtlas>& atlas() const { return m_atlas; }

    int metricCount() const { return static_cast<int>(m_metrics.size()); }
    int metricIndex() const;
    void setMetricIndex(int index);
    /// The shown metric; Entropy when no atlas is shown.
    AtlasMetric metric() const;
    QComboBox* metricCombo() const { return m_metricCombo; }
    QPushButton* analyzeButton() const { return m_analyze; }
    QPushButton* cancelButton() const { return m_cancel; }
    RolloutView* rolloutView() const { return m_rollout; }
    /// The coverage settings the next Analyze measures (shown under the toolbar).
    CoverageEditor* coverageEditor() const { return m_coverage; }
    QCustomPlot* gridPlot() const { return m_plot; }

    int layerCount() const;
    /// The layer axis's tick labels ("0 L", "1 G" for a model mixing local and global layers;
    /// empty when the axis shows plain numbers) and its label.
    QStringList layerTickLabels() const;
    QString layerAxisLabel() const;
    int headCount() const;
    /// The plotted value of (layer, head); NaN when out of range or not applicable.
    double cellValue(int layer, int head) const;
    /// The centre of a cell in gridPlot() coordinates (for clicks); (-1, -1) when out of range.
    QPoint cellCenter(int layer, int head) const;
    /// The hover text of a cell: "layer, head: metric = value" and the metric's definition.
    QString cellToolTip(int layer, int head) const;
    /// Outlines the selected head; (-1, -1) for none.
    void setSelectedHead(int layer, int head);
    QString message() const;

public Q_SLOTS:
    /// While busy, Analyze is disabled, Cancel enabled and the progress bar shown.
    void setBusy(bool busy);
    void setProgress(int permille, const QString& stage);
    /// A line under the toolbar: notices, errors, or how to start. Plain text.
    void setMessage(const QString& text);

Q_SIGNALS:
    /// Intent: the user clicked the cell of (layer, head).
    void headSelected(int layer, int head);
    void analyzeRequested();
    void cancelRequested();

private:
    void showTrainingRecord();
    void labelLayerKinds();
    void rebuildGrid();
    void onMouseMove(QMouseEvent* event);
    void onMousePress(QMouseEvent* event);
    bool cellAt(const QPointF& pos, int* layer, int* head) const;

    std::shared_ptr<const engine::HeadAtlas> m_atlas;
    std::vector<AtlasMetric> m_metrics;
    QComboBox* m_metricCombo = nullptr;
    QPushButton* m_analyze = nullptr;
    QPushButton* m_cancel = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_message = nullptr;
    QLabel* m_training = nullptr;  // the trainer's record of the model, when it has one
    QCustomPlot* m_plot = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPItemRect* m_marker = nullptr;
    RolloutView* m_rollout = nullptr;
    CoverageEditor* m_coverage = nullptr;
    int m_selectedLayer = -1;
    int m_selectedHead = -1;
};

}  // namespace attnscope::views
