#pragma once
// The layers × tokens grid of a Switch model's routing: one row per expert layer, one column per
// token, each cell its first choice's expert colour (opacity = gate), dropped cells grey. Hover
// names the token, the layer, the expert and the gate.

#include <attnscope/moe_router.h>
#include <attnscope/types.h>

#include <QWidget>

#include <utility>
#include <vector>

namespace attnscope::views {

class ExpertLayersGrid : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMaxTokens = 1024;  ///< columns drawn; the rest are summarised
    explicit ExpertLayersGrid(QWidget* parent = nullptr);

    /// (layer, routing) per expert layer, in layer order; the tokens the routings cover.
    void setRoutings(std::vector<std::pair<int, engine::Routing>> layers, engine::TokenizedInput input);
    void clear();
    int layerCount() const { return static_cast<int>(m_layers.size()); }
    /// What the cell at `pos` shows, "" outside the grid (the tooltip's text).
    QString describeAt(const QPoint& pos) const;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    QRect gridRect() const;
    int columns() const;
    std::vector<std::pair<int, engine::Routing>> m_layers;
    engine::TokenizedInput m_input;
};

}  // namespace attnscope::views
