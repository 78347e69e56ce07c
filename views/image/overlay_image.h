#pragma once
// What the image view draws over the picture for one head, as a small image of the token grid
// (one pixel per grid cell, ARGB): the head's weights from the chosen query (colour map, alpha
// rising with the weight), the keys the query may attend coloured by reason, or each token's
// group (LSH bucket, k-means cluster). The canvas scales it onto the picture (image_canvas.h).

#include <attnscope/types.h>
#include <attnscope/vit_views.h>

#include <QImage>
#include <QString>

namespace attnscope::views {

enum class OverlayKind {
    Weights,  ///< the selected head's weights from the query
    Mask,     ///< the keys the query may attend, coloured by why
    Groups,   ///< each token's bucket or cluster (VariantInfo::tokenGroups)
    // A vision model's own attention over all its layers (RunResult::modelLayerAttention):
    Layers,     ///< the selected head's weights from the query in every layer, one picture each
    Rollout,    ///< attention rollout from the query (head fusion, discard ratio)
    Flow,       ///< attention flow to the query from each cell (max-flow, computed in the background)
    MassShare,  ///< DINO's view: the cells holding a share of the query's attention in the last layer
};

struct OverlaySettings {
    OverlayKind kind = OverlayKind::Weights;
    QString colormap = QStringLiteral("viridis");
    double opacity = 0.75;  ///< alpha of the strongest cell (weights) or of every coloured cell
    int round = 0;          ///< groups: which of the R entries (hash round; queries / keys)
    engine::HeadFusion fusion = engine::HeadFusion::Mean;  ///< rollout
    double discardRatio = 0.9;  ///< rollout
    double massShare = 0.6;     ///< DINO's view
};

/// What the overlay of one head holds, besides its picture.
struct OverlayFacts {
    double maxWeight = 0;     ///< largest weight on a grid cell (weights), the colour scale's top
    double prefixWeight = 0;  ///< weight on the tokens before the grid (CLS), not drawn
    int allowedCells = 0;     ///< mask: grid cells the query may attend
    long long queryGroup = -1;  ///< groups: the query's group
    int sameGroupCells = 0;   ///< groups: grid cells in the query's group
    QString message;          ///< why nothing could be drawn ("" when the image is valid)
};

/// The overlay of `head` of result `resultIndex` from token `query`: a grid.cols × grid.rows
/// ARGB32 image, or a null image and facts.message saying why. Needs run.input.image.
QImage overlayImage(const engine::RunResult& run, int resultIndex, int head, int query, const OverlaySettings& settings,
                    OverlayFacts* facts = nullptr);

/// Per-cell values (grid.cells(), raster order) coloured as weights are: the colour map and alpha
/// scaled to the largest value, which `top` receives.
QImage valuesOverlay(const engine::ImageGrid& grid, const std::vector<double>& cells, const OverlaySettings& settings, double* top);

/// DINO's view: the kept cells clear, the others dimmed.
QImage keptCellsOverlay(const engine::ImageGrid& grid, const std::vector<std::uint8_t>& kept, const OverlaySettings& settings);

/// Row `query` of head `head` of `layer` ([heads, n, n]) over the grid cells.
std::vector<double> layerRowOverCells(const engine::PlainTensor& layer, const engine::ImageGrid& grid, int head, int query);

/// Alpha of a weight w on a scale whose top is `top`: opacity · w / top (0 for top ≤ 0).
int weightAlpha(double w, double top, double opacity);

}  // namespace attnscope::views
