// The Image tab's views of a vision model's own attention through all its layers (ViT, DeiT,
// DINO): the selected head's weights from the query in every layer side by side, attention
// rollout (Abnar & Zuidema 2020, vit-explain's head fusion and discard ratio), and DINO's view of
// the last layer (the patches holding a share of the query's attention).

#include "views/image/image_canvas.h"
#include "views/image/image_overlay_view.h"

#include "views/data/background_job.h"
#include "views/data/colormap.h"

#include <exception>

namespace attnscope::views {

bool ImageOverlayView::isModelKind(OverlayKind kind) {
    return kind == OverlayKind::Layers || kind == OverlayKind::Rollout || kind == OverlayKind::Flow || kind == OverlayKind::MassShare;
}

void ImageOverlayView::startFlow(const QString& key) {
    if (key == m_flowPendingKey) return;
    if (m_flowCancel) m_flowCancel->store(true);  // the flow under way is for another query
    m_flowPendingKey = key;
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    m_flowCancel = cancel;
    const std::uint64_t ticket = m_flowJob.start();
    std::shared_ptr<const engine::RunResult> result = m_result;
    const std::int64_t query = m_query;
    runInBackground<std::vector<double>>(
        this,
        [result, query, cancel] {
            return engine::attentionFlowTo(result->modelLayerAttention, query,
                                           [cancel](std::int64_t, std::int64_t) { return !cancel->load(); });
        },
        [this, ticket, key](std::vector<double> flow) {
            if (!m_flowJob.isLatest(ticket) || flow.empty()) return;
            m_flow = std::move(flow);
            m_flowKey = key;
            m_flowPendingKey.clear();
            rebuild();
        });
}

const std::vector<double>& ImageOverlayView::rollout() {
    const QString key = QStringLiteral("%1|%2|%3")
                            .arg(m_resultSerial)
                            .arg(static_cast<int>(m_settings.fusion))
                            .arg(m_settings.discardRatio);
    if (key != m_rolloutKey) {
        m_rollout = engine::attentionRollout(m_result->modelLayerAttention, m_settings.fusion, m_settings.discardRatio);
        m_rolloutKey = key;
    }
    return m_rollout;
}

QString ImageOverlayView::showModelKind(int head) {
    const engine::ImageGrid& grid = *m_result->input.image;
    const auto& layers = m_result->modelLayerAttention;
    const int n = static_cast<int>(m_result->input.tokens.size());
    if (layers.empty() || layers.front().shape.size() != 3 || layers.front().shape[1] != n)
        return tr("These views need a vision model's attention in every layer: open a ViT, DeiT or DINO folder "
                  "(File ▸ Open Model…) and run it on the picture.");
    const int heads = static_cast<int>(layers.front().shape[0]);
    head = std::clamp(head, 0, heads - 1);
    QVector<ImageCanvas::Tile> tiles;
    ImageCanvas::Legend legend;
    const Colormap& map = Colormap::builtin(m_settings.colormap);
    const auto ramp = [&](const QString& title, double top) {
        legend.title = title;
        legend.top = top;
        for (int i = 0; i < Colormap::kSize; ++i) legend.ramp.push_back(map.color(i));
    };
    try {
        if (m_settings.kind == OverlayKind::Layers) {
            for (std::size_t l = 0; l < layers.size(); ++l) {
                OverlayFacts facts;
                ImageCanvas::Tile tile;
                tile.overlay = valuesOverlay(grid, layerRowOverCells(layers[l], grid, head, m_query), m_settings, &facts.maxWeight);
                tile.label = tr("layer %1").arg(l);
                tiles.push_back(tile);
                m_facts.push_back(facts);
            }
            ramp(tr("weight; each layer to its own top"), m_facts.front().maxWeight);
        } else if (m_settings.kind == OverlayKind::Rollout) {
            const std::vector<double>& r = rollout();
            std::vector<double> row;
            for (std::int64_t cell = 0; cell < grid.cells(); ++cell) row.push_back(r[std::size_t(m_query) * std::size_t(n) + std::size_t(grid.prefix + cell)]);
            OverlayFacts facts;
            ImageCanvas::Tile tile;
            tile.overlay = valuesOverlay(grid, row, m_settings, &facts.maxWeight);
            tiles.push_back(tile);
            m_facts.push_back(facts);
            ramp(tr("rollout from the query"), facts.maxWeight);
        } else if (m_settings.kind == OverlayKind::Flow) {
            const QString key = QStringLiteral("%1|%2").arg(m_resultSerial).arg(m_query);
            if (key != m_flowKey) {
                startFlow(key);
                return tr("Computing the attention flow to %1 through %2 layers: one maximum-flow problem per token…")
                    .arg(QString::fromStdString(m_result->input.tokens[std::size_t(m_query)].text))
                    .arg(layers.size());
            }
            std::vector<double> row(m_flow.begin() + grid.prefix, m_flow.begin() + grid.prefix + grid.cells());
            OverlayFacts facts;
            ImageCanvas::Tile tile;
            tile.overlay = valuesOverlay(grid, row, m_settings, &facts.maxWeight);
            tiles.push_back(tile);
            m_facts.push_back(facts);
            ramp(tr("flow to the query"), facts.maxWeight);
        } else {
            for (int h = m_allHeads ? 0 : head; h < (m_allHeads ? heads : head + 1); ++h) {
                const std::vector<std::uint8_t> kept =
                    engine::massShareCells(layerRowOverCells(layers.back(), grid, h, m_query), m_settings.massShare);
                OverlayFacts facts;
                for (std::uint8_t k : kept) facts.allowedCells += k;
                ImageCanvas::Tile tile;
                tile.overlay = keptCellsOverlay(grid, kept, m_settings);
                if (m_allHeads) tile.label = tr("head %1").arg(h);
                tiles.push_back(tile);
                m_facts.push_back(facts);
            }
            legend.title = tr("clear: %1 of the attention").arg(QString::number(100 * m_settings.massShare, 'g', 3) + QStringLiteral(" %"));
            legend.entries.push_back({QColor(0, 0, 0, 150), tr("the rest")});
        }
    } catch (const std::exception& e) {
        m_facts.clear();
        return QString::fromUtf8(e.what());
    }
    m_canvas->setPicture(m_picture);
    m_canvas->setGrid(m_result->input.image, m_query);
    m_canvas->setTiles(tiles, m_smooth && m_settings.kind != OverlayKind::MassShare);
    m_canvas->setLegend(legend);
    return {};
}

}  // namespace attnscope::views
