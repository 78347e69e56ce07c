#pragma once
// The Image tab: the picture of an image run with what the selected head does drawn over it
// (docs/IMAGES.md). From the chosen query pixel or patch: its weights (colour map, opacity,
// nearest or smooth), the keys it may attend coloured by reason (the Sparse Transformer's Fig. 3
// on a real picture), or every token's LSH bucket or k-means cluster; the selected head or all
// heads at once. Click a cell to make it the query; hover one for its exact weight.

#include "views/widgets/result_view.h"
#include "views/image/overlay_image.h"
#include "views/data/latest_job.h"

#include <attnscope/types.h>

#include <QImage>
#include <QPointer>
#include <QWidget>

#include <atomic>
#include <cstdint>
#include <memory>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;

namespace attnscope::views {

class ImageCanvas;
class InspectionState;

class ImageOverlayView : public QWidget, public ResultView {
    Q_OBJECT
public:
    explicit ImageOverlayView(QWidget* parent = nullptr);

    void setInspectionState(InspectionState* state) override;
    void setResult(Run result) override;
    /// Hidden, it lets go of the run (it is given again when shown).
    bool park() override {
        setResult(nullptr);
        return true;
    }
    /// The decoded picture the run was made from (the window's), at full resolution.
    void setPicture(const QImage& picture);

    void setQuery(int token);
    int query() const { return m_query; }
    void setKind(OverlayKind kind);
    OverlayKind kind() const { return m_settings.kind; }
    void setAllHeads(bool on);
    void setSmooth(bool on);
    void setOpacity(double opacity);
    void setColormap(const QString& name);
    void setHeadFusion(engine::HeadFusion fusion);
    void setDiscardRatio(double ratio);
    void setMassShare(double share);

    ImageCanvas* canvas() const { return m_canvas; }
    /// The line under the picture: head, query, largest weight, CLS share, hovered weight.
    QString status() const;
    /// Why nothing is drawn ("" when the picture and its overlay are shown).
    QString message() const;
    /// The facts of each head shown (one, or every head), in order.
    const QVector<OverlayFacts>& shownFacts() const { return m_facts; }

Q_SIGNALS:
    /// The user clicked a cell: the query every view should show (token index).
    void queryChosen(int token);

private:
    void buildToolbar();
    void buildModelFields();
    void rebuild();
    void updateStatus();
    void showHover(int token);
    int shownResultIndex() const;
    /// The query the view opens on: the CLS token when there is one, else the middle cell.
    int defaultQuery() const;
    bool pictureMatches() const;
    /// Draws a model kind (layers, rollout, DINO's view) of `head` on the canvas, tiles and
    /// legend; returns why it cannot ("" when drawn). In image_overlay_model.cpp.
    QString showModelKind(int head);
    /// Whether the kind draws from the model's layers rather than the result's weights.
    static bool isModelKind(OverlayKind kind);
    /// The rollout matrix for the current settings, computed once per result and settings.
    const std::vector<double>& rollout();
    /// Starts the attention flow to the current query on the views' worker thread (unless it is
    /// already under way); the view redraws when it arrives.
    void startFlow(const QString& key);

    QPointer<InspectionState> m_state;
    std::shared_ptr<const engine::RunResult> m_result;
    QImage m_picture;
    OverlaySettings m_settings;
    bool m_allHeads = false;
    bool m_smooth = false;
    int m_query = -1;
    int m_hovered = -1;
    QVector<OverlayFacts> m_facts;
    QString m_message;
    std::uint64_t m_resultSerial = 0;  ///< counts setResult calls: the caches' key
    std::vector<double> m_rollout;
    QString m_rolloutKey;  ///< the result and settings m_rollout was computed for
    std::vector<double> m_flow;  ///< [n]: flow to the query from each token
    QString m_flowKey, m_flowPendingKey;  ///< the result and query of m_flow, and of the flow under way
    LatestJob m_flowJob;
    std::shared_ptr<std::atomic<bool>> m_flowCancel;

    QComboBox* m_kindCombo = nullptr;
    QSpinBox* m_roundSpin = nullptr;
    QLabel* m_roundLabel = nullptr;
    QComboBox* m_colormapCombo = nullptr;
    QSlider* m_opacitySlider = nullptr;
    QCheckBox* m_smoothBox = nullptr;
    QCheckBox* m_allHeadsBox = nullptr;
    QPushButton* m_clsButton = nullptr;
    QWidget* m_rolloutFields = nullptr;
    QComboBox* m_fusionCombo = nullptr;
    QDoubleSpinBox* m_discardSpin = nullptr;
    QWidget* m_shareFields = nullptr;
    QDoubleSpinBox* m_shareSpin = nullptr;
    ImageCanvas* m_canvas = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_messageLabel = nullptr;
};

}  // namespace attnscope::views
