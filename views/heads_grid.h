#pragma once
// Small multiples: one thumbnail per (layer, head) of the selected result; click to select.

#include <attnscope/types.h>

#include <QImage>
#include <QPointer>
#include <QVector>
#include <QWidget>

#include <memory>

namespace attnscope::views {

class InspectionState;

class HeadsGrid : public QWidget {
    Q_OBJECT
public:
    static constexpr int kThumbnailSide = 128;  ///< pixels of a thumbnail image before scaling
    static constexpr int kMaxCellSide = 112;    ///< largest drawn thumbnail, in device-independent px

    explicit HeadsGrid(QWidget* parent = nullptr);

    /// Highlights state->head() and shows state->resultIndex(); follows their changes.
    void setInspectionState(InspectionState* state);
    void setResult(std::shared_ptr<const engine::RunResult> result);

    int layerCount() const { return m_thumbnails.isEmpty() ? 0 : 1; }  // one layer until checkpoints
    int headCount() const { return m_thumbnails.size(); }
    /// The thumbnail image (viridis, scaled to the head's own maximum); null when out of range.
    QImage thumbnail(int layer, int head) const;
    /// Where a thumbnail is drawn, in widget coordinates; empty when out of range.
    QRect thumbnailRect(int layer, int head) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

Q_SIGNALS:
    /// Intent: the user clicked the thumbnail of (layer, head).
    void headSelected(int layer, int head);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    void rebuild();
    int cellSide(int width) const;
    int labelHeight() const;
    int rowLabelWidth() const;

    QPointer<InspectionState> m_state;
    std::shared_ptr<const engine::RunResult> m_result;
    QVector<QImage> m_thumbnails;  // [heads] of layer 0
};

}  // namespace attnscope::views
